"""The sentence inputs of the two vector pages (static vs contextual, ELMo weights), and their notes
about where the word was not found.

A ready-made scene, the sentences (typed or uploaded) and the target word. Both pages keep them
under the same session keys (``vec_scene``, ``vec_text``, ``vec_word``), so what a student typed on
one page is still there on the other, and both read and write the same URL parameters
(``scene``, ``text``, ``word``).
"""
from __future__ import annotations

from typing import Literal

import streamlit as st

from core.content import sentence_sets as scenes
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from core.vectors.parsing import MAX_TEXT_CHARS, ParsedInput
from core.vectors.view import VectorsView
from ui.i18n import current_lang, t
from ui.page import show_error
from ui.state import Field, sync_to_url, url_param

MAX_URL_TEXT = 1500  # longer texts are not written to the address bar
MAX_WORD = 100


# Streamlit's dropzone has fixed English texts ("Upload", "1MB per file • TXT", and for a refused file
# "File must be 1.0MB or smaller." / "text/csv files are not allowed." in a tooltip): these CONSTANT
# stylesheets hide them and show the labels "static.upload_button" / "static.upload_limits" /
# "static.upload_refused" of the translation tables (tests/test_i18n.py keeps the two in step), the last
# one also under a refused file's red chip. The button's own text is hidden from the eye only: it is the
# button's accessible name until ui/document.js gives it the translated one. Raw HTML renders constants only,
# so the two languages are two literal stylesheets (tests/test_security.py accepts no template).
UPLOADER_CSS_ZH = """<style>
[data-testid="stFileUploaderDropzone"] button[data-testid="stBaseButton-secondary"]
  [data-testid="stMarkdownContainer"] { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap; }
[data-testid="stFileUploaderDropzone"] button[data-testid="stBaseButton-secondary"]::after { content: "选择文件"; }
[data-testid="stFileUploaderDropzoneInstructions"] span { display: none; }
[data-testid="stFileUploaderDropzoneInstructions"]::after { content: "TXT，最大 1 MB"; font-size: 0.875rem;
  opacity: 0.7; white-space: nowrap; }
[data-testid="stTooltipErrorContent"] { font-size: 0; }
[data-testid="stTooltipErrorContent"]::after { content: "未上传：只接受 1 MB 以内的 .txt 文件";
  font-size: 0.875rem; }
[data-testid="stFileChips"]:has([aria-invalid="true"])::after { content: "未上传：只接受 1 MB 以内的 .txt 文件";
  font-size: 0.875rem; color: #B3261E; align-self: center; }
</style>"""
UPLOADER_CSS_EN = """<style>
[data-testid="stFileUploaderDropzone"] button[data-testid="stBaseButton-secondary"]
  [data-testid="stMarkdownContainer"] { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap; }
[data-testid="stFileUploaderDropzone"] button[data-testid="stBaseButton-secondary"]::after { content: "Choose a file"; }
[data-testid="stFileUploaderDropzoneInstructions"] span { display: none; }
[data-testid="stFileUploaderDropzoneInstructions"]::after { content: "TXT, 1 MB at most"; font-size: 0.875rem;
  opacity: 0.7; white-space: nowrap; }
[data-testid="stTooltipErrorContent"] { font-size: 0; }
[data-testid="stTooltipErrorContent"]::after { content: "Not uploaded: only a .txt file of 1 MB at most";
  font-size: 0.875rem; }
[data-testid="stFileChips"]:has([aria-invalid="true"])::after {
  content: "Not uploaded: only a .txt file of 1 MB at most"; font-size: 0.875rem; color: #B3261E; align-self: center; }
</style>"""


def fields() -> tuple[Field, ...]:
    """The inputs' values, for the page's ``ui.state.seed``: from the URL, else the URL scene's sentences.
    A text is cut to its limit as it comes from the URL; what the user typed is never cut."""
    scene = scenes.get_scene(url_param("scene", scenes.DEFAULT_SCENE))
    return (Field("vec_scene", None, scene.id),
            Field("vec_text", None, url_param("text", scene.text)[: MAX_TEXT_CHARS]),
            Field("vec_word", None, url_param("word", scene.word)[:MAX_WORD]))


def _load_scene() -> None:
    scene = scenes.get_scene(st.session_state.get("vec_scene"))
    st.session_state["vec_text"] = scene.text
    st.session_state["vec_word"] = scene.word


def _load_upload(upload_key: str) -> None:
    ss = st.session_state
    upload = ss.get(upload_key)
    ss.pop(f"{upload_key}_error", None)
    if upload is None:
        return
    try:
        ss["vec_text"] = scenes.decode_upload(upload.getvalue())
    except LabError as err:  # not UTF-8 text: the message is shown, the typed sentences stay
        ss[f"{upload_key}_error"] = err


COMPACT_HEIGHT = 68  # px: two lines, Streamlit's smallest text area


def _word_box(label: Literal["visible", "collapsed"] = "visible") -> None:
    st.text_input(t("static.word"), key="vec_word", help=t("static.word_help"), persist_state="session",
                  label_visibility=label)


def _sentences_box(height: int, label: Literal["visible", "collapsed"] = "visible") -> None:
    st.text_area(t("static.sentences"), key="vec_text", height=height, help=t("static.sentences_help"),
                 persist_state="session", label_visibility=label)


def render_row() -> None:
    """The sentences and the word in one low row, for the projector (pinned under the scene bar by the page), so
    that the next student's sentence is typed with the result in view (issue #51); :func:`render` with
    ``row_drawn`` then draws the rest (scene picker, upload)."""
    # the labels are the boxes' accessible names only: the row must stay low (the result's room below it)
    col_text, col_word = st.columns([4, 1], vertical_alignment="bottom")
    with col_text:
        _sentences_box(COMPACT_HEIGHT, "collapsed")
    with col_word:
        _word_box("collapsed")


def render(upload_key: str, *, height: int, row_drawn: bool = False):
    """Scene picker across the page (its labels are long), then sentences + upload on the left and
    the target word on the right (``row_drawn``: the two boxes are in :func:`render_row` already). Returns the
    right-hand column for the page's own controls."""
    st.selectbox(t("static.scene"), list(scenes.SCENES),
                 format_func=lambda s: t(f"scenes.{s}", n=len(scenes.SCENES[s].lines)), key="vec_scene",
                 on_change=_load_scene, help=t("static.scene_help"), persist_state="session")
    col_text, col_controls = st.columns([3, 2], gap="large")
    with col_controls:
        if not row_drawn:
            _word_box()
    with col_text:
        if not row_drawn:
            _sentences_box(height)
        st.file_uploader(t("static.upload"), type=["txt"], key=upload_key, on_change=_load_upload,
                         args=(upload_key,), help=t("static.upload_help"))
        if current_lang() == "zh":
            st.markdown(UPLOADER_CSS_ZH, unsafe_allow_html=True)  # constant stylesheet only
        else:
            st.markdown(UPLOADER_CSS_EN, unsafe_allow_html=True)  # constant stylesheet only
        error = st.session_state.get(f"{upload_key}_error")
        if error is not None:
            show_error(error)
    return col_controls


def current(**more_url_params) -> tuple[str, str, scenes.Scene]:
    """(text, word, scene) as typed now; writes them to the URL with the page's ``more_url_params``."""
    ss = st.session_state
    text, word = ss["vec_text"], ss["vec_word"]
    scene = scenes.get_scene(ss["vec_scene"])
    sync_to_url(scene=scene.id, text=None if text == scene.text or len(text) > MAX_URL_TEXT else text,
                word=word if len(word) <= MAX_WORD else None, **more_url_params)
    return text, word, scene


def show_occurrence_notes(view: VectorsView, parsed: ParsedInput, *, contextual: bool = True) -> None:
    """Where the word was not found: the sentences without it (a table), or a note that it is nowhere, or
    that the contextual model (``contextual``: one is loaded) split it into no token of its own."""
    word_md = md_escape(parsed.word)
    nowhere = len(view.missing) == len(parsed.sentences)
    if view.missing and not nowhere:
        st.info(t("static.missing_note", word=word_md, n=len(view.missing), total=len(parsed.sentences)))
        st.dataframe({"#": [i + 1 for i in view.missing],
                      t("static.col.sentence"): [parsed.sentences[i] for i in view.missing]},
                     hide_index=True, height="content" if len(view.missing) <= 6 else 240)
    if nowhere:
        st.info(t("static.no_occurrences", word=word_md))
    elif contextual and not view.num_occurrences:
        st.info(t("static.no_tokens", word=word_md))
