"""The fill-mask page's sections: ① the top-k candidates of every mask (and of every run of masks as whole
words) and ② BERT filling the masks one at a time render the page's ``core.fillmask.view.FillView``; the
sub-experiments — the user's own candidate words, ③ the 15% / 80-10-10 pre-training corruption, ④ next-sentence
prediction — are ``ui.page.experiment`` fragments with their own inputs and one cached core call each
(``ui.cache.model_call``). Sliders only slice results.
"""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from core.attention.view import TextNotes, inspect_text
from core.compute.stats import Accuracy
from core.content.budgets import TRAINING_FILE, load_budgets
from core.figures import predictions as figs
from core.figures.style import export_html
from core.fillmask import confidence as fc
from core.fillmask import examples as fx
from core.fillmask.iterative import FillStep
from core.fillmask.masks import MAX_CHARS
from core.fillmask.prediction import MaskSlot
from core.fillmask.scoring import candidate_scores
from core.fillmask.view import FillView, corruption_view, next_sentence_view
from core.fillmask.words import WORD_BEAM
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from core.models.cache import ModelRef
from ui import presentation
from ui.cache import file_result, model_call
from ui.i18n import t
from ui.page import chart, experiment, how_computed, phone, presenting
from ui.state import Field, follow, in_range, seed, sync_to_url

TOP_K_MAX = 20
STRIP_COLOURS = {"text": "#f2f2f2", "open": "#bdbdbd", "filled": "#9ecae1", "new": "#fdae6b"}
CORRUPT_COLOURS = {"keep": "#f2f2f2", "chosen": "#fdd49e", "mask": "#bdbdbd", "random": "#fc9272",
                   "unchanged": "#a1d99b"}
ss = st.session_state
# the sections' own values, seeded by the page with its own (page.py)
FIELDS = (Field("fill_seed", None, 0, int),
          Field("fill_nsp_a", None, fx.NSP_EXAMPLES[0].first), Field("fill_nsp_b", None, fx.NSP_EXAMPLES[0].second))


def show_text_notes(model: ModelRef, text: str) -> None:
    """Warn about what the model cannot see in ``text``: [UNK] characters, control characters."""
    _notes(model_call(inspect_text, model, text), model)


def _notes(notes: TextNotes, model: ModelRef) -> None:
    if notes.unknown:
        st.warning(t("fill.unknown_chars", chars=md_escape(" ".join(notes.unknown)), model=md_escape(model.name)))
    if notes.control:
        st.info(t("fill.control_chars", chars=", ".join(notes.control)))


def _slots(masks: list[MaskSlot], k: int, title) -> list[tuple[str, list[str], list[float]]]:
    return [(title(j, slot), [c.token for c in slot.candidates[:k]], [c.score for c in slot.candidates[:k]])
            for j, slot in enumerate(masks)]


# ---- how sure the model is: its size and record in one line, a signal at every gap ------------------------
def _calibration() -> fc.Calibration | None:
    try:
        return file_result(fc.load, fc.CONFIDENCE_FILE)
    except LabError:  # an unreadable file: the page still predicts, without the record
        return None


def model_limits(name: str | None) -> None:
    """One visible line: the model is small, and how often its first answer is right on everyday sentences."""
    calibration = _calibration()
    if calibration is None:
        return
    right, top3, n = calibration.on_set("everyday_check")
    st.markdown(t("fill.limits", model=md_escape(calibration.model), params=f"{calibration.parameters:,}",
                  layers=calibration.layers, n=n, right=right, top3=top3))
    if name and name != calibration.model:
        st.caption(t("fill.limits_other", cal=md_escape(calibration.model), model=md_escape(name)))


def confidence(view: FillView) -> None:
    """How sure the model is at every gap, from its distribution, and how often answers that sure were right on
    held-out sentences: a warning where the first answer is not to be trusted."""
    calibration = _calibration()
    if calibration is None or not view.signals:
        return
    several = len(view.signals) > 1
    for i, signal in enumerate(view.signals, 1):
        level, kind = calibration.level(signal), fc.kind_of(signal.length)
        text = t(f"fill.conf.{level}", gap=t("fill.conf.gap", i=i) if several else "", answer=md_escape(signal.answer),
                 p=f"{signal.top1:.1%}", margin=f"{100 * signal.margin:.1f}", h=f"{signal.entropy:.1f}",
                 record=_record(calibration.record(kind, level), kind))
        (st.info if level == "sure" else st.warning)(text, icon=":material/psychology:" if level == "sure" else None)
    st.caption(t("fill.conf.levels", chars=_ranges(calibration, "character"), words=_ranges(calibration, "word"),
                 fit_n=calibration.fitting_sentences(), held_n=calibration.heldout_sentences()))
    how_computed(t("fill.conf.source"))


def _record(record: Accuracy | None, kind: str) -> str:
    """What a sureness level means: how often its answers of this kind were right on the held-out sentences."""
    if record is None:
        return t("fill.conf.unmeasured", kind=t(f"fill.conf.kind.{kind}"))
    low, high = record.interval
    return t("fill.conf.record", kind=t(f"fill.conf.kind.{kind}"), n=record.n, right=f"{record.right:g}",
             share=record.percent(), low=f"{low:.0%}", high=f"{high:.0%}")


def _ranges(calibration: fc.Calibration, kind: str) -> str:
    """"fairly sure ≥ 38.4%, a guess < 38.4%": the levels of one kind of gap and where they start."""
    ranges = calibration.ranges(kind)
    parts = [t("fill.conf.at_least", level=t(f"fill.conf.name.{level}"), p=f"{lowest:.1%}")
             for level, lowest in ranges[:-1]]
    if len(ranges) > 1:
        parts.append(t("fill.conf.below", level=t(f"fill.conf.name.{ranges[-1][0]}"), p=f"{ranges[-2][1]:.1%}"))
    else:
        parts.append(t(f"fill.conf.name.{ranges[0][0]}"))
    return t("fill.conf.join").join(parts)


# ---- ① top-k candidates for every mask, and the user's own candidates --------------------------------
@presentation.fragment
def predictions(view: FillView) -> None:
    result, runs, large = view.result, view.runs, presenting()
    with st.container(key="fill_topk"):  # the scene "fill": the slider and the charts, wholly below the scene bar
        st.slider(t("fill.top_k"), 1, TOP_K_MAX, key="fill_top_k", persist_state="session")
        k = int(ss["fill_top_k"])
        sync_to_url(top_k=k)
        slots = _slots(result.masks, k, lambda _, slot: t("fill.mask_title", i=slot.index + 1, pos=slot.token_index))
        cols = 1 if phone() else None  # side by side, a phone cuts the bars' labels
        fig = figs.topk_bars(slots, xaxis_title=t("fill.prob_axis"), large=large, cols=cols)
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
            with words_area:
                if not beside:
                    st.subheader(t("fill.sec.words"))
                chart(figs.topk_bars(word_slots, xaxis_title=t("fill.word_prob_axis"), large=large, cols=cols),
                      "fill_words_chart")
    if word_slots:
        st.caption(t("fill.words_note", beam=WORD_BEAM))
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


def answer_check(view: FillView) -> None:
    """Beside the predictions of a sentence the data knows: did the model find an accepted answer?"""
    known, proposed = view.known, view.proposals
    if known is None or not proposed:
        return
    answers = "、".join(md_escape(a) for a in known.accepted)
    rank = fx.answer_rank(proposed, known.accepted)
    params = dict(answers=answers, top=md_escape(proposed[0]), n=len(proposed), rank=rank,
                  word=md_escape(proposed[rank - 1]) if rank else "")
    if rank == 1:
        st.success(t("fill.answer_hit", **params))
    else:  # the model's first choice is wrong: said next to it, whether an accepted answer comes later or not
        st.warning(t("fill.answer_later" if rank else "fill.answer_miss", **params))


def _percent(p: float) -> str:
    return f"{p:.2%}" if p >= 1e-4 else "< 0.01%"




def _split_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w.strip() for w in re.split(r"[,，、;；\s]+", text or "") if w.strip()))[:12]


def _own_candidates(masked: str) -> None:
    """The candidate box belongs to its sentence: another sentence starts it again, from the words the data
    offers for that sentence (the default sentence's 苹果,水果,公司), else empty."""
    follow("fill_cands", masked, ",".join(fx.candidates_for(masked)))


@experiment
def compare_candidates(model: ModelRef, masked: str, mask_count: int) -> None:
    st.subheader(t("fill.sec.compare"))
    _own_candidates(masked)
    st.text_input(t("fill.cands"), key="fill_cands", persist_state="session", help=t("fill.cands_help"),
                  placeholder=t("fill.cands_placeholder"))
    first = 0
    if mask_count > 1:
        seed(Field("fill_first", None, 0, in_range(0, mask_count - 1)))
        first = int(st.selectbox(t("fill.first_mask"), list(range(mask_count)), key="fill_first",
                                 format_func=lambda i: t("fill.mask_n", i=i + 1)) or 0)
    words = _split_words(ss["fill_cands"])
    if not words:
        st.info(t("fill.cands_empty"))
        return
    scored = model_call(candidate_scores, model, masked, list(words), first_mask=first)
    fitting = [(s.word, s.score) for s in scored if s.score is not None]
    if fitting:
        chart(figs.candidate_bars([word for word, _ in fitting], [score for _, score in fitting],
                                  xaxis_title=t("fill.cand_axis"), large=presenting()), "fill_cand_chart")
    # a plain table of words: a screen reader reads each cell as shown (a data grid read the raw floats and "true")
    table = pd.DataFrame({
        t("fill.col.word"): [md_escape(s.word) for s in scored],
        t("fill.col.score"): [figs.score_text(s.score) if s.score is not None else t("fill.col.unfit") for s in scored],
        t("fill.col.per_token"): [" × ".join(_percent(p) for p in s.per_token) for s in scored],
        t("fill.col.fits"): [t("fill.col.fits_yes") if s.fits else t("fill.col.fits_no") for s in scored],
    })
    st.table(table, hide_index=True, border="horizontal")
    if any(not s.fits for s in scored):
        st.caption(t("fill.cands_unfit", n=mask_count - first))
    st.caption(t("fill.cands_note"))


# ---- ② watch BERT fill ------------------------------------------------------------------------------
def _shift_step(delta: int, last: int) -> None:
    ss["fill_step"] = min(last, max(0, ss["fill_step"] + delta))


@presentation.fragment
def replay(masked: str, mask_token: str, steps: list[FillStep]) -> None:
    last = len(steps)
    seed(Field("fill_step", None, 0, in_range(0, last)))
    # the step's buttons name what they do: the scene bar's "Next" beside them changes the scene
    c1, c2, c3 = st.columns([3, 5, 3], vertical_alignment="bottom")  # wide enough for the labels at 1280 px
    c1.button(t("fill.prev"), key="fill_prev", on_click=_shift_step, args=(-1, last), icon=":material/undo:",
              disabled=ss["fill_step"] <= 0, width="stretch")
    c3.button(t("fill.next"), key="fill_next", on_click=_shift_step, args=(1, last), icon=":material/edit_note:",
              icon_position="right", disabled=ss["fill_step"] >= last, width="stretch")
    c2.slider(t("fill.step"), 0, max(last, 1), key="fill_step", disabled=last == 0)
    s = min(int(ss["fill_step"]), last)
    large = presenting()
    cells, kinds = figs.fill_replay_cells(masked, mask_token, steps, s)
    names = {kind: t(f"fill.strip.{kind}") for kind in STRIP_COLOURS}
    chart(figs.token_strip([cells], [kinds], colours=STRIP_COLOURS, kind_names=names,
                           track_names=[t("fill.strip.track", s=s)], large=large, narrow=phone()), "fill_step_chart")
    # the step's evidence, which the buttons and the slider drive (ui.presentation.INPUT_RESULTS): its candidates
    with st.container(key="fill_step_result"):
        if s == 0:
            st.markdown(t("fill.step0", n=last))
            return
        step = steps[s - 1]
        st.markdown(t("fill.step_text", s=s, n=len(step.open_masks), j=step.filled_mask + 1,
                      token=md_escape(step.token), p=f"{step.score:.1%}"))
        st.code(step.text_after, language=None, wrap_lines=True)
        slots = _slots(step.open_masks, 5, lambda j, _: t("fill.open_title_best" if j == step.filled_mask
                                                           else "fill.open_title", j=j + 1))
        chart(figs.topk_bars(slots, xaxis_title=t("fill.prob_axis"), large=large, cols=1 if phone() else None),
              "fill_step_probs")


# ---- ③ the pre-training corruption (15%: 80/10/10) ---------------------------------------------------
def _resample() -> None:
    ss["fill_seed"] += 1


def whole_word_note(name: str | None) -> None:
    """Where the masking is explained: that ``name`` was pre-trained with whole-word masking, if it was."""
    budget = file_result(load_budgets, TRAINING_FILE).get(name or "")
    if budget and budget.whole_word:
        st.caption(t("fill.wwm_note", model=md_escape(name), share=f"{budget.whole_word:.0%}"))


def corruption(model: ModelRef, source: str | None, default: str, origin: str | None) -> None:
    """The corruption of the text box's sentence. ``source`` is a true sentence put into the box when it
    changes (None: the box keeps its text, ``default`` at first); ``origin`` says where it came from:
    "plain" (the user's sentence), "answer" (the data's answer to the masked sentence), "unknown" (a
    masked sentence the data does not know, so nothing is filled in)."""
    if source and len(source) <= MAX_CHARS:
        follow("fill_corrupt_text", source, source)
    seed(Field("fill_corrupt_text", None, source or default))
    if origin in ("answer", "unknown"):
        st.caption(t(f"fill.corrupt_from_{origin}"))
    _corruption(model)


@experiment
def _corruption(model: ModelRef) -> None:
    st.text_input(t("fill.corrupt_text"), key="fill_corrupt_text", persist_state="session",
                  help=t("fill.corrupt_text_help"))
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    c1.number_input(t("fill.seed"), min_value=0, max_value=1_000_000, step=1, key="fill_seed", persist_state="session",
                    help=t("fill.seed_help"))
    c2.button(t("fill.resample"), key="fill_resample", on_click=_resample, width="stretch", icon=":material/casino:")
    text = (ss["fill_corrupt_text"] or "").strip()
    corrupted = model_call(corruption_view, model, text, seed=int(ss["fill_seed"]))
    tokens, stats = corrupted.tokens, corrupted.stats
    hover = [f"{tok.token} → {tok.shown} ({t('fill.action.' + tok.action)})" for tok in tokens]
    chart(figs.token_strip([[tok.token for tok in tokens], [tok.shown for tok in tokens]],
                           [["chosen" if tok.chosen else "keep" for tok in tokens], [tok.action for tok in tokens]],
                           colours=CORRUPT_COLOURS,
                           kind_names={kind: t(f"fill.action.{kind}") for kind in CORRUPT_COLOURS},
                           hover=[hover, hover], track_names=[t("fill.track.original"), t("fill.track.shown")],
                           large=presenting(), narrow=phone()), "fill_corrupt_chart")
    n, chosen = len(tokens), corrupted.chosen
    cols = st.columns(4)
    cols[0].metric(t("fill.count.chosen"), f"{chosen} / {n}",
                   help=t("fill.count.chosen_help", n=n, expected=f"{0.15 * n:.2f}", k=chosen))
    for col, action in zip(cols[1:], ("mask", "random", "unchanged")):
        col.metric(t(f"fill.action.{action}"), corrupted.count(action))
    st.caption(t("fill.corrupt_stats", k=chosen, n=n, chosen=f"{stats['chosen']:.1%}", mask=f"{stats['mask']:.1%}",
                 random=f"{stats['random']:.1%}", unchanged=f"{stats['unchanged']:.1%}"))


# ---- ④ next-sentence prediction ----------------------------------------------------------------------
def _use_nsp_example() -> None:
    choice = ss.get("fill_nsp_example")
    if choice is not None:
        ss["fill_nsp_a"], ss["fill_nsp_b"] = fx.NSP_EXAMPLES[choice].first, fx.NSP_EXAMPLES[choice].second
        ss["fill_nsp_example"] = None


def _nsp_option(i: int) -> str:
    pair = fx.NSP_EXAMPLES[i]
    return t("fill.nsp_option", label=t("fill.nsp_label." + ("next" if pair.is_next else "random")),
             a=pair.first, b=pair.second)


@experiment
def next_sentence(model: ModelRef | None) -> None:
    st.selectbox(t("fill.nsp_example"), list(range(len(fx.NSP_EXAMPLES))), index=None, key="fill_nsp_example",
                 placeholder=t("fill.example_placeholder"), on_change=_use_nsp_example, format_func=_nsp_option)
    c1, c2 = st.columns(2)
    c1.text_input(t("fill.nsp_a"), key="fill_nsp_a", persist_state="session")
    c2.text_input(t("fill.nsp_b"), key="fill_nsp_b", persist_state="session")
    if model is None:
        return
    first, second = (ss["fill_nsp_a"] or "").strip(), (ss["fill_nsp_b"] or "").strip()
    if not first or not second:
        st.info(t("fill.nsp_empty"))
        return
    nsp = model_call(next_sentence_view, model, first, second)
    _notes(nsp.notes, model)
    p = nsp.p_next
    m1, m2 = st.columns(2)
    m1.metric(t("fill.nsp_is_next"), f"{p:.1%}")
    m2.metric(t("fill.nsp_not_next"), f"{1 - p:.1%}")
    st.progress(min(max(p, 0.0), 1.0), text=t("fill.nsp_bar", p=f"{p:.1%}"))
    if nsp.label is not None:  # an example pair: its label is data, the model's verdict is computed
        verdict = t("fill.nsp_verdict", label=t("fill.nsp_label." + ("next" if nsp.label else "random")),
                    judged="IsNext" if nsp.judged_next else "NotNext", p=f"{p:.1%}")
        right = nsp.judged_next == nsp.label
        (st.success if right else st.warning)(verdict + t("fill.nsp_right" if right else "fill.nsp_wrong"))
