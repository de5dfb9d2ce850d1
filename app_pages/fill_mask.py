"""BERT 完形填空 (fill-mask): BERT's masked-language-model pre-training task, hands on.

Type a sentence with [MASK]s (or a plain sentence and pick a word / characters to mask); see the
top-k candidates for every mask, compare your own candidate words, replay iterative filling step
by step, watch the pre-training corruption (15% chosen: 80% [MASK], 10% random, 10% unchanged)
and try next-sentence prediction.

Model work is cached per (model, sentence) below; sliders only slice cached results.
"""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from core import fillmask as fm
from core.attention_view import inspect_text
from core.errors import LabError
from core.figures import bert as figs
from core.figures.style import export_html
from core.safe_text import md_escape
from ui import cache
from ui.i18n import t
from ui.page import chart, model_or_message, presenting, show_error
from ui.sidebar import bert_model_name
from ui.state import in_range, keep_widgets, one_of, seed_widget, sync_to_url, url_param

TOP_K_MAX = 20
DEFAULT_SENTENCE = "我吃了一个[MASK][MASK]。"
DEFAULT_CANDIDATES = "苹果,水果,公司"
# Lecture examples: (plain sentence, word to mask); the masked forms are the lecture's sentences.
EXAMPLES = (
    ("我吃了一个苹果。", "苹果"),
    ("苹果昨天发布了新手机。", "手"),
    ("他背着包袱去北京。", "包袱"),
    ("今天天气很好。", "好"),
    ("他终于放下了心里的包袱。", "包袱"),
    ("相声演员在台上抖包袱。", "包袱"),
)
MODES = ("masked", "word", "chars")
STRIP_COLOURS = {"text": "#f2f2f2", "open": "#bdbdbd", "filled": "#9ecae1", "new": "#fdae6b"}
CORRUPT_COLOURS = {"keep": "#f2f2f2", "chosen": "#fdd49e", "mask": "#bdbdbd", "random": "#fc9272",
                   "unchanged": "#a1d99b"}

ss = st.session_state
large = presenting()


# ---- cached model work (per model and sentence; never re-run by a slider) ----------------------
@st.cache_data(show_spinner=False, max_entries=256)
def _fill(name: str, sentence: str, hide_vulgar: bool) -> fm.FillMaskResult:
    return fm.fill_mask(cache.bert_encoder(name), sentence, top_k=TOP_K_MAX, hide_vulgar=hide_vulgar)


@st.cache_data(show_spinner=False, max_entries=256)
def _words(name: str, sentence: str, hide_vulgar: bool) -> list[fm.MaskRun]:
    return fm.word_candidates(cache.bert_encoder(name), sentence, top_n=TOP_K_MAX, hide_vulgar=hide_vulgar)


@st.cache_data(show_spinner=False, max_entries=128)
def _steps(name: str, sentence: str, hide_vulgar: bool) -> list[fm.FillStep]:
    steps = fm.iterative_fill(cache.bert_encoder(name), sentence, top_k=TOP_K_MAX, hide_vulgar=hide_vulgar)
    for step in steps:  # keep the top-k only: full distributions of every step are not shown
        step.open_masks = [fm.MaskSlot(s.index, s.token_index, s.candidates, s.probabilities[:0])
                           for s in step.open_masks]
    return steps


@st.cache_data(show_spinner=False, max_entries=256)
def _candidates(name: str, sentence: str, words: tuple[str, ...], first_mask: int) -> list[dict]:
    return fm.candidate_scores(cache.bert_encoder(name), sentence, list(words), first_mask=first_mask)


@st.cache_data(show_spinner=False, max_entries=256)
def _corrupt(name: str, sentence: str, seed: int) -> list[fm.CorruptedToken]:
    return fm.mlm_corruption(cache.bert_encoder(name), sentence, seed=seed)


@st.cache_data(show_spinner=False, max_entries=64)
def _corrupt_stats(name: str, sentence: str) -> dict[str, float]:
    return fm.corruption_stats(cache.bert_encoder(name), sentence)


@st.cache_data(show_spinner=False, max_entries=256)
def _nsp(name: str, first: str, second: str) -> float:
    return cache.bert_encoder(name).next_sentence_probability(first, second)


@st.cache_data(show_spinner=False, max_entries=256)
def _notes(name: str, text: str):
    return inspect_text(cache.bert_encoder(name), text)


def show_text_notes(name: str, text: str) -> None:
    """Warn about what the model cannot see in ``text``: [UNK] characters, control characters."""
    notes = _notes(name, text)
    if notes.unknown:
        st.warning(t("fill.unknown_chars", chars=md_escape(" ".join(notes.unknown)), model=md_escape(name)))
    if notes.control:
        st.info(t("fill.control_chars", chars=", ".join(notes.control)))


# ---- state: widget keys seeded from the URL once, kept across page switches ---------------------
seed_widget("fill_mode", url_param("mode", "masked", cast=one_of(*MODES)))
seed_widget("fill_sentence", url_param("sentence", DEFAULT_SENTENCE))
seed_widget("fill_plain", url_param("plain", EXAMPLES[0][0]))
seed_widget("fill_word", url_param("word", EXAMPLES[0][1]))
seed_widget("fill_chars", [i for i in url_param("chars", [], cast=list) if isinstance(i, int)])
seed_widget("fill_top_k", url_param("top_k", 5, cast=in_range(1, TOP_K_MAX)))
seed_widget("fill_cands", DEFAULT_CANDIDATES)
seed_widget("fill_seed", 0)
seed_widget("fill_show_all", False)
seed_widget("fill_nsp_a", "今天天气很好。")
seed_widget("fill_nsp_b", "我们去公园散步吧。")

model_name = bert_model_name()


def _use_example() -> None:
    choice = ss.get("fill_example")
    if choice is None:
        return
    plain, word = EXAMPLES[choice]
    ss["fill_plain"], ss["fill_word"] = plain, word
    ss["fill_sentence"] = plain.replace(word, "[MASK]" * len(word))
    ss["fill_chars"] = sorted({j for i in range(len(plain)) if plain.startswith(word, i)
                               for j in range(i, i + len(word))})
    ss["fill_example"] = None


class _WordMissing(Exception):
    """The word to mask does not occur in the sentence (shown as a translated message)."""


def _char_option(plain: str):
    return lambda i: f"{i + 1}·{plain[i]}" if 0 <= i < len(plain) else str(i)


def _split_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w.strip() for w in re.split(r"[,，、;；\s]+", text or "") if w.strip()))[:12]


# ---- page -------------------------------------------------------------------------------------
st.title(t("nav.fill_mask"))
st.markdown(t("fill.intro"))

with st.container(border=True):
    st.selectbox(t("fill.example"), list(range(len(EXAMPLES))), index=None, key="fill_example",
                 placeholder=t("fill.example_placeholder"), on_change=_use_example,
                 format_func=lambda i: EXAMPLES[i][0].replace(EXAMPLES[i][1], "[MASK]" * len(EXAMPLES[i][1])))
    st.radio(t("fill.mode"), MODES, key="fill_mode", horizontal=True, format_func=lambda m: t(f"fill.mode.{m}"))
    mode = ss["fill_mode"]
    if mode == "masked":
        st.text_input(t("fill.sentence"), key="fill_sentence", help=t("fill.sentence_help"))
    else:
        st.text_input(t("fill.plain"), key="fill_plain", help=t("fill.plain_help"))
        plain_text = ss["fill_plain"] or ""
        if mode == "word":
            st.text_input(t("fill.word"), key="fill_word", help=t("fill.word_help"))
        else:
            options = [i for i, c in enumerate(plain_text[:fm.MAX_CHARS]) if not c.isspace()]
            ss["fill_chars"] = [i for i in ss.get("fill_chars", []) if i in options][:fm.MAX_MASKS]
            st.multiselect(t("fill.chars"), options, key="fill_chars", format_func=_char_option(plain_text),
                           max_selections=fm.MAX_MASKS, help=t("fill.chars_help"),
                           placeholder=t("fill.chars_placeholder"))
    st.toggle(t("fill.show_all"), key="fill_show_all", help=t("fill.show_all_help"))
keep_widgets("fill_mode", "fill_sentence", "fill_plain", "fill_word", "fill_chars", "fill_show_all")
hide_vulgar = not ss["fill_show_all"]

# The sentence BERT sees, and everything that can go wrong with it, reported right here.
masked: str | None = None
fill = None
encoder = model_or_message(model_name, t("fill.no_model"), masked_lm=True)

if encoder is not None:
    try:
        if mode == "masked":
            raw = ss["fill_sentence"] or ""
        elif mode == "word":
            plain_text, word = (ss["fill_plain"] or "").strip(), (ss["fill_word"] or "").strip()
            if not plain_text:
                raise LabError("empty_input")
            if len(plain_text) > fm.MAX_CHARS:
                raise LabError("too_long", length=len(plain_text), limit=fm.MAX_CHARS)
            if not word:
                raise LabError("empty_word")
            if word not in plain_text:
                raise _WordMissing(word)
            raw = fm.whole_word_mask(plain_text, word, encoder)
        else:
            plain_text = ss["fill_plain"] or ""
            if not plain_text.strip():
                raise LabError("empty_input")
            if len(plain_text) > fm.MAX_CHARS:
                raise LabError("too_long", length=len(plain_text), limit=fm.MAX_CHARS)
            chosen = set(ss["fill_chars"])
            raw = "".join(encoder.mask_token if i in chosen else c for i, c in enumerate(plain_text))
        masked = fm.check_masked_sentence(raw, encoder.mask_token)
        st.caption(t("fill.model_input"))
        st.code(masked, language=None, wrap_lines=True)
        fill = _fill(model_name, masked, hide_vulgar)
    except _WordMissing as missing:
        st.error(t("fill.word_missing", word=md_escape(missing)))
    except Exception as err:  # an unexpected model failure: a message, never a traceback
        show_error(err)
    typed = masked or (ss.get("fill_sentence") if mode == "masked" else ss.get("fill_plain")) or ""
    if typed.strip():
        show_text_notes(model_name, typed[: fm.MAX_CHARS])

typed_sentence = ss.get("fill_sentence") or ""
sync_to_url(
    mode=None if mode == "masked" else mode,
    sentence=masked if masked else (typed_sentence if mode == "masked" and len(typed_sentence) <= 2 * fm.MAX_CHARS
                                    else None),
    plain=ss["fill_plain"] if mode != "masked" and len(ss["fill_plain"] or "") <= 2 * fm.MAX_CHARS else None,
    word=ss["fill_word"] if mode == "word" else None,
    chars=list(ss["fill_chars"]) if mode == "chars" else None,
)


# ---- 1. top-k candidates for every mask ---------------------------------------------------------
@st.fragment
def predictions(result: fm.FillMaskResult, runs: list[fm.MaskRun]) -> None:
    st.slider(t("fill.top_k"), 1, TOP_K_MAX, key="fill_top_k")
    keep_widgets("fill_top_k")
    k = int(ss["fill_top_k"])
    sync_to_url(top_k=k)
    slots = [(t("fill.mask_title", i=slot.index + 1, pos=slot.token_index),
              [c.token for c in slot.candidates[:k]], [c.score for c in slot.candidates[:k]])
             for slot in result.masks]
    fig = figs.topk_bars(slots, xaxis_title=t("fill.prob_axis"), large=large)
    # On the projector the whole words stand beside the characters, level with them, named in their title.
    beside = bool(runs) and large
    word_slots = [((t("fill.sec.words_short") + " · " if beside else "")
                   + t("fill.word_run_title", i=run.first + 1, j=run.first + run.length),
                   [w.word for w in run.words[:k]], [w.score for w in run.words[:k]]) for run in runs]
    if beside:
        chars_area, words_area = st.columns([len(slots), len(word_slots) + 0.5], gap="large")
    else:
        chars_area = words_area = st.container()
    with chars_area:
        chart(fig, "fill_topk_chart")
    if word_slots:
        if not beside:
            words_area.subheader(t("fill.sec.words"))
        with words_area:
            chart(figs.topk_bars(word_slots, xaxis_title=t("fill.word_prob_axis"), large=large), "fill_words_chart")
        words_area.caption(t("fill.words_note", beam=fm.WORD_BEAM))
    hidden = sum(slot.hidden for slot in result.masks) + sum(run.hidden for run in runs)
    if hidden:
        st.caption(t("fill.hidden_note", n=hidden))
    totals = [float(slot.probabilities.sum()) for slot in result.masks]
    st.caption(t("fill.total_prob", totals=" · ".join(f"{x:.4f}" for x in totals)))
    rows = [{"mask": slot.index + 1, "rank": r + 1, "token": c.token, "probability": round(c.score, 6)}
            for slot in result.masks for r, c in enumerate(slot.candidates[:k])]
    col1, col2 = st.columns(2)
    # files are made on click, not on every rerun (the HTML inlines plotly.js: 4.8 MB)
    col1.download_button(t("fill.download_csv"), lambda: pd.DataFrame(rows).to_csv(index=False).encode("utf-8"),
                         file_name="fill_mask_topk.csv", mime="text/csv", on_click="ignore", key="fill_dl_csv")
    col2.download_button(t("fill.download_html"), lambda: export_html(fig), file_name="fill_mask_topk.html",
                         mime="text/html", on_click="ignore", key="fill_dl_html")


with st.container(key="fill_result"):
    st.header(t("fill.sec.predict"))
    if fill is not None:
        try:
            word_runs = _words(model_name, masked, hide_vulgar)
        except Exception as err:
            show_error(err)
            word_runs = []
        predictions(fill, word_runs)
if fill is not None:

    # ---- user candidates ------------------------------------------------------------------------
    st.subheader(t("fill.sec.compare"))
    st.text_input(t("fill.cands"), key="fill_cands", help=t("fill.cands_help"))
    keep_widgets("fill_cands")
    first = 0
    if len(fill.masks) > 1:
        if not 0 <= int(ss.get("fill_first") or 0) < len(fill.masks):
            ss["fill_first"] = 0
        first = st.selectbox(t("fill.first_mask"), list(range(len(fill.masks))), key="fill_first",
                             format_func=lambda i: t("fill.mask_n", i=i + 1))
    words = _split_words(ss["fill_cands"])
    if not words:
        st.info(t("fill.cands_empty"))
    else:
        try:
            scored = _candidates(model_name, masked, words, int(first or 0))
        except Exception as err:
            show_error(err)
            scored = []
        fitting = [s for s in scored if s["fits"]]
        if fitting:
            chart(figs.candidate_bars([s["word"] for s in fitting], [s["score"] for s in fitting],
                                                xaxis_title=t("fill.cand_axis"), large=large), "fill_cand_chart")
        table = pd.DataFrame({
            t("fill.col.word"): [s["word"] for s in scored],
            t("fill.col.score"): [s["score"] for s in scored],
            t("fill.col.per_token"): [" × ".join(f"{p:.2e}" for p in s["per_token"]) for s in scored],
            t("fill.col.fits"): [s["fits"] for s in scored],
        })
        st.dataframe(table, hide_index=True, key="fill_cand_table",
                     column_config={t("fill.col.score"): st.column_config.NumberColumn(format="%.3e")})
        if any(not s["fits"] for s in scored):
            st.caption(t("fill.cands_unfit", n=len(fill.masks) - int(first or 0)))
        st.caption(t("fill.cands_note"))
else:
    st.info(t("fill.predict_waiting"))


# ---- 2. watch BERT fill -------------------------------------------------------------------------
def _shift_step(delta: int, last: int) -> None:
    ss["fill_step"] = min(last, max(0, int(ss.get("fill_step", 0)) + delta))


@st.fragment
def replay(masked_sentence: str, mask_token: str, steps: list[fm.FillStep]) -> None:
    last = len(steps)
    if not isinstance(ss.get("fill_step"), int) or not 0 <= ss["fill_step"] <= last:
        ss["fill_step"] = 0
    c1, c2, c3 = st.columns([2, 7, 2], vertical_alignment="bottom")  # wide enough for the labels at 1280 px
    c1.button(t("fill.prev"), key="fill_prev", on_click=_shift_step, args=(-1, last), icon=":material/arrow_back:",
              disabled=ss["fill_step"] <= 0, width="stretch")
    c3.button(t("fill.next"), key="fill_next", on_click=_shift_step, args=(1, last), icon=":material/arrow_forward:",
              icon_position="right", disabled=ss["fill_step"] >= last, width="stretch")
    c2.slider(t("fill.step"), 0, max(last, 1), key="fill_step", disabled=last == 0)
    s = min(int(ss["fill_step"]), last)
    cells, kinds = figs.fill_replay_cells(masked_sentence, mask_token, steps, s)
    names = {kind: t(f"fill.strip.{kind}") for kind in STRIP_COLOURS}
    chart(figs.token_strip([cells], [kinds], colours=STRIP_COLOURS, kind_names=names,
                                     track_names=[t("fill.strip.track", s=s)], large=large), "fill_step_chart")
    if s == 0:
        st.markdown(t("fill.step0", n=last))
        return
    step = steps[s - 1]
    best = step.open_masks[step.filled_mask]
    st.markdown(t("fill.step_text", s=s, n=len(step.open_masks), j=step.filled_mask + 1,
                  token=md_escape(step.token), p=f"{step.score:.1%}"))
    st.code(step.text_after, language=None, wrap_lines=True)
    slots = [(t("fill.open_title_best" if slot is best else "fill.open_title", j=j + 1),
              [c.token for c in slot.candidates[:5]], [c.score for c in slot.candidates[:5]])
             for j, slot in enumerate(step.open_masks)]
    chart(figs.topk_bars(slots, xaxis_title=t("fill.prob_axis"), large=large), "fill_step_probs")


steps = None
with st.container(key="fill_replay_result"):
    st.header(t("fill.sec.replay"))
    st.markdown(t("fill.replay_intro"))
    if fill is not None:
        try:
            steps = _steps(model_name, masked, hide_vulgar)
        except Exception as err:
            show_error(err)
        if steps:
            replay(masked, encoder.mask_token, steps)
    else:
        st.info(t("fill.predict_waiting"))


# ---- 3. the pre-training corruption (15%: 80/10/10) ---------------------------------------------
def _resample() -> None:
    ss["fill_seed"] = int(ss.get("fill_seed", 0)) + 1


@st.fragment
def corruption(name: str) -> None:
    st.text_input(t("fill.corrupt_text"), key="fill_corrupt_text", help=t("fill.corrupt_text_help"))
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    c1.number_input(t("fill.seed"), min_value=0, max_value=1_000_000, step=1, key="fill_seed",
                    help=t("fill.seed_help"))
    c2.button(t("fill.resample"), key="fill_resample", on_click=_resample, width="stretch", icon=":material/casino:")
    keep_widgets("fill_seed", "fill_corrupt_text")
    text = (ss["fill_corrupt_text"] or "").strip()
    try:
        if len(text) > fm.MAX_CHARS:
            raise LabError("too_long", length=len(text), limit=fm.MAX_CHARS)
        tokens = _corrupt(name, text, int(ss["fill_seed"]))
    except Exception as err:
        show_error(err)
        return
    original = [tok.token for tok in tokens]
    shown = [tok.shown for tok in tokens]
    kinds_top = ["chosen" if tok.chosen else "keep" for tok in tokens]
    kinds_bottom = [tok.action for tok in tokens]
    hover = [f"{tok.token} → {tok.shown} ({t('fill.action.' + tok.action)})" for tok in tokens]
    names = {kind: t(f"fill.action.{kind}") for kind in CORRUPT_COLOURS}
    chart(figs.token_strip([original, shown], [kinds_top, kinds_bottom], colours=CORRUPT_COLOURS,
                                     kind_names=names, hover=[hover, hover],
                                     track_names=[t("fill.track.original"), t("fill.track.shown")],
                                     large=large), "fill_corrupt_chart")
    n = len(tokens)
    counts = {a: sum(tok.action == a for tok in tokens) for a in ("mask", "random", "unchanged")}
    chosen = sum(tok.chosen for tok in tokens)
    cols = st.columns(4)
    cols[0].metric(t("fill.count.chosen"), f"{chosen} / {n}",
                   help=t("fill.count.chosen_help", n=n, expected=f"{0.15 * n:.2f}", k=chosen))
    cols[1].metric(t("fill.action.mask"), counts["mask"])
    cols[2].metric(t("fill.action.random"), counts["random"])
    cols[3].metric(t("fill.action.unchanged"), counts["unchanged"])
    stats = _corrupt_stats(name, text)
    st.caption(t("fill.corrupt_stats", k=chosen, n=n, chosen=f"{stats['chosen']:.1%}", mask=f"{stats['mask']:.1%}",
                 random=f"{stats['random']:.1%}", unchanged=f"{stats['unchanged']:.1%}"))


st.header(t("fill.sec.corrupt"))
st.markdown(t("fill.corrupt_intro"))
# default text: the user's plain sentence, or the masked sentence as BERT filled it
plain_now = (ss.get("fill_plain") or "").strip()
if mode != "masked":
    source = plain_now
elif masked and figs.masks_plain(masked, encoder.mask_token, plain_now):
    source = plain_now  # the masked sentence is this plain sentence with characters masked (examples)
elif steps:
    source = steps[-1].text_after
else:
    source = (ss.get("fill_sentence") or "").replace("[MASK]", "").strip()
if source and len(source) <= fm.MAX_CHARS and ss.get("_fill_corrupt_source") != source:
    ss["_fill_corrupt_source"] = source
    ss["fill_corrupt_text"] = source
seed_widget("fill_corrupt_text", source)
if encoder is not None:
    if mode == "masked" and steps and source == steps[-1].text_after:
        st.caption(t("fill.corrupt_from_fill"))
    corruption(model_name)


# ---- 4. next-sentence prediction -----------------------------------------------------------------
st.header(t("fill.sec.nsp"))
st.markdown(t("fill.nsp_intro"))
c1, c2 = st.columns(2)
c1.text_input(t("fill.nsp_a"), key="fill_nsp_a")
c2.text_input(t("fill.nsp_b"), key="fill_nsp_b")
keep_widgets("fill_nsp_a", "fill_nsp_b")
if encoder is not None:
    first_s, second_s = (ss["fill_nsp_a"] or "").strip(), (ss["fill_nsp_b"] or "").strip()
    if not first_s or not second_s:
        st.info(t("fill.nsp_empty"))
    else:
        try:
            for part in (first_s, second_s):
                if len(part) > fm.MAX_CHARS:
                    raise LabError("too_long", length=len(part), limit=fm.MAX_CHARS)
            p = _nsp(model_name, first_s, second_s)
            show_text_notes(model_name, first_s + second_s)
            m1, m2 = st.columns(2)
            m1.metric(t("fill.nsp_is_next"), f"{p:.1%}")
            m2.metric(t("fill.nsp_not_next"), f"{1 - p:.1%}")
            st.progress(min(max(p, 0.0), 1.0), text=t("fill.nsp_bar", p=f"{p:.1%}"))
        except Exception as err:
            show_error(err)
st.caption(t("fill.nsp_note"))

if model_name:
    sync_to_url(model=model_name)
st.caption(t("fill.source"))
