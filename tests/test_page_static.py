"""AppTest of the 「静态 vs 上下文」 page: every control, the notes, bad input.

The models are made deterministic: BERT = conftest's tiny random BERT (via the sidebar key
``bert_model``), word2vec-zh = model_support's tiny word2vec (conftest's ``models_dir``), and
mini-elmo-zh is either absent (its warning is tested) or the real embedded one (tests skip when it
is not trained yet).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import assert_no_exception, messages, plotly_array
from core.content import sentence_sets as scenes
from core.guard.safe_text import md_escape
from core.vectors.view import occurrence_layers
from model_support import link_real_elmo

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "app_pages" / "static_vs_contextual" / "page.py")
LECTURE_TEXT = scenes.SCENES["lecture_apple"].text


def make_app(tiny_bert_dir, *, lang="zh", ctx="bert", query=None, **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["lang"] = lang
    at.session_state["bert_model"] = str(tiny_bert_dir)
    if ctx:
        at.session_state["static_ctx"] = ctx
    for key, value in state.items():
        at.session_state[key] = value
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def charts(at) -> dict[str, dict]:
    """The page's plotly figures by widget key suffix (scatter, heatmap, acc)."""
    out = {}
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        for name in ("static_scatter", "static_heatmap", "static_acc"):
            if name in el.proto.id:
                out[name] = spec
    return out


def contextual_points(spec) -> tuple[list, list]:
    """(x, y) of all occurrence points of the right subplot (not the other tokens drawn behind a few)."""
    xs, ys = [], []
    for tr in spec["data"]:
        if tr.get("xaxis") == "x2" and tr.get("legendgroup") != "background":
            xs += plotly_array(tr["x"]).tolist()
            ys += plotly_array(tr["y"]).tolist()
    return xs, ys


# ---- the default view -----------------------------------------------------------------------------------
def test_default_lecture_pair(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    assert_no_exception(at)
    assert at.title[0].value == "静态词向量 vs 上下文词向量"
    assert at.text_area(key="vec_text").value == LECTURE_TEXT
    assert at.text_input(key="vec_word").value == "苹果"
    specs = charts(at)
    scatter = specs["static_scatter"]
    star = [tr for tr in scatter["data"] if tr.get("marker", {}).get("symbol") == "star"]
    assert len(star) == 1 and len(plotly_array(star[0]["x"])) == 1  # ONE static point for both sentences ...
    assert star[0]["name"] == "word2vec：所有句子同一个向量"
    assert "我吃了一个【苹果】" in star[0]["hovertext"][0] and "【苹果】昨天发布了新手机" in star[0]["hovertext"][0]
    xs, _ = contextual_points(scatter)
    assert len(xs) == 2  # ... and one contextual point per occurrence
    assert plotly_array(specs["static_heatmap"]["data"][0]["z"]).shape == (2, 2)
    assert "static_acc" not in specs  # unlabelled sentences: a tip instead of the accuracy chart
    assert any("标签|" in c.value for c in at.caption)
    # both spaces are named, with their dimensions
    titles = [a["text"] for a in scatter["layout"]["annotations"]]
    assert any("上下文，32 维" in t for t in titles)
    static_title = next(t for t in titles if t.startswith("word2vec-zh（静态，16 维）"))
    assert "2 次出现 → 只有 1 个点" in static_title  # under the title, clear of the right plot's axis title


def test_english(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir, lang="en")
    assert_no_exception(at)
    assert at.title[0].value == "Static vs contextual word vectors"
    star = [tr for tr in charts(at)["static_scatter"]["data"] if tr.get("marker", {}).get("symbol") == "star"]
    assert star[0]["name"] == "word2vec: one vector for all sentences"


# ---- controls ------------------------------------------------------------------------------------------------
def test_scene_select_fills_text_and_word_and_shows_accuracy(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    at.selectbox(key="vec_scene").select("apple").run()
    assert_no_exception(at)
    assert at.text_area(key="vec_text").value == scenes.SCENES["apple"].text
    assert at.text_input(key="vec_word").value == "苹果"
    specs = charts(at)
    xs, _ = contextual_points(specs["static_scatter"])
    assert len(xs) == 16
    legend = {tr["name"] for tr in specs["static_scatter"]["data"] if tr.get("xaxis") == "x2"}
    assert legend == {"水果", "公司"}
    acc = specs["static_acc"]["data"]
    assert len(plotly_array(acc[0]["x"])) == 3  # tiny BERT: embeddings + 2 layers
    static_line = acc[-1]
    # every sentence has the same word2vec vector: all others tie, so each occurrence scores the share of
    # its own sense among the other 15 (7/15): the guessing level of two balanced senses
    assert np.allclose(plotly_array(static_line["y"]), [7 / 15] * 3) and "静态" in static_line["name"]
    assert any(f"为什么 word2vec 是 {7 / 15:.0%}" in c.value for c in at.caption)  # the guessing level, explained
    at.selectbox(key="vec_scene").select("baofu").run()
    assert at.text_input(key="vec_word").value == "包袱"
    legend = {tr["name"] for tr in charts(at)["static_scatter"]["data"] if tr.get("xaxis") == "x2"}
    assert legend == {"布包", "负担", "笑料"}


def test_layer_scrubber_and_centring_only_slice_cached_arrays(shared_models_dir, tiny_bert_dir, encode_calls):
    at = make_app(tiny_bert_dir, vec_scene="apple", vec_text=scenes.SCENES["apple"].text)
    assert_no_exception(at)
    runs = len(encode_calls)
    assert runs == 1
    slider = at.select_slider(key="static_layer")
    assert slider.value == 2 and slider.options == ["0 · 嵌入层", "1 · 第 1 层", "2 · 第 2 层"]
    top = contextual_points(charts(at)["static_scatter"])
    top_range = charts(at)["static_scatter"]["layout"]["xaxis2"]["range"]
    at.select_slider(key="static_layer").set_value(0).run()
    assert_no_exception(at)
    spec = charts(at)["static_scatter"]
    assert any("嵌入层" in a["text"] for a in spec["layout"]["annotations"])
    assert contextual_points(spec) != top
    assert spec["layout"]["xaxis2"]["range"] == top_range  # one joint PCA: the frame does not move
    heat_raw = charts(at)["static_heatmap"]
    assert "原始" in heat_raw["layout"]["title"]["text"] and "嵌入层" in heat_raw["layout"]["title"]["text"]
    at.toggle(key="static_centre").set_value(True).run()
    assert_no_exception(at)
    heat = charts(at)["static_heatmap"]
    assert "均值中心化" in heat["layout"]["title"]["text"]
    assert not np.allclose(plotly_array(heat["data"][0]["z"]), plotly_array(heat_raw["data"][0]["z"]))
    assert len(encode_calls) == runs  # neither control re-ran the model
    assert at.query_params["layer"] == "0" and at.query_params["centre"] == "1"


def test_a_pair_is_never_centred(shared_models_dir, tiny_bert_dir, tiny_bert):
    """Two points centred on their mean are exact opposites: with the lecture's pair the centring toggle is
    off-limits (it keeps its URL value for later sentences), and the pair's cosine is the raw one."""
    at = make_app(tiny_bert_dir, query={"centre": "1"})
    assert_no_exception(at)
    toggle = at.toggle(key="static_centre")
    assert toggle.value is True and toggle.disabled and at.query_params["centre"] == "1"
    view = occurrence_layers(tiny_bert, None, LECTURE_TEXT.splitlines(), "苹果")
    raw = f"{view.cosine[False][-1][0][1]:.2f}"
    assert [m.value for m in at.metric] == [raw] and raw != "-1.00"
    heat = charts(at)["static_heatmap"]
    assert "原始" in heat["layout"]["title"]["text"]
    assert np.allclose(plotly_array(heat["data"][0]["z"]), view.cosine[False][-1], atol=1e-6)
    at.text_area(key="vec_text").input(LECTURE_TEXT + "\n苹果很甜").run()  # a third occurrence: centring applies
    assert not at.toggle(key="static_centre").disabled
    assert "均值中心化" in charts(at)["static_heatmap"]["layout"]["title"]["text"]


def test_word_input_and_missing_sentences_note(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    at.text_input(key="vec_word").input("手机").run()
    assert_no_exception(at)
    assert "有 1 / 2 个句子里没有「手机」" in messages(at)
    listed = at.dataframe[0].value
    assert list(listed.iloc[:, 1]) == ["我吃了一个苹果"]
    xs, _ = contextual_points(charts(at)["static_scatter"])
    assert len(xs) == 1  # everything else still renders


def test_word_absent_everywhere(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    at.text_input(key="vec_word").input("香蕉").run()
    assert_no_exception(at)
    assert "所有句子里都没有找到「香蕉」" in messages(at)
    assert at.text_input(key="vec_word").value == "香蕉"


def test_oov_scene_is_the_third_limitation(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    at.selectbox(key="vec_scene").select("oov").run()
    assert_no_exception(at)
    warning = "\n".join(w.value for w in at.warning)
    assert "「元宇宙」不在 word2vec-zh 的词表里（OOV" in warning and "第三个局限" in warning
    assert "仍然能从字符出发" in warning
    spec = charts(at)["static_scatter"]
    assert not [tr for tr in spec["data"] if tr.get("marker", {}).get("symbol") == "star"]
    assert any("OOV" in a["text"] for a in spec["layout"]["annotations"])
    assert len(contextual_points(spec)[0]) == 3  # the contextual model still gives vectors


def test_coinage_typed_by_hand(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    at.text_area(key="vec_text").input("他发明了量子煎饼侠\n量子煎饼侠来了").run()
    at.text_input(key="vec_word").input("量子煎饼侠").run()
    assert_no_exception(at)
    assert "不在 word2vec-zh 的词表里" in messages(at)


def test_contextual_model_radio_elmo_unavailable(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    at.radio(key="static_ctx").set_value("elmo").run()
    assert_no_exception(at)
    assert "上下文模型暂不可用" in messages(at) and md_escape("mini-elmo-zh") in messages(at)  # Markdown source
    spec = charts(at)["static_scatter"]
    assert [tr for tr in spec["data"] if tr.get("marker", {}).get("symbol") == "star"]  # static still shown
    assert any("上下文模型暂不可用" in a["text"] for a in spec["layout"]["annotations"])
    assert at.query_params["ctx"] == "elmo"


def test_static_model_unavailable(models_dir, tiny_bert_dir):
    import shutil

    shutil.rmtree(models_dir / "word2vec-zh")
    at = make_app(tiny_bert_dir)
    assert_no_exception(at)
    assert "静态词向量暂不可用" in messages(at)
    assert len(contextual_points(charts(at)["static_scatter"])[0]) == 2


@pytest.mark.realmodel
def test_real_elmo(models_dir, tiny_bert_dir):
    link_real_elmo(models_dir)
    at = make_app(tiny_bert_dir, ctx="elmo", vec_scene="apple", vec_text=scenes.SCENES["apple"].text)
    assert_no_exception(at)
    assert at.select_slider(key="static_layer").options == ["0 · 字向量层", "1 · 第 1 层 biLSTM", "2 · 第 2 层 biLSTM"]
    at.select_slider(key="static_layer").set_value(0).run()
    xs, ys = contextual_points(charts(at)["static_scatter"])
    # the token layer [x; x] is context-free: all 16 occurrences of 苹果 coincide
    assert np.allclose(xs, xs[0], atol=1e-6) and np.allclose(ys, ys[0], atol=1e-6)


def test_upload_txt_and_binary(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    upload = "水果|我吃了一个苹果\n公司|苹果手机\n".encode()
    at.file_uploader(key="static_upload").upload("s.txt", upload, "text/plain").run()
    assert_no_exception(at)
    assert at.text_area(key="vec_text").value == "水果|我吃了一个苹果\n公司|苹果手机\n"
    at.file_uploader(key="static_upload").upload("x.txt", b"\x89PNG\r\n\x1a\n\x00\x00", "text/plain").run()
    assert_no_exception(at)
    assert "不是 UTF-8 文本" in "\n".join(e.value for e in at.error)
    assert at.text_area(key="vec_text").value == "水果|我吃了一个苹果\n公司|苹果手机\n"  # text kept


def test_url_state_round_trip(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir, ctx=None,
                  query={"scene": "baofu", "word": "包袱", "ctx": "bert", "layer": "1", "centre": "1"})
    assert_no_exception(at)
    assert at.text_area(key="vec_text").value == scenes.SCENES["baofu"].text
    assert at.radio(key="static_ctx").value == "bert"
    assert at.select_slider(key="static_layer").value == 1
    assert at.toggle(key="static_centre").value is True
    at.text_area(key="vec_text").input("我吃了一个包袱").run()
    assert at.query_params["text"] == "我吃了一个包袱" and at.query_params["word"] == "包袱"


def test_downloads(shared_models_dir, tiny_bert_dir):
    at = make_app(tiny_bert_dir)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["下载图（HTML）", "下载向量（CSV）", "下载向量（JSON）",
                      "下载给 Embedding Projector（vectors.tsv + metadata.tsv，ZIP）"]


# ---- bad input: a clear message, never a traceback, the text stays in the box ----------------------------
BAD = [
    ("", "苹果", "请输入至少一个句子"),
    ("   \n\t \n", "苹果", "请输入至少一个句子"),
    ("苹" * 5000, "苹果", "输入太长"),
    (LECTURE_TEXT, "", "请输入要观察的目标词"),
    (LECTURE_TEXT, "   ", "请输入要观察的目标词"),
    (LECTURE_TEXT, "香蕉", "所有句子里都没有找到"),
    ("<script>alert(1)</script>\n我吃了一个苹果", "苹果", "有 1 / 2 个句子里没有"),
    (LECTURE_TEXT, "<script>alert(1)</script>", "输入太长：25 个字符，上限 20"),  # longer than any word
    ("我吃了<script>\n苹果<script>", "<script>", "不在 word2vec-zh 的词表里"),
    ("我吃了一个😀\n😀昨天发布了新手机", "😀", "不在 word2vec-zh 的词表里"),
    ("我吃了一个蘋果\n蘋果昨天发布了新手机", "蘋果", "不在 word2vec-zh 的词表里"),
    ("I ate an apple\nApple released a new phone", "apple", "不在 word2vec-zh 的词表里"),
    ("我吃了\x00一个苹果\x07\n苹果\x1b昨天发布了新手机", "苹果", "已忽略输入中的 3 个控制字符"),
]


@pytest.mark.parametrize(("text", "word", "expected"), BAD)
def test_bad_input(shared_models_dir, tiny_bert_dir, text, word, expected):
    at = make_app(tiny_bert_dir)
    at.text_area(key="vec_text").input(text)
    at.text_input(key="vec_word").input(word)
    at.run()
    assert_no_exception(at)
    assert expected in messages(at)
    assert at.text_area(key="vec_text").value == text
    assert at.text_input(key="vec_word").value == word
    assert "<script>" not in messages(at)  # user text is escaped in Markdown messages
    for spec in charts(at).values():  # ... and in plotly's hover/legend/title HTML
        assert "<script>" not in json.dumps(spec, ensure_ascii=False)
    if word == "<script>":
        hover = charts(at)["static_scatter"]["data"][-1]["customdata"]
        assert hover[0] == "我吃了【&lt;script&gt;】"


def test_a_pair_is_drawn_among_the_other_characters(shared_models_dir, tiny_bert_dir):
    """#38 item 9: the default pair (two sentences) is drawn with the sentences' other characters behind it,
    and the caption says why; the points are not mirrored about the centre."""
    at = make_app(tiny_bert_dir)
    assert_no_exception(at)
    spec = charts(at)["static_scatter"]
    background = [tr for tr in spec["data"] if tr.get("legendgroup") == "background"]
    assert len(background) == 1 and background[0]["text"] == list("我吃了一个昨天发布了新手机")
    xs, ys = contextual_points(spec)
    assert len(xs) == 2 and (xs[0], ys[0]) != pytest.approx((-xs[1], -ys[1]))
    assert any("和句子里其余 13 个字一起" in c.value for c in at.caption)

@pytest.mark.realmodel
def test_layer_slider_follows_a_model_switch(models_dir, tiny_bert_dir):
    """Switching ELMo → BERT keeps the layer but renames every option: the browser, which keeps the option's
    label, must be sent the value again, or it shows 「0 · 嵌入层」 while the chart draws layer 2 (issue #44)."""
    link_real_elmo(models_dir)
    at = make_app(tiny_bert_dir, ctx="elmo")
    assert at.select_slider(key="static_layer").value == 2
    at.radio(key="static_ctx").set_value("bert").run()
    assert_no_exception(at)
    slider = at.select_slider(key="static_layer")
    title = " ".join(a["text"] for a in charts(at)["static_scatter"]["layout"]["annotations"])
    assert slider.value == 2 and "第 2 层" in title
    # what the browser receives: the value by its new label (else it keeps "2 · 第 2 层 biLSTM", not an option)
    assert slider.proto.set_value and list(slider.proto.raw_value) == ["2 · 第 2 层"]


def test_a_student_reads_the_question_the_inputs_then_a_cosine_against_its_baseline(shared_models_dir, tiny_bert_dir,
                                                                                     tiny_bert):
    """Outside presentation mode the page opens with its question and answer, then the inputs, then the
    result, and says how to read the cosine: against the same word's layer 0 (issue #44)."""
    at = make_app(tiny_bert_dir)
    assert_no_exception(at)
    flat = list(at.main)  # the page's elements in reading order
    first = {what: next(i for i, el in enumerate(flat) if test(el)) for what, test in (
        ("question", lambda el: el.type == "markdown" and "**问题**" in el.value),
        ("inputs", lambda el: el.type == "text_area" and el.key == "vec_text"),
        ("result", lambda el: el.type == "plotly_chart" and "static_scatter" in el.proto.id))}
    assert first["question"] < first["inputs"] < first["result"]
    view = occurrence_layers(tiny_bert, None, LECTURE_TEXT.splitlines(), "苹果")
    guide = next(m.value for m in at.markdown if "怎么读余弦" in m.value)
    assert f"**{view.mean_cosine(False, 0):.2f}**" in guide and f"**{view.mean_cosine(False, 2):.2f}**" in guide
    assert view.mean_cosine(False, 0) == pytest.approx(view.cosine[False][0][0][1])
    presenting = make_app(tiny_bert_dir, present=True)
    assert_no_exception(presenting)
    assert not any("怎么读余弦" in m.value or "**问题**" in m.value for m in presenting.markdown)
