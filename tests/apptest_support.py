"""Helpers shared by the AppTest page tests: building a page's AppTest, reading its plotly figures
back as arrays, checking that nothing crashed, and reading a page's source with its ``ui`` modules."""
from __future__ import annotations

import ast
import base64
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from core.guard.errors import LabError
from core.guard.safe_text import GFM_AUTOLINKS
from ui.i18n import translate
from ui.page import TABLE_KEY_SUFFIX

UI_DIR = Path(__file__).resolve().parents[1] / "ui"


def page_files(page: Path) -> list[Path]:
    """A page script, the other modules of its folder (its sections) and the ``ui`` modules they import
    (shared inputs hold widgets too)."""
    own = [page] + sorted(p for p in page.parent.glob("*.py") if p != page)
    names = set()
    for path in own:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "ui":
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ui."):
                names.add(node.module.split(".")[1])
    return own + [UI_DIR / f"{name}.py" for name in sorted(names) if (UI_DIR / f"{name}.py").is_file()]


def page_app(page: str, model, lang: str = "zh", query: dict | None = None) -> AppTest:
    """An (unrun) AppTest of one page file with the sidebar's language and BERT model preset."""
    at = AppTest.from_file(page, default_timeout=180)
    at.session_state["lang"] = lang
    at.session_state["bert_model"] = model
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at


def plotly_array(value) -> np.ndarray:
    """A plotly JSON array: a plain list, or plotly's typed-array form {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            data = data.reshape([int(n) for n in str(shape).split(",")] if isinstance(shape, str) else shape)
        return data
    return np.asarray(value)


def chart(at: AppTest, key: str) -> dict | None:
    """The plotly figure of the chart whose widget key is `key`, as its JSON spec."""
    for element in at.get("plotly_chart"):
        if element.proto.id.endswith("-" + key):
            return json.loads(element.proto.spec)
    return None


def chart_table_expanders(at: AppTest) -> list:
    """The expanders of the charts' number tables (``ui.page.chart_table``), open or not."""
    label = translate(at.session_state["lang"] if "lang" in at.session_state else "zh", "page.chart_data")
    return [e for e in at.expander if e.label == label]


def open_chart_tables(at: AppTest) -> AppTest:
    """Every chart's table expander opened, as a reader who clicks it (the expander's state in session_state
    under its key; ``ui.page.chart_table`` builds a table only while it is open), and the page rerun when one
    was closed."""
    closed = [e for e in chart_table_expanders(at) if not e.proto.expanded and not e.table]
    for expander in closed:
        key = expander.proto.id.split("-", 2)[2]  # a keyed widget's id: "$$ID-<hash>-<key>"
        assert key.endswith(TABLE_KEY_SUFFIX), expander.proto.id
        at.session_state[key] = True
    if closed:
        at.run()
    return at


def chart_tables(at: AppTest) -> list:
    """The tables of the charts' numbers (``ui.page.chart_table``, one in each chart's expander), every expander
    opened first (:func:`open_chart_tables`: the page reruns if one was closed)."""
    return [table for e in chart_table_expanders(open_chart_tables(at)) for table in e.table]


def page_tables(at: AppTest) -> list:
    """The page's own tables (``st.table``), in order, without the charts' tables (those of open expanders)."""
    of_charts = {id(table) for e in chart_table_expanders(at) for table in e.table}
    return [table for table in at.table if id(table) not in of_charts]


def texts(at: AppTest, kind: str) -> list[str]:
    return [e.value for e in getattr(at, kind)]


def messages(at: AppTest) -> str:
    """The st.error, st.warning and st.info texts, one per line."""
    return "\n".join([e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info])


def gfm_links(markdown: str) -> list[str]:
    """What Streamlit's Markdown (remark-gfm) makes a link of by itself in ``markdown``: the autolink literals
    of the text outside code spans, found after the backslash escapes are resolved (as remark does)."""
    text = re.sub(r"\\(.)", r"\1", re.sub(r"(`+).*?\1", " ", markdown))
    return [m.group(0) for pattern in GFM_AUTOLINKS for m in pattern.finditer(text)]


MARKDOWN_ELEMENTS = ("markdown", "caption", "error", "warning", "info", "success", "title", "header", "subheader")
LABELLED_WIDGETS = ("text_input", "text_area", "selectbox", "radio", "toggle", "checkbox", "button", "select_slider",
                    "slider", "multiselect")


def markdown_texts(at: AppTest) -> list[str]:
    """Every text the page renders as Markdown: the Markdown-bearing elements and the widgets' labels."""
    texts = [e.value for kind in MARKDOWN_ELEMENTS for e in at.get(kind)]
    return texts + [w.label for kind in LABELLED_WIDGETS for w in at.get(kind)]


def unexpected_errors(at: AppTest) -> list[str]:
    """Exception boxes, and the generic "something went wrong" lines an unexpected exception becomes (app.py's
    outer boundary and ``ui.page.show_error``): a page bug either way."""
    from ui.i18n import table

    generic = [table(lang)["common.error_generic"].split("{kind}")[0] for lang in ("zh", "en")]
    return [e.value for e in at.exception] + [e.value for e in at.error if e.value.startswith(tuple(generic))]


def shows_message(text: str, key: str, lang: str = "zh") -> bool:
    """Whether ``text`` holds the i18n message ``key`` with some values in its placeholders."""
    from ui.i18n import table

    parts = re.split(r"\{[^}]*\}", table(lang)[key])
    return re.search(".*?".join(map(re.escape, parts)), text, re.S) is not None


def unexpected_messages(at: AppTest, expected: tuple[str, ...] = ()) -> list[str]:
    """Exceptions, and every st.error and st.warning that is none of the i18n messages ``expected``: what a page
    run on good input must not show (``unexpected_errors`` sees only the crashes a page turned into a line)."""
    lang = at.session_state["lang"] if "lang" in at.session_state else "zh"
    shown = [e.value for e in at.error] + [w.value for w in at.warning]
    return [e.value for e in at.exception] + [text for text in shown
                                              if not any(shows_message(text, key, lang) for key in expected)]


def assert_no_exception(at: AppTest) -> None:
    assert not unexpected_errors(at)


def zh_message(code: str, **params) -> str:
    return LabError(code, **params).message("zh", markdown=True)


def type_text(at: AppTest, key: str, text: str) -> AppTest:
    """``text`` typed into the text box ``key`` and the page rerun: no exception, the user's text kept."""
    at.text_input(key=key).set_value(text).run()
    assert_no_exception(at)
    assert at.text_input(key=key).value == text
    return at


def is_sureness(text: str) -> bool:
    """A fill-mask warning that the model is not sure of its first answer (``fill.conf.*``), not a note."""
    return "模型**不太确定**" in text or "这个小模型在这里没有把握" in text


def assert_text_notes(at: AppTest, unknown: list[str], control: list[str]) -> None:
    """The page warned about each character the model cannot see and noted each control character
    (no warning when there is none), and no user ``<script>`` reached a text element unescaped."""
    warnings = " ".join(texts(at, "warning")).replace("\\", "")
    for char in unknown:
        assert char in warnings
    if not unknown:
        assert not [w for w in texts(at, "warning") if not is_sureness(w)]
    infos = " ".join(texts(at, "info"))
    for code in control:
        assert code in infos
    for kind in ("markdown", "caption", "warning", "info", "error"):
        assert not any("<script>" in value for value in texts(at, kind))
