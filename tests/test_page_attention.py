"""AppTest of app_pages/attention/page.py: every control, attention rows summing to 1, bad inputs.

Most tests use the tiny random BERT fixture (2 layers × 2 heads, loaded from a local directory
like a hub model); one test runs the embedded mini-bert-zh when it is available.
"""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import (
    assert_no_exception,
    assert_text_notes,
    chart,
    page_app,
    plotly_array,
    texts,
    type_text,
    zh_message,
)
from core.attention.view import MAX_CHARS, attention_view, encode_pair, read_row
from core.models.catalogue import list_models

PAGE = str(Path(__file__).resolve().parent.parent / "app_pages" / "attention" / "page.py")
SENTENCE = "苹果昨天发布了新手机。"


# ---- helpers -------------------------------------------------------------------------------------
_app = partial(page_app, PAGE)
# the attention page on mini-bert-zh
pytestmark = pytest.mark.realmodel


def _heat(spec: dict, index: int = 0) -> np.ndarray:
    heatmaps = [trace for trace in spec["data"] if trace["type"] == "heatmap"]
    return plotly_array(heatmaps[index]["z"]).astype(float)


def _view(encoder, sentence=SENTENCE, pair="", hide=False, words=False):
    encoding = encode_pair(encoder, sentence, pair) if pair else encoder.encode([sentence], attentions=True)[0]
    return attention_view(encoding, hide_special=hide, word_level=words)


TABS = ("head", "grid", "avg", "rollout", "row")
TAB_CHARTS = {"head": ("att_heatmap",), "grid": ("att_grid", "att_zoomed"), "avg": ("att_avg",),
              "rollout": ("att_rollout",), "row": ("att_rows",)}


def _open(at: AppTest, tab: str) -> AppTest:
    """Select a tab as a click does (the page builds the open tab only)."""
    at.session_state["att_tab"] = at.tabs[TABS.index(tab)].label
    at.run()
    assert_no_exception(at)
    return at


def _assert_all_rows_sum_to_one(at: AppTest) -> None:
    for tab in TABS:
        _open(at, tab)
        for key in TAB_CHARTS[tab]:
            spec = chart(at, key)
            if tab == "row":
                for trace in spec["data"]:
                    assert float(np.sum(plotly_array(trace["y"]))) == pytest.approx(1.0, abs=1e-5)
                continue
            heatmaps = [trace for trace in spec["data"] if trace["type"] == "heatmap"]
            assert heatmaps, key
            for trace in heatmaps:
                np.testing.assert_allclose(plotly_array(trace["z"]).astype(float).sum(axis=1), 1.0, atol=1e-5,
                                           err_msg=key)
    _open(at, "head")


# ---- default page --------------------------------------------------------------------------------
def test_default_run(tiny, tiny_bert):
    at = _app(tiny).run()
    assert_no_exception(at)
    assert not at.error
    assert at.title[0].value == "注意力热力图"
    honest = " ".join(texts(at, "info"))
    assert "Jain & Wallace" in honest and "Wiegreffe & Pinter" in honest and "Attention is not Explanation" in honest
    view = _view(tiny_bert)
    spec = chart(at, "att_heatmap")
    np.testing.assert_allclose(_heat(spec), view.att[0, 0], atol=1e-6)
    assert spec["layout"]["yaxis"]["ticktext"] == view.labels
    assert spec["layout"]["xaxis"]["tickangle"] == 0
    assert spec["layout"]["yaxis"]["scaleanchor"] == "x"
    assert at.query_params["sentence"] == SENTENCE
    assert at.query_params["layer"] == "1" and at.query_params["head"] == "1"
    assert len(at.get("download_button")) == 3  # CSV, HTML, every layer and head for bertviz
    assert [tab.label for tab in at.tabs] == ["单个注意力头", "全部层 × 头", "各层的头平均", "注意力 rollout",
                                              "某个字/词看向哪里"]
    assert [key for keys in TAB_CHARTS.values() for key in keys if chart(at, key)] == ["att_heatmap"]
    _assert_all_rows_sum_to_one(at)
    grid = chart(_open(at, "grid"), "att_grid")
    assert len(grid["data"]) == view.num_layers * view.num_heads
    for k, trace in enumerate(grid["data"]):
        np.testing.assert_allclose(plotly_array(trace["z"]), view.att[k // 2, k % 2], atol=1e-6)
    for tab, expected in (("avg", view.head_avg), ("rollout", view.rollout)):
        traces = chart(_open(at, tab), TAB_CHARTS[tab][0])["data"]
        assert len(traces) == view.num_layers
        for layer, trace in enumerate(traces):
            np.testing.assert_allclose(plotly_array(trace["z"]), expected[layer], atol=1e-6)
        assert at.query_params["tab"] == tab
        assert chart(at, "att_heatmap") is None and chart(at, "att_grid") is None


def test_open_tab_is_in_the_url_and_survives_a_language_switch(tiny):
    at = _app(tiny, query={"tab": "rollout"}).run()
    assert_no_exception(at)
    assert chart(at, "att_rollout") and chart(at, "att_heatmap") is None
    at.session_state["lang"] = "en"
    at.run()
    assert at.session_state["att_tab"] == "Attention rollout" and chart(at, "att_rollout")
    _open(at, "head")
    assert "tab" not in at.query_params and chart(at, "att_heatmap")
    odd = _app(tiny, query={"tab": "nope"}).run()
    assert_no_exception(odd)
    assert chart(odd, "att_heatmap")


def test_mini_bert_every_option_rows_sum_to_one():
    info = next((m for m in list_models() if m.name == "mini-bert-zh"), None)
    if info is None or not info.available:
        pytest.skip("mini-bert-zh is not available here")
    at = _app("mini-bert-zh").run()
    assert_no_exception(at)
    assert not at.error
    _assert_all_rows_sum_to_one(at)
    assert len(chart(_open(at, "grid"), "att_grid")["data"]) == 16
    for hide, words in ((True, False), (False, True), (True, True)):
        at.toggle(key="att_hide").set_value(hide)
        at.toggle(key="att_words").set_value(words)
        at.run()
        assert_no_exception(at)
        _assert_all_rows_sum_to_one(at)


# ---- selectors --------------------------------------------------------------------------------------
def test_layer_and_head_sliders(tiny, tiny_bert):
    view = _view(tiny_bert)
    at = _app(tiny).run()
    at.slider(key="att_layer").set_value(2)
    at.slider(key="att_head").set_value(2)
    at.run()
    assert_no_exception(at)
    spec = chart(at, "att_heatmap")
    np.testing.assert_allclose(_heat(spec), view.att[1, 1], atol=1e-6)
    assert spec["layout"]["title"]["text"] == "第 2 层 · 头 2"
    assert at.query_params["layer"] == "2" and at.query_params["head"] == "2"
    at.slider(key="att_head").set_value(1).run()
    np.testing.assert_allclose(_heat(chart(at, "att_heatmap")), view.att[1, 0], atol=1e-6)


def test_url_state_is_read(tiny, tiny_bert):
    query = {"sentence": "他背着包袱去北京。", "layer": "2", "head": "1", "hide": "1", "words": "1", "token": "包袱",
             "rows": "rollout"}
    at = _app(tiny, query=query).run()
    assert_no_exception(at)
    assert at.text_input(key="att_sentence").value == "他背着包袱去北京。"
    assert at.toggle(key="att_hide").value and at.toggle(key="att_words").value
    view = _view(tiny_bert, "他背着包袱去北京。", hide=True, words=True)
    token = view.labels.index("包袱")
    assert at.selectbox(key="att_token").value == token
    np.testing.assert_allclose(_heat(chart(at, "att_heatmap")), view.att[1, 0], atol=1e-6)
    _open(at, "row")
    assert at.radio(key="att_row_source").value == "rollout"
    rows = chart(at, "att_rows")["data"]
    for layer, trace in enumerate(rows):
        np.testing.assert_allclose(plotly_array(trace["y"]), view.rollout[layer, token], atol=1e-6)
    odd = _app(tiny, query={"layer": "99", "head": "-3", "rows": "nope", "hide": "maybe"}).run()
    assert_no_exception(odd)
    assert odd.slider(key="att_layer").value == 1 and odd.slider(key="att_head").value == 1
    assert odd.toggle(key="att_hide").value is False
    assert _open(odd, "row").radio(key="att_row_source").value == "head_avg"


def test_the_toggles_only_reduce_the_encoding(tiny, encode_calls):
    """Hiding [CLS]/[SEP] and grouping words reduce the one encoding of the sentence: the model runs once."""
    at = _app(tiny).run()
    runs = len(encode_calls)
    assert runs >= 1
    for key in ("att_hide", "att_words", "att_hide"):
        at.toggle(key=key).set_value(not at.toggle(key=key).value).run()
        assert_no_exception(at)
    assert len(encode_calls) == runs


def test_hide_special_and_word_level(tiny, tiny_bert):
    at = _app(tiny).run()
    at.toggle(key="att_hide").set_value(True).run()
    assert_no_exception(at)
    labels = chart(at, "att_heatmap")["layout"]["yaxis"]["ticktext"]
    assert "[CLS]" not in labels and "[SEP]" not in labels and len(labels) == len(SENTENCE)
    np.testing.assert_allclose(_heat(chart(at, "att_heatmap")), _view(tiny_bert, hide=True).att[0, 0], atol=1e-6)
    _assert_all_rows_sum_to_one(at)
    assert at.query_params["hide"] == "1"
    at.toggle(key="att_words").set_value(True).run()
    assert_no_exception(at)
    view = _view(tiny_bert, hide=True, words=True)
    labels = chart(at, "att_heatmap")["layout"]["yaxis"]["ticktext"]
    assert labels == view.labels and "苹果" in labels
    _assert_all_rows_sum_to_one(at)
    assert at.query_params["words"] == "1"
    at.toggle(key="att_hide").set_value(False).run()
    labels = chart(at, "att_heatmap")["layout"]["yaxis"]["ticktext"]
    assert labels[0] == "[CLS]" and labels[-1] == "[SEP]" and "发布" in labels
    _assert_all_rows_sum_to_one(at)
    assert "hide" not in at.query_params


def test_sentence_pair(tiny, tiny_bert):
    at = _app(tiny).run()
    at.text_input(key="att_pair").set_value("我吃了一个苹果。").run()
    assert_no_exception(at)
    view = _view(tiny_bert, pair="我吃了一个苹果。")
    labels = chart(at, "att_heatmap")["layout"]["yaxis"]["ticktext"]
    assert labels == view.labels and labels.count("[SEP]") == 2
    np.testing.assert_allclose(_heat(chart(at, "att_heatmap")), view.att[0, 0], atol=1e-6)
    _assert_all_rows_sum_to_one(at)
    assert at.query_params["pair"] == "我吃了一个苹果。"
    at.text_input(key="att_pair").set_value("今天天气很好" * 10).run()  # too many tokens for 64 positions
    assert_no_exception(at)
    assert zh_message("too_many_tokens", count=len(SENTENCE) + 60 + 3, limit=64) in texts(at, "error")
    assert at.text_input(key="att_pair").value == "今天天气很好" * 10


def test_token_highlight_and_row_sources(tiny, tiny_bert):
    view = _view(tiny_bert)
    at = _app(tiny).run()
    assert at.selectbox(key="att_token").value == view.labels.index("苹")  # default: what 苹(果) attends to
    at.selectbox(key="att_token").set_value(3).run()
    assert_no_exception(at)
    shapes = chart(at, "att_heatmap")["layout"]["shapes"]
    assert shapes[0]["y0"] == pytest.approx(2.5) and shapes[0]["y1"] == pytest.approx(3.5)
    assert at.query_params["token"] == view.labels[3]
    at.slider(key="att_head").set_value(2).run()
    rows = chart(_open(at, "row"), "att_rows")["data"]
    assert len(rows) == view.num_layers
    for layer, trace in enumerate(rows):
        np.testing.assert_allclose(plotly_array(trace["y"]), view.head_avg[layer, 3], atol=1e-6)
    at.radio(key="att_row_source").set_value("rollout").run()
    for layer, trace in enumerate(chart(at, "att_rows")["data"]):
        np.testing.assert_allclose(plotly_array(trace["y"]), view.rollout[layer, 3], atol=1e-6)
    assert at.query_params["rows"] == "rollout"
    at.radio(key="att_row_source").set_value("head").run()  # the head chosen on the first tab
    for layer, trace in enumerate(chart(at, "att_rows")["data"]):
        np.testing.assert_allclose(plotly_array(trace["y"]), view.att[layer, 1, 3], atol=1e-6)
    # switching to words keeps the chosen token by its label when it can
    at.selectbox(key="att_token").set_value(view.labels.index("苹")).run()
    at.toggle(key="att_words").set_value(True).run()
    words = _view(tiny_bert, words=True)
    assert words.labels[at.selectbox(key="att_token").value] == "苹果"


def test_zoom_selectbox(tiny, tiny_bert):
    view = _view(tiny_bert)
    at = _open(_app(tiny).run(), "grid")
    np.testing.assert_allclose(_heat(chart(at, "att_zoomed")), view.att[0, 0], atol=1e-6)
    at.selectbox(key="att_zoom").set_value(3).run()  # layer 2, head 2
    assert_no_exception(at)
    spec = chart(at, "att_zoomed")
    np.testing.assert_allclose(_heat(spec), view.att[1, 1], atol=1e-6)
    assert spec["layout"]["title"]["text"] == "第 2 层 · 头 2"


def test_english(tiny):
    at = _app(tiny, lang="en").run()
    assert_no_exception(at)
    assert at.title[0].value == "Attention heatmap"
    assert "Attention is not Explanation" in " ".join(texts(at, "info"))


# ---- models ----------------------------------------------------------------------------------------
def test_model_problems():
    at = _app(None).run()
    assert_no_exception(at)
    assert any("侧栏" in i for i in texts(at, "info"))
    at = _app("/nonexistent/model").run()
    assert_no_exception(at)
    assert zh_message("unknown_model", name="/nonexistent/model") in texts(at, "error")
    assert at.text_input(key="att_sentence").value == SENTENCE
    if any(m.name == "mini-elmo-zh" and m.available for m in list_models()):
        at = _app("mini-elmo-zh").run()
        assert_no_exception(at)
        assert zh_message("not_masked_lm", name="mini-elmo-zh", model_type="elmo") in texts(at, "error")


def test_works_without_nsp_head(tiny_mlm_dir):
    at = _app(str(tiny_mlm_dir)).run()  # like most hub models: MLM head only
    assert_no_exception(at)
    assert not at.error
    _assert_all_rows_sum_to_one(at)


# ---- bad inputs ------------------------------------------------------------------------------------
BAD = [
    ("", zh_message("empty_input")),
    ("   \t ", zh_message("empty_input")),
    ("好" * 5000, zh_message("too_long", length=5000, limit=MAX_CHARS)),
    ("今天" + "[MASK]" * 20, zh_message("too_long", length=122, limit=MAX_CHARS)),
    ("\x00\x07", zh_message("empty_input")),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_inputs(tiny, text, message):
    at = type_text(_app(tiny).run(), "att_sentence", text)
    assert message in texts(at, "error")


ODD = [
    # text, unknown characters (tiny vocabulary), control characters
    ("<script>alert(1)</script>", ["<", ">", "(", ")", "/"], []),
    ("今天😀天气很好", ["😀"], []),
    ("我們今天去學校", ["們", "學", "校"], []),
    ("I like apples", [], []),
    ("今天\x07天气很好", [], ["U+0007"]),
    ("今天[MASK][MASK]很好", [], []),
    ("今天天气很好。", [], []),
]


@pytest.mark.parametrize(("text", "unknown", "control"), ODD, ids=[f"odd{i}" for i in range(len(ODD))])
def test_odd_but_valid_inputs(tiny, tiny_bert, text, unknown, control):
    at = type_text(_app(tiny).run(), "att_sentence", text)
    assert not at.error
    _assert_all_rows_sum_to_one(at)
    assert_text_notes(at, unknown, control)
    for key in ("att_heatmap", "att_grid", "att_rows"):  # user text reaches plotly escaped
        assert "<script>" not in json.dumps(chart(at, key), ensure_ascii=False)


# ---- caching: selectors only slice -------------------------------------------------------------------
def test_selectors_do_not_rerun_the_model(tiny, monkeypatch):
    from core.models.encoders import BertEncoder

    at = _app(tiny).run()

    def boom(*args, **kwargs):
        raise AssertionError("the model ran again")

    monkeypatch.setattr(BertEncoder, "forward", boom)
    at.slider(key="att_layer").set_value(2)
    at.slider(key="att_head").set_value(2)
    at.toggle(key="att_hide").set_value(True)
    at.toggle(key="att_words").set_value(True)
    at.run()
    _open(at, "grid").selectbox(key="att_zoom").set_value(2).run()
    _open(at, "row").radio(key="att_row_source").set_value("rollout").run()
    assert_no_exception(at)
    assert not at.error
    _assert_all_rows_sum_to_one(at)


def test_figures_escape_user_text():
    """Plotly renders a subset of HTML in labels and hover text: user strings arrive escaped."""
    from core.figures import attention as figs

    labels = ["<script>", "a&b", "<b>x</b>"]
    matrix = np.full((3, 3), 1 / 3)
    for fig in (figs.attention_heatmap(matrix, labels),
                figs.layer_maps(matrix[None], labels, titles=["<i>L1</i>"]),
                figs.row_bars(matrix[:1], labels, layer_names=["<i>L1</i>"]),
                figs.attention_grid(matrix[None, None], labels, layer_names=["L1"], head_names=["H1"])):
        text = json.dumps(fig.to_plotly_json(), ensure_ascii=False, default=str)
        assert "<script>" not in text and "<b>x" not in text and "<i>L1" not in text
    heat = figs.attention_heatmap(matrix, labels)
    assert heat.layout.yaxis.ticktext == ("&lt;script&gt;", "a&amp;b", "&lt;b&gt;x&lt;/b&gt;")


def test_the_chosen_token_is_read_out_in_words_first():
    """The page opens with its question and a reading computed from the chosen token's row: the issue's 她
    attends most to itself, then 小明 before 小红 with words aggregated (issue #44); left out on the projector."""
    if not next((m.available for m in list_models() if m.name == "mini-bert-zh"), False):
        pytest.skip("mini-bert-zh is not available here")
    at = _app("mini-bert-zh", query={"sentence": "小明把书给了小红，因为她想看。", "token": "她", "words": "1"}).run()
    assert not at.exception
    texts = [m.value for m in at.markdown]
    answer = next(i for i, text in enumerate(texts) if text.startswith("**本句的读数**"))
    assert texts[answer - 1].startswith("**问题**") and "别期待太多" in texts[answer + 1]
    from core.models.cache import load_encoder

    view = _view(load_encoder("mini-bert-zh"), "小明把书给了小红，因为她想看。", words=True)
    she = view.labels.index("她")
    reading = read_row(view, she)
    row = view.head_avg[-1][she]
    assert reading.layer == view.num_layers - 1 and reading.top[0][0] == she  # 她 looks most at itself
    assert row[view.labels.index("小明")] > row[view.labels.index("小红")]  # the 0.22 > 0.16
    expected = "、".join(f"它自己（{w:.0%}）" if i == she else f"「{view.labels[i]}」（{w:.0%}）"
                        for i, w in reading.top)
    assert expected in texts[answer] and f"第 {view.num_layers} 层" in texts[answer]
    at.session_state["present"] = True
    at.run()
    assert not any(text.startswith("**本句的读数**") for text in (m.value for m in at.markdown))


def test_the_chosen_tokens_row_comes_first_as_labelled_bars(monkeypatch):
    """A 17-token sentence (issue #44): the chosen token's row at the chosen layer and head as one labelled bar a
    token, the full heatmap one switch away (on by default, off on a phone, where its cells shrink to nothing);
    the projector keeps the heatmap alone."""
    if not next((m.available for m in list_models() if m.name == "mini-bert-zh"), False):
        pytest.skip("mini-bert-zh is not available here")
    from core.models.cache import load_encoder
    from ui import page

    sentence = "小明把书给了小红，因为她想看。"
    view = _view(load_encoder("mini-bert-zh"), sentence)
    she = view.labels.index("她")
    at = _app("mini-bert-zh", query={"sentence": sentence, "token": "她", "layer": "3", "head": "2"}).run()
    assert_no_exception(at)
    bars = chart(at, "att_token_bars")
    assert len(view.labels) == 17 and bars["data"][0]["orientation"] == "h"
    np.testing.assert_allclose(plotly_array(bars["data"][0]["x"]), view.att[2, 1, she], atol=1e-6)
    assert bars["layout"]["yaxis"]["ticktext"] == [f"{i}: {label}" for i, label in enumerate(view.labels)]
    assert "「她」看向哪里 · 第 3 层 · 头 2" in json.dumps(bars["layout"], ensure_ascii=False)
    assert at.toggle(key="att_full_map").value and chart(at, "att_heatmap")
    monkeypatch.setattr(page, "phone", lambda: True)  # a narrow window, as ui/document.js reports it
    phone = _app("mini-bert-zh", query={"sentence": sentence, "token": "她"}).run()
    assert chart(phone, "att_token_bars") and chart(phone, "att_heatmap") is None
    phone.toggle(key="att_full_map_narrow").set_value(True).run()
    np.testing.assert_allclose(_heat(chart(phone, "att_heatmap")), view.att[0, 0], atol=1e-6)
    at.session_state["present"] = True
    at.run()
    assert chart(at, "att_heatmap") and chart(at, "att_token_bars") is None
