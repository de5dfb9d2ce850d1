"""静态 vs 上下文: one word2vec point for every sentence vs one contextual point per occurrence.

A student reads the question and its answer, the inputs, then the result; on the projector the sentences and the
word are pinned under the scene bar above the result, the rest of the inputs below it. Thin page: widgets →
core.vectors.view.occurrence_layers (through ui.cache.occurrence_view: once per models, sentences and word) →
``explorer.py`` beside it (core.figures.vectors → render), whose layer scrubber and centring toggle live in an
st.fragment and only slice the cached arrays.
"""
from __future__ import annotations

import streamlit as st

from app_pages.static_vs_contextual import explorer as static_explorer
from core.guard.safe_text import md_escape
from core.models.catalogue import DEFAULT_ELMO, DEFAULT_STATIC
from core.vectors.parsing import parse_input
from ui import cache, sentence_inputs
from ui.i18n import t
from ui.page import attempt, load_model, plain_answer, presenting
from ui.presentation import PINNED_KEY
from ui.sidebar import bert_model_name
from ui.state import Field, one_of, seed

ss = st.session_state
CTX_OPTIONS = ("elmo", "bert")


# ---- state: one declaration, seeded from the URL, kept across page switches ----------------------------
seed(*sentence_inputs.fields(), Field("static_ctx", "ctx", "elmo", one_of(*CTX_OPTIONS)),
     Field("static_centre", "centre", False, bool))


# ---- on the projector the sentences pinned above the result, the other inputs below it; a student at home reads the
# question and its answer, then the inputs, then the result ----------------------------------------------------
st.title(t("static.title"))
if presenting():
    st.markdown(t("static.intro"))
    # the sentences and the word pinned under the scene bar (ui.presentation.PINNED_KEY), above the result they
    # drive, wherever the page stands: the next student's sentence is typed with the result in view (issue #51)
    with st.container(key=PINNED_KEY):
        sentence_inputs.render_row()
    result_area = st.container()
    st.divider()
    input_area = st.container()
else:
    plain_answer("static_qa", t("static.qa"))
    input_area = st.container()
    result_area = st.container()

# ---- inputs -------------------------------------------------------------------------------------
with input_area, sentence_inputs.render("static_upload", height=150, row_drawn=presenting()):
    bert_name = bert_model_name()
    st.radio(t("static.ctx_model"), CTX_OPTIONS, key="static_ctx", horizontal=True, persist_state="session",
             format_func=lambda c: (t("static.ctx_elmo", name=DEFAULT_ELMO) if c == "elmo"
                                    else t("static.ctx_bert", name=bert_name or "—")))
    st.caption(t("static.static_always", name=DEFAULT_STATIC))

ctx = ss["static_ctx"]
text, word_raw, scene = sentence_inputs.current(ctx=ctx)

with result_area:  # what is wrong with the sentences stands where their result would (on the projector: below the
    # pinned row, not under the inputs at the page's end)
    parsed = attempt(parse_input, text, word_raw)
    if parsed is None:
        st.stop()
    if parsed.removed_controls:
        st.info(t("static.controls_removed", n=parsed.removed_controls))
word = parsed.word

# ---- models ---------------------------------------------------------------------------------------
ctx_name = DEFAULT_ELMO if ctx == "elmo" else bert_name
static_encoder, static_problem = load_model(DEFAULT_STATIC, t("static.no_bert_model"))
ctx_encoder, ctx_problem = load_model(ctx_name, t("static.no_bert_model"))
if static_problem:
    st.warning(t("static.static_missing", reason=static_problem))
if ctx_problem:
    st.warning(t("static.ctx_missing", reason=ctx_problem))

with st.spinner(t("static.computing")):
    view = attempt(cache.occurrence_view, ctx_encoder, static_encoder, tuple(parsed.sentences), word,
                   tuple(parsed.labels))
if view is None:
    st.stop()

with result_area:
    if view.oov:
        st.warning(t("static.oov", word=md_escape(word), name=DEFAULT_STATIC)
                   + (" " + t("static.oov_contextual", name=ctx_name) if view.num_occurrences else ""))
    sentence_inputs.show_occurrence_notes(view, parsed, contextual=ctx_encoder is not None)
    if len(view.missing) == len(parsed.sentences) and not view.oov:
        st.stop()  # nothing to plot; the note above says why
    static_dim = static_encoder.encoder().vectors.shape[1] if static_encoder is not None else None
    static_explorer.explorer(view, parsed, ctx_name, contextual=ctx_encoder is not None, static_dim=static_dim)
