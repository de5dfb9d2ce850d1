"""BERT 完形填空 (fill-mask): BERT's masked-language-model pre-training task, hands on.

Type a sentence with [MASK]s (or a plain sentence and pick a word / characters to mask); see the
top-k candidates for every mask, compare your own candidate words, replay iterative filling step
by step, watch the pre-training corruption (15% chosen: 80% [MASK], 10% random, 10% unchanged)
and try next-sentence prediction.

Thin page: widgets → one cached core call (``core.fillmask.view.fill_view``) → the sections of
``sections.py`` beside it, which render it; the sub-experiments (own candidates, corruption, next-sentence
prediction) are fragments with their own inputs and their own core call.
"""
from __future__ import annotations

import streamlit as st

from app_pages.fill_mask import sections
from core.fillmask import examples as fx
from core.fillmask.masks import INPUT_MODES, MAX_CHARS, MAX_MASKS
from core.fillmask.view import FillView, corruption_source, fill_view
from ui.cache import model_call
from ui.i18n import t
from ui.page import attempt, model_or_message, plain_answer, presenting
from ui.presentation import PINNED_KEY
from ui.sidebar import bert_model_name
from ui.state import Field, in_range, one_of, seed, sync_to_url

EXAMPLES = fx.EXAMPLES  # with the answers each one teaches (data, checked on the shipped weights)
DEFAULT_SENTENCE = EXAMPLES[0].masked
ss = st.session_state

# ---- state: one declaration, seeded from the URL, kept across page switches -----------------------
seed(Field("fill_mode", "mode", "masked", one_of(*INPUT_MODES)),
     Field("fill_sentence", "sentence", DEFAULT_SENTENCE),
     Field("fill_plain", "plain", EXAMPLES[0].plain),
     Field("fill_word", "word", EXAMPLES[0].word),
     Field("fill_chars", "chars", [], list),
     Field("fill_top_k", "top_k", 5, in_range(1, sections.TOP_K_MAX)),
     Field("fill_show_all", None, False, bool),
     *sections.FIELDS)

model_name = bert_model_name()


def _use_example() -> None:
    choice = ss.get("fill_example")
    if choice is None:
        return
    plain, word = EXAMPLES[choice].plain, EXAMPLES[choice].word
    ss["fill_plain"], ss["fill_word"] = plain, word
    ss["fill_sentence"] = EXAMPLES[choice].masked
    ss["fill_chars"] = sorted({j for i in range(len(plain)) if plain.startswith(word, i)
                               for j in range(i, i + len(word))})
    ss["fill_example"] = None


def _char_option(plain: str):
    return lambda i: f"{i + 1}·{plain[i]}" if 0 <= i < len(plain) else str(i)


def _example_help() -> str:
    score = fx.demo_score()
    return t("fill.example_help", **({"top": score.top, "hit": score.hits, "total": score.sentences} if score
                                     else {"top": "—", "hit": "—", "total": "—"}))


def _sentence_inputs(mode: str) -> None:
    """The sentence the mode asks for (with [MASK], or plain with its word or characters)."""
    if mode == "masked":
        st.text_input(t("fill.sentence"), key="fill_sentence", persist_state="session", help=t("fill.sentence_help"))
    else:
        st.text_input(t("fill.plain"), key="fill_plain", persist_state="session", help=t("fill.plain_help"))
        if mode == "word":
            st.text_input(t("fill.word"), key="fill_word", persist_state="session", help=t("fill.word_help"))
        else:
            plain_text = ss["fill_plain"] or ""
            options = [i for i, c in enumerate(plain_text[:MAX_CHARS]) if not c.isspace()]
            ss["fill_chars"] = [i for i in ss["fill_chars"] if i in options][:MAX_MASKS]
            st.multiselect(t("fill.chars"), options, key="fill_chars", persist_state="session",
                           format_func=_char_option(plain_text), max_selections=MAX_MASKS, help=t("fill.chars_help"),
                           placeholder=t("fill.chars_placeholder"))


def _replay_heading() -> None:
    st.header(t("fill.sec.replay"))
    st.markdown(t("fill.replay_intro"))


# ---- inputs -------------------------------------------------------------------------------------
st.title(t("nav.fill_mask"))
plain_answer("fill_qa", t("fill.qa"))
st.markdown(t("fill.intro"))
sections.model_limits(model_name)

mode = ss["fill_mode"]
if presenting():  # the sentence pinned under the scene bar, above every result it drives (issue #51)
    with st.container(key=PINNED_KEY):
        _sentence_inputs(mode)
with st.container(border=True):
    st.selectbox(t("fill.example"), list(range(len(EXAMPLES))), index=None, key="fill_example",
                 placeholder=t("fill.example_placeholder"), on_change=_use_example, help=_example_help(),
                 format_func=lambda i: EXAMPLES[i].masked)
    st.radio(t("fill.mode"), INPUT_MODES, key="fill_mode", persist_state="session", horizontal=True,
             format_func=lambda m: t(f"fill.mode.{m}"))
    if not presenting():
        _sentence_inputs(mode)
    st.toggle(t("fill.show_all"), key="fill_show_all", persist_state="session", help=t("fill.show_all_help"))

# ---- the sentence BERT sees and its result (one cached core call); what can go wrong is said right here ---
encoder = model_or_message(model_name, t("fill.no_model"), masked_lm=True)
view: FillView | None = None
if encoder is not None:
    view = attempt(model_call, fill_view, encoder, mode, sentence=ss["fill_sentence"] or "",
                   plain=ss["fill_plain"] or "", word=ss["fill_word"] or "", chars=tuple(ss["fill_chars"]),
                   top_k=sections.TOP_K_MAX, hide_vulgar=not ss["fill_show_all"])
    if view is not None:
        st.caption(t("fill.model_input"))
        st.code(view.masked, language=None, wrap_lines=True)
    typed = view.masked if view else (ss["fill_sentence"] if mode == "masked" else ss["fill_plain"]) or ""
    if typed.strip():
        sections.show_text_notes(encoder, typed[: MAX_CHARS])

masked = view.masked if view else None
typed_sentence = ss["fill_sentence"] or ""
sync_to_url(
    mode=None if mode == "masked" else mode,
    sentence=masked if masked else (typed_sentence if mode == "masked" and len(typed_sentence) <= 2 * MAX_CHARS
                                    else None),
    plain=ss["fill_plain"] if mode != "masked" and len(ss["fill_plain"] or "") <= 2 * MAX_CHARS else None,
    word=ss["fill_word"] if mode == "word" else None,
    chars=list(ss["fill_chars"]) if mode == "chars" else None,
)

# ---- ① predictions, ② replay -----------------------------------------------------------------------
st.header(t("fill.sec.predict"))
if view is not None:
    sections.confidence(view)
    sections.predictions(view)
    sections.answer_check(view)
    with st.container(key="fill_cands_result"):  # the candidate box and its chart (ui.presentation)
        sections.compare_candidates(encoder, view.masked, len(view.result.masks))
else:
    st.info(t("fill.predict_waiting"))

# the scene "iterative" (fill_replay_result): on the projector the heading and introduction stand above the result,
# which must fit below the sentence pinned under the bar; a student's page keeps them in it
if presenting():
    _replay_heading()
with st.container(key="fill_replay_result"):
    if not presenting():
        _replay_heading()
    if view is None:
        st.info(t("fill.predict_waiting"))
    else:
        sections.replay(view.masked, view.mask_token, view.steps)

# ---- ③ corruption of a true sentence: the user's plain sentence, or the one the data knows -----------
st.header(t("fill.sec.corrupt"))
st.markdown(t("fill.corrupt_intro"))
sections.whole_word_note(model_name)
if encoder is not None:
    source, origin = corruption_source(mode, ss["fill_plain"] or "", view)
    with st.container(key="fill_corrupt_result"):
        sections.corruption(encoder, source, (ss["fill_plain"] or "").strip(), origin)

# ---- ④ next-sentence prediction --------------------------------------------------------------------
st.header(t("fill.sec.nsp"))
st.markdown(t("fill.nsp_intro"))
with st.container(key="fill_nsp_result"):
    sections.next_sentence(encoder)
st.caption(t("fill.nsp_note"))

if model_name:
    sync_to_url(model=model_name)
st.caption(t("fill.source"))
