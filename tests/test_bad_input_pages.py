"""Bad input, every text box of every page (AppTest, the embedded models).

For each (page, text box, bad input) the page must: raise nothing (``at.exception`` empty), show an
error / warning / info where one is appropriate (the table ``EXPECT`` below, by the box's role),
keep rendering the rest of the page, and keep the user's text in the box.

Bad inputs: empty, whitespace only, 5,000 characters, 600 Chinese characters, more tokens than the
model accepts (mini-bert-zh: max_position_embeddings = 128, checked in its config.json), target word
absent, no [MASK], only [MASK]s, 20 [MASK]s, a <script> tag, Markdown/HTML injection, emoji,
Traditional Chinese, English, mixed scripts, control characters.

File uploads: AppTest cannot upload, so the parser the pages call (``core.content.sentence_sets.decode_upload``) is
fed random bytes directly and must raise ``LabError("not_text")``.

One AppTest per page (and per precondition, e.g. the fill-mask page in "mask a word" mode) is run
once and then reused: each test restores the other boxes to their defaults, types one bad value and
reruns, which keeps the ~250 runs affordable (models and unchanged inputs come from the caches).
"""
from __future__ import annotations

import ast
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import page_files
from core.content import sentence_sets as scenes
from core.guard.errors import MESSAGES, LabError
from core.guard.safe_text import well_formed_model_name
from ui.i18n import translate
from ui.sidebar import MAX_MODEL_ID_LEN

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 600  # seconds for one page run; generous: two busy cores


def zh(key: str, **params) -> str:
    return translate("zh", key, **params)


def message_prefix(text: str) -> str:
    """The fixed start of a message template (before its first placeholder or Markdown)."""
    for stop in ("{", "*", "`"):
        text = text.split(stop)[0]
    return text.strip()


def lab_prefix(code: str) -> str:
    return message_prefix(MESSAGES[code]["zh"])


# ---- the inputs ------------------------------------------------------------------------------------
CASES: dict[str, str] = {
    "empty": "",
    "whitespace": "  \t   ",
    "5000_chars": "我吃了一个苹果" + "好" * 4993,
    "600_cjk": "我吃了一个苹果" + "好" * 593,
    "over_model_limit": "我吃了一个苹果" + "好" * 193,  # 200 characters: > 128 tokens, < every char limit
    "word_absent": "今天天气很好。",
    "no_mask": "我吃了一个苹果。",
    "only_masks": "[MASK][MASK][MASK]",
    "20_masks": "我吃了" + "[MASK]" * 20 + "。",
    "script": "<script>alert(1)</script>",
    "md_html": "**bold** <img src=x onerror=alert(1)>",
    "emoji": "我吃了一个🍎苹果😀",
    "traditional": "我吃了一個蘋果",
    "english": "I ate an apple.",
    "mixed": "我吃了apple苹果, りんご 사과 яблоко",
    "control": "我吃了\x07一个\x1b苹果",
}
assert len(CASES["5000_chars"]) == 5000 and len(CASES["600_cjk"]) == 600 and len(CASES["over_model_limit"]) == 200
MASK_FREE_CASES = {"empty", "whitespace", "word_absent", "no_mask", "only_masks", "20_masks"}


def case_value(role: str, case: str) -> str:
    value = CASES[case]
    if role == "masked" and case not in MASK_FREE_CASES:
        # a sentence that would be valid but for the bad part: give it a [MASK] to predict
        value = value.replace("苹果", "[MASK][MASK]", 1) if "苹果" in value else value + "[MASK]"
    if role == "pair" and case == "over_model_limit":
        value = "好" * 120  # within the page's 120-character limit, but with the first sentence > 128 tokens
    return value


# ---- what the page must say, by the role of the box ------------------------------------------------
# ("error", code): an st.error with that LabError's message; ("error", None): some st.error;
# "message": an st.error, st.warning or st.info; ("info", key): an st.info with that i18n message;
# missing: nothing required (the page just works: no exception, text kept, page rendered).
E = lambda code=None: ("error", code)  # noqa: E731
M = "message"
EXPECT: dict[str, dict[str, object]] = {
    # static / ELMo pages: the sentences box (target word 苹果)
    "sentences": {"empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
                  "600_cjk": E("too_long"), "word_absent": M, "only_masks": M, "20_masks": M, "script": M,
                  "md_html": M, "traditional": M, "english": M, "control": M},
    # static / ELMo pages: the target word box (the lecture's two sentences)
    "word": {"empty": E("empty_word"), "whitespace": E("empty_word"), "5000_chars": E("too_long"),
             "600_cjk": E("too_long"), "over_model_limit": E("too_long"), "word_absent": M, "no_mask": M,
             "only_masks": M, "20_masks": E("too_long"), "script": E("too_long"), "md_html": E("too_long"),
             "emoji": M, "traditional": M, "english": M, "mixed": E("too_long"), "control": M},
    # a static / ELMo page with BERT as the contextual model: more tokens than it accepts, read in overlapping
    # windows (core.models.encoders.LONG_TEXT_POLICY), as ELMo reads it whole
    "sentences_bert": {},  # nothing required: the page just works
    # fill-mask: the sentence with [MASK]s
    "masked": {"empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
               "600_cjk": E("too_long"), "over_model_limit": E("too_many_tokens"), "word_absent": E("no_mask"),
               "no_mask": E("no_mask"), "only_masks": E("only_masks"), "20_masks": E("too_many_masks"),
               "emoji": M, "control": M},
    # fill-mask: "mask a word" mode, the plain sentence (word 苹果) and the word (sentence 我吃了一个苹果。)
    "plain": {"empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
              "600_cjk": E("too_long"), "over_model_limit": E("too_many_tokens"), "word_absent": E(),
              "only_masks": E(), "20_masks": E(), "script": E(), "md_html": E(), "emoji": M, "traditional": E(),
              "english": E(), "control": M},
    "mask_word": {case: E() for case in CASES} | {"empty": E("empty_word"), "whitespace": E("empty_word"),
                                                  "no_mask": E("only_masks")},
    # fill-mask: candidate words, the corruption demo's sentence, the two NSP sentences
    "candidates": {"empty": ("info", "fill.cands_empty"), "whitespace": ("info", "fill.cands_empty")},
    "corrupt": {"empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
                "600_cjk": E("too_long"), "over_model_limit": E("too_many_tokens")},
    "nsp": {"empty": ("info", "fill.nsp_empty"), "whitespace": ("info", "fill.nsp_empty"),
            "5000_chars": E("too_long"), "600_cjk": E("too_long"), "over_model_limit": E("too_many_tokens")},
    # attention: the sentence and the optional second sentence
    "att": {"empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
            "600_cjk": E("too_long"), "over_model_limit": E("too_long"), "emoji": M, "control": M},
    "pair": {"5000_chars": E("too_long"), "600_cjk": E("too_long"), "over_model_limit": E("too_many_tokens"),
             "control": M},
    # pre-training objectives: the biLM sentence (at most 60 characters, no [MASK]), and the two sentences
    # with a shared beginning (the other one stays 苹果昨天…: no bad case starts with the same characters)
    "obj_sentence": {"empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
                     "600_cjk": E("too_long"), "over_model_limit": E("too_long"), "only_masks": E("special_in_text"),
                     "20_masks": E("too_long"), "script": M, "md_html": M, "emoji": M, "english": M, "control": M},
    "obj_pair": {case: E("no_shared_prefix") for case in CASES} | {
        "empty": E("empty_input"), "whitespace": E("empty_input"), "5000_chars": E("too_long"),
        "600_cjk": E("too_long"), "over_model_limit": E("too_long"), "only_masks": E("special_in_text"),
        "20_masks": E("too_long")},
    # exercises: the typed vector (every case is not 3 numbers) and the free-text box (never judged)
    "answer": {case: E() for case in CASES if case not in ("empty", "whitespace")},
    "free": {},
}


@dataclass(frozen=True)
class Box:
    page: str  # folder in app_pages/
    key: str  # widget key
    role: str  # EXPECT row and value transform
    setup: tuple = ()  # (session_state key, value) preconditions
    cases: tuple = tuple(CASES)
    rest: tuple = ()  # plotly chart keys that must still be there (a section the box does not feed)

    @property
    def id(self) -> str:
        extra = "".join(f"[{k}={v}]" for k, v in self.setup)
        return f"{self.page}:{self.key}{extra}"


BOXES = (
    Box("static_vs_contextual", "vec_text", "sentences"),
    Box("static_vs_contextual", "vec_word", "word"),
    Box("static_vs_contextual", "vec_text", "sentences_bert", setup=(("static_ctx", "bert"),),
        cases=("over_model_limit",)),
    Box("elmo_weights", "vec_text", "sentences", rest=("elmo_diagram", "elmo_bars")),
    Box("elmo_weights", "vec_word", "word", rest=("elmo_diagram", "elmo_bars")),
    Box("elmo_weights", "vec_text", "sentences_bert", setup=(("elmo_use_bert", True),), cases=("over_model_limit",),
        rest=("elmo_diagram", "elmo_bars")),
    Box("fill_mask", "fill_sentence", "masked"),
    Box("fill_mask", "fill_cands", "candidates", rest=("fill_topk_chart", "fill_step_chart")),
    Box("fill_mask", "fill_corrupt_text", "corrupt", rest=("fill_topk_chart", "fill_step_chart")),
    Box("fill_mask", "fill_nsp_a", "nsp", rest=("fill_topk_chart", "fill_corrupt_chart")),
    Box("fill_mask", "fill_nsp_b", "nsp", rest=("fill_topk_chart", "fill_corrupt_chart")),
    Box("fill_mask", "fill_plain", "plain", setup=(("fill_mode", "word"),)),
    Box("fill_mask", "fill_word", "mask_word", setup=(("fill_mode", "word"),)),
    Box("attention", "att_sentence", "att"),
    Box("attention", "att_pair", "pair"),
    Box("objectives", "obj_sentence", "obj_sentence", rest=("obj_move_chart", "obj_gpt_chart")),
    Box("objectives", "obj_gpt_sentence", "obj_sentence", rest=("obj_move_chart", "obj_prob_chart")),
    Box("objectives", "obj_text_a", "obj_pair", rest=("obj_prob_chart", "obj_gpt_chart")),
    Box("objectives", "obj_text_b", "obj_pair", rest=("obj_prob_chart", "obj_gpt_chart")),
    Box("exercise_cards", "ex_formula_answer", "answer"),
    Box("exercise_cards", "ex_concept_text", "free"),
)
PARAMS = [pytest.param(box, case, id=f"{box.id}-{case}") for box in BOXES for case in box.cases]


# ---- AppTest plumbing ------------------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def _setup_module(tiny_embedded):
    """The pages run on the tiny stand-ins of the embedded models: the table is about a page's handling of bad
    input (the same vocabulary, layers and 128 positions), not about the model's answer."""


# boxes behind a board or a lecturer's sign-in: tests/test_page_class_board.py runs CASES on each of them (the
# presenter view's secret box is the same ui.lecturer.sign_in as the board's)
BOXES_TESTED_ELSEWHERE = {("class_board", key) for key in ("board_sentence", "board_new_word", "board_new_senses",
                                                          "board_secret_box")} | {("presenter", "board_secret_box")}


@dataclass
class PageApp:
    at: AppTest
    defaults: dict[str, str] = field(default_factory=dict)
    title: str = ""


_APPS: dict[tuple, PageApp] = {}


def text_widget(at: AppTest, key: str):
    for kind in ("text_input", "text_area"):
        try:
            return getattr(at, kind)(key=key)
        except KeyError:
            continue
    return None


def set_text(at: AppTest, key: str, value: str) -> None:
    widget = text_widget(at, key)
    if widget is not None:
        widget.set_value(value)
    else:  # not rendered in the last run (its section was skipped): the page seeds it from session_state
        at.session_state[key] = value


def page_app(box: Box) -> PageApp:
    cache_key = (box.page, box.setup)
    if cache_key not in _APPS:
        at = AppTest.from_file(str(ROOT / "app_pages" / box.page / "page.py"), default_timeout=TIMEOUT)
        at.session_state["lang"] = "zh"
        at.session_state["bert_model"] = "mini-bert-zh"
        for key, value in box.setup:
            at.session_state[key] = value
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        keys = {b.key for b in BOXES if b.page == box.page}
        defaults = {k: text_widget(at, k).value for k in keys if text_widget(at, k) is not None}
        _APPS[cache_key] = PageApp(at, defaults, at.title[0].value if at.title else "")
    return _APPS[cache_key]


def messages(at: AppTest) -> dict[str, list[str]]:
    return {"error": [e.value for e in at.error], "warning": [e.value for e in at.warning],
            "info": [e.value for e in at.info]}


def chart_keys(at: AppTest) -> set[str]:
    return {e.proto.id.rsplit("-", 1)[-1] for e in at.get("plotly_chart")}


# ---- the table -------------------------------------------------------------------------------------
@pytest.mark.parametrize("box, case", PARAMS)
def test_bad_input(box: Box, case: str):
    app = page_app(box)
    at = app.at
    # back to the defaults, in a run of its own: a user edits one box per run (and the fill-mask page
    # re-derives the corruption sentence when the masked sentence changes)
    restore = {k: v for k, v in app.defaults.items()
               if k != box.key and ((w := text_widget(at, k)) is None or w.value != v)}
    if restore or text_widget(at, box.key) is None:
        for key, value in restore.items():
            set_text(at, key, value)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    value = case_value(box.role, case)
    text_widget(at, box.key).set_value(value)
    at.run()

    # 1. no exception, no traceback
    assert not at.exception, [e.value for e in at.exception]
    # 2. the page still renders: its title, the box with the user's text unchanged, other sections
    assert at.title and at.title[0].value == app.title
    widget = text_widget(at, box.key)
    assert widget is not None, f"the box {box.key} disappeared"
    max_chars = getattr(widget.proto, "max_chars", 0)  # a browser box with max_chars never holds more
    assert widget.value == (value[:max_chars] if max_chars else value), "the user's text must stay in the box"
    other_boxes = [k for k in app.defaults if k != box.key and text_widget(at, k) is not None]
    assert other_boxes or len(app.defaults) == 1, "the other boxes of the page are gone"
    missing = set(box.rest) - chart_keys(at)
    assert not missing, f"sections not fed by this box disappeared: {missing}"
    # 3. the right message where one is appropriate
    shown = messages(at)
    expected = EXPECT[box.role].get(case)
    everything = shown["error"] + shown["warning"] + shown["info"]
    if expected == M:
        assert everything, f"expected an error, warning or info for {case!r}"
    elif isinstance(expected, tuple) and expected[0] == "error":
        assert shown["error"], f"expected an st.error for {case!r}, got {shown}"
        if expected[1]:
            assert any(lab_prefix(expected[1]) in e for e in shown["error"]), (expected[1], shown["error"])
    elif isinstance(expected, tuple) and expected[0] == "info":
        assert any(message_prefix(zh(expected[1])) in i for i in shown["info"]), (expected[1], shown["info"])
    # 4. user text inside a message is inert: no raw HTML tag, Markdown specials escaped
    for text in everything:
        assert not re.search(r"(?<!\\)<(script|img)", text), text


def test_every_text_box_is_in_the_table():
    """Every st.text_input / st.text_area with a key on a page (app_pages/*/ and the ui modules they import)
    is covered by BOXES."""
    covered = {(b.page, b.key) for b in BOXES} | BOXES_TESTED_ELSEWHERE
    found = set()
    for page in sorted((ROOT / "app_pages").glob("*/page.py")):
        # the sidebar's "other model" box is app.py's, on every page: test_sidebar_model_box_takes_bad_input
        for path in (p for p in page_files(page) if p.stem != "sidebar"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("text_input", "text_area"):
                    for kw in node.keywords:
                        if kw.arg == "key" and isinstance(kw.value, ast.Constant):
                            found.add((page.parent.name, kw.value.value))
    assert found - covered == set(), f"text boxes without bad-input tests: {sorted(found - covered)}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_sidebar_model_box_takes_bad_input(case):
    """The sidebar's "other hub id or directory" box (app.py, every page): no exception, the text kept, a
    clear line under the box, no model chosen from a name no model has, no user HTML rendered."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.sidebar.selectbox(key="_w_model").set_value("__other__").run()
    at.sidebar.text_input(key="_w_model_other").set_value(CASES[case]).run()
    assert not at.exception, [e.value for e in at.exception]
    typed = CASES[case][:MAX_MODEL_ID_LEN]  # the box takes no more (max_chars), as in the browser
    assert at.sidebar.text_input(key="_w_model_other").value == typed
    if not well_formed_model_name(typed.strip()):
        assert at.session_state["bert_model"] is None
        line = " ".join(c.value for c in at.sidebar.caption)
        assert lab_prefix("unknown_model") in line or zh("sidebar.model_other_empty") in line
    for kind in ("markdown", "caption", "warning", "info", "error"):
        assert not any(re.search(r"(?<!\\)<(script|img)", e.value) for e in getattr(at.sidebar, kind))


@pytest.mark.parametrize("typed", ["www.evil.example", "user@evil.example", "![i](http://evil.example/x.png)"])
def test_sidebar_model_box_makes_no_link(typed):
    """What is typed into the "other model" box is shown (the unknown-model line), never as a link."""
    from apptest_support import gfm_links, markdown_texts
    from core.guard.safe_text import WORD_JOINER

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.sidebar.selectbox(key="_w_model").set_value("__other__").run()
    at.sidebar.text_input(key="_w_model_other").set_value(typed).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["bert_model"] is None  # no model of that name is even tried
    texts = markdown_texts(at)
    assert any("evil.example" in t.replace(WORD_JOINER, "").replace("\\", "") for t in texts)
    assert [link for t in texts for link in gfm_links(t)] == []


@pytest.mark.parametrize("changes, fragment", [
    ({"hidden_size": "abc"}, "expected int, got str"),
    ({"vocab_size": None, "num_attention_heads": 0}, "expected int, got NoneType"),
])
def test_sidebar_model_box_explains_a_config_of_the_wrong_type(tiny_bert_dir, tmp_path, changes, fragment):
    """A model directory whose config.json has a field of the wrong type, typed into the box: the page says
    the registry's load_failed line (on main the hub library's validation error went uncaught)."""
    import json
    import shutil

    directory = shutil.copytree(tiny_bert_dir, tmp_path / "wrong-type")
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    (directory / "config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.sidebar.selectbox(key="_w_model").set_value("__other__").run()
    at.sidebar.text_input(key="_w_model_other").set_value(str(directory)).run()
    at.switch_page("app_pages/fill_mask/page.py").run()  # a page that loads the model
    assert not at.exception, [e.value for e in at.exception]
    line = " ".join(e.value for kind in ("warning", "error") for e in getattr(at, kind))
    assert lab_prefix("load_failed") in line and fragment in line, line


# ---- uploads -----------------------------------------------------------------------------------------
def test_pages_with_uploads_use_the_tested_parser():
    for page in sorted((ROOT / "app_pages").glob("*/page.py")):
        for path in page_files(page):
            source = path.read_text(encoding="utf-8")
            if "file_uploader" in source:
                assert "scenes.decode_upload(" in source, \
                    f"{path.name} parses uploads without core.content.sentence_sets.decode_upload"


@pytest.mark.parametrize("seed", range(5))
def test_upload_of_random_bytes_is_refused(seed):
    data = random.Random(seed).randbytes(4096)
    with pytest.raises(LabError) as info:
        scenes.decode_upload(data)
    assert info.value.code == "not_text"
    assert "UTF-8" in info.value.message("zh") and "UTF-8" in info.value.message("en")


@pytest.mark.parametrize("data", [
    b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,  # an image
    "我吃了一个苹果\n".encode("utf-16"),  # text, but not UTF-8 (NUL bytes)
    b"PK\x03\x04" + b"\x00" * 100,  # a zip / docx
    "我吃了一个苹果".encode("gbk"),  # GBK-encoded Chinese
    b"\x01\x02\x03\x04\x05\x06 binary-ish \x07\x08",  # mostly control characters
])
def test_upload_of_non_text_is_refused(data):
    with pytest.raises(LabError) as info:
        scenes.decode_upload(data)
    assert info.value.code == "not_text"


def test_upload_of_text_is_read_and_size_limited():
    text = "水果|我吃了一个苹果\r\n公司|苹果昨天发布了新手机\r\n"
    assert scenes.decode_upload(("\ufeff" + text).encode("utf-8")) == text.replace("\r\n", "\n")
    with pytest.raises(LabError) as info:
        scenes.decode_upload(b"a" * 2_250_000)
    assert info.value.code == "file_too_large" and "2.2 MB" in info.value.message("zh", markdown=False)
    server_limit_mb = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
    assert server_limit_mb * 1_000_000 == scenes.MAX_UPLOAD_BYTES  # the browser refuses what the app would


def test_a_refused_upload_is_explained_in_the_ui_language():
    """Above the limit (or not .txt) the browser refuses the file: a red chip, its reason in an English tooltip.
    The upload box's stylesheets show the translated reason in the tooltip and under the chip, on elements the
    installed Streamlit really has."""
    import streamlit

    from ui.sentence_inputs import UPLOADER_CSS_EN, UPLOADER_CSS_ZH

    bundles = (Path(streamlit.__file__).parent / "static" / "static" / "js").glob("*.js")
    frontend = "".join(b.read_text(encoding="utf-8") for b in bundles)
    for css, lang in ((UPLOADER_CSS_ZH, "zh"), (UPLOADER_CSS_EN, "en")):
        refused = translate(lang, "static.upload_refused")
        for selector in ('[data-testid="stTooltipErrorContent"]::after', '[data-testid="stFileChips"]:has('):
            rule = css[css.index(selector):]
            assert rule[:rule.index("}")].count(f'content: "{refused}"') == 1, (lang, selector)
        for test_id in ("stTooltipErrorContent", "stFileChips", "stFileChip"):
            assert f"`{test_id}`" in frontend, test_id
    assert "aria-invalid" in frontend and "File must be" in frontend
