"""BERT 完形填空 (fill-mask): BERT's masked-language-model pre-training task, hands on.

Type a sentence with [MASK]s (or a plain sentence and pick a word / characters to mask); see the
top-k candidates for every mask, compare your own candidate words, replay iterative filling step
by step, watch the pre-training corruption (15% chosen: 80% [MASK], 10% random, 10% unchanged)
and try next-sentence prediction.

Thin page: widgets → core.fillmask.masked_input → one cached model call per result → the sections
of ``ui.fill_mask_sections``.
"""
from __future__ import annotations

import streamlit as st

from core import fill_examples as fx
from core import fillmask as fm
from core.figures import bert as figs
from ui import fill_mask_sections as sections
from ui.cache import model_call
from ui.i18n import t
from ui.page import model_or_message, show_error
from ui.sidebar import bert_model_name
from ui.state import Field, in_range, one_of, seed, sync_to_url

EXAMPLES = fx.EXAMPLES  # with the answers each one teaches (data, checked on the shipped weights)
DEFAULT_SENTENCE = EXAMPLES[0].masked
ss = st.session_state

# ---- state: one declaration, seeded from the URL, kept across page switches -----------------------
seed(Field("fill_mode", "mode", "masked", one_of(*fm.INPUT_MODES)),
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


# ---- inputs -------------------------------------------------------------------------------------
st.title(t("nav.fill_mask"))
st.markdown(t("fill.intro"))

with st.container(border=True):
    st.selectbox(t("fill.example"), list(range(len(EXAMPLES))), index=None, key="fill_example",
                 placeholder=t("fill.example_placeholder"), on_change=_use_example, help=t("fill.example_help"),
                 format_func=lambda i: EXAMPLES[i].masked)
    st.radio(t("fill.mode"), fm.INPUT_MODES, key="fill_mode", persist_state="session", horizontal=True,
             format_func=lambda m: t(f"fill.mode.{m}"))
    mode = ss["fill_mode"]
    if mode == "masked":
        st.text_input(t("fill.sentence"), key="fill_sentence", persist_state="session", help=t("fill.sentence_help"))
    else:
        st.text_input(t("fill.plain"), key="fill_plain", persist_state="session", help=t("fill.plain_help"))
        if mode == "word":
            st.text_input(t("fill.word"), key="fill_word", persist_state="session", help=t("fill.word_help"))
        else:
            plain_text = ss["fill_plain"] or ""
            options = [i for i, c in enumerate(plain_text[:fm.MAX_CHARS]) if not c.isspace()]
            ss["fill_chars"] = [i for i in ss["fill_chars"] if i in options][:fm.MAX_MASKS]
            st.multiselect(t("fill.chars"), options, key="fill_chars", persist_state="session",
                           format_func=_char_option(plain_text), max_selections=fm.MAX_MASKS, help=t("fill.chars_help"),
                           placeholder=t("fill.chars_placeholder"))
    st.toggle(t("fill.show_all"), key="fill_show_all", persist_state="session", help=t("fill.show_all_help"))
hide_vulgar = not ss["fill_show_all"]

# ---- the sentence BERT sees, and everything that can go wrong with it, reported right here ---------
masked: str | None = None
fill = None
encoder = model_or_message(model_name, t("fill.no_model"), masked_lm=True)
if encoder is not None:
    try:
        masked = fm.masked_input(encoder, mode, sentence=ss["fill_sentence"] or "", plain=ss["fill_plain"] or "",
                                 word=ss["fill_word"] or "", chars=ss["fill_chars"])
        st.caption(t("fill.model_input"))
        st.code(masked, language=None, wrap_lines=True)
        fill = model_call(fm.fill_mask, encoder, masked, top_k=sections.TOP_K_MAX, hide_vulgar=hide_vulgar)
    except Exception as err:  # bad input or an unexpected model failure: a message, never a traceback
        show_error(err)
    typed = masked or (ss.get("fill_sentence") if mode == "masked" else ss.get("fill_plain")) or ""
    if typed.strip():
        sections.show_text_notes(encoder, typed[: fm.MAX_CHARS])

known = fx.lookup(masked, encoder.mask_token) if masked else None  # accepted answers and true sentence
typed_sentence = ss.get("fill_sentence") or ""
sync_to_url(
    mode=None if mode == "masked" else mode,
    sentence=masked if masked else (typed_sentence if mode == "masked" and len(typed_sentence) <= 2 * fm.MAX_CHARS
                                    else None),
    plain=ss["fill_plain"] if mode != "masked" and len(ss["fill_plain"] or "") <= 2 * fm.MAX_CHARS else None,
    word=ss["fill_word"] if mode == "word" else None,
    chars=list(ss["fill_chars"]) if mode == "chars" else None,
)


def _computed(func, **kwargs):
    """``func``'s result for the masked sentence, or ``None`` after saying why."""
    try:
        return model_call(func, encoder, masked, hide_vulgar=hide_vulgar, **kwargs)
    except Exception as err:
        show_error(err)
        return None


# ---- ① predictions, ② replay -----------------------------------------------------------------------
st.header(t("fill.sec.predict"))
if fill is not None:
    runs = _computed(fm.word_candidates, top_n=sections.TOP_K_MAX) or []
    sections.predictions(fill, runs)
    sections.answer_check(known, fm.proposals(fill, runs))
if fill is not None:
    sections.compare_candidates(encoder, masked, len(fill.masks))
else:
    st.info(t("fill.predict_waiting"))

with st.container(key="fill_replay_result"):
    st.header(t("fill.sec.replay"))
    st.markdown(t("fill.replay_intro"))
    if fill is None:
        st.info(t("fill.predict_waiting"))
    elif steps := _computed(fm.iterative_fill, top_k=sections.TOP_K_MAX):
        sections.replay(masked, encoder.mask_token, steps)

# ---- ③ corruption of a true sentence: the user's plain sentence, or the one the data knows -----------
st.header(t("fill.sec.corrupt"))
st.markdown(t("fill.corrupt_intro"))
sections.whole_word_note(model_name)
plain_now = (ss.get("fill_plain") or "").strip()
if mode != "masked" or (masked and figs.masks_plain(masked, encoder.mask_token, plain_now)):
    source, origin = plain_now, "plain"  # in masked mode: this plain sentence, masked (examples)
elif known:
    source, origin = known.sentence, "answer"
else:  # never the model's guess: a masked sentence the data does not know leaves the box as it is
    source, origin = None, "unknown" if masked else None
if encoder is not None:
    sections.corruption(encoder, source, plain_now, origin)

# ---- ④ next-sentence prediction --------------------------------------------------------------------
st.header(t("fill.sec.nsp"))
st.markdown(t("fill.nsp_intro"))
sections.next_sentence(encoder)
st.caption(t("fill.nsp_note"))

if model_name:
    sync_to_url(model=model_name)
st.caption(t("fill.source"))
