"""The pre-training objectives page's sections: ① the biLM's forward and backward predictions of every
character, ② how far a shared character's vector moves when only the right context changes (shallow vs
deep bidirectionality), ③ left-to-right vs masked prediction of one position. Model work goes through
``ui.cache`` (once per model and text); the selectors only slice it.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from core.attention.view import inspect_text
from core.figures import predictions as prediction_figs
from core.figures.evidence import KIND_COLOURS, Series, layer_curves, word_heatmap
from core.figures.objectives import position_bars
from core.guard.safe_text import md_escape
from core.interface import api
from core.models.cache import ModelRef
from core.models.catalogue import DEFAULT_ELMO
from core.views import objectives as obj
from ui import cache
from ui.budget_note import budget_note
from ui.cache import model_call
from ui.i18n import t
from ui.page import chart, experiment, model_or_message, phone, plain_answer, presenting, unfolded
from ui.state import Field, in_range, seed, sync_to_url

DEFAULT_POSITION = 5  # 苹 in 我吃了一个苹果: hard from the left alone, easy with 果 in view
FORWARD_COLOUR, BACKWARD_COLOUR = KIND_COLOURS["elmo"], "#f4a6a6"  # the two halves of ELMo: vermillion, light red
STRIP_COLOURS = {"seen": "#f2f2f2", "target": "#fdae6b", "hidden": "#9ca3af"}
CONTEXT_SHOWN = 8  # characters of context quoted in a chart title
ss = st.session_state


def _position(field: Field, n: int) -> int:
    """``field``'s position, seeded inside the current sentence of ``n`` tokens (the URL's or an old one may not
    fit: then the default, or the first token)."""
    seed(replace(field, default=field.default if field.default < n else 0, cast=in_range(0, n - 1)))
    return ss[field.key]


def _pct(p: float | None) -> str:
    return "—" if p is None else f"{p:.1%}" if p >= 0.001 else f"{p:.1e}"


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def _clip(text: str, keep_end: bool) -> str:
    """At most CONTEXT_SHOWN characters of context: the end of a left context, the start of a right one."""
    if len(text) <= CONTEXT_SHOWN:
        return text
    return "…" + text[-CONTEXT_SHOWN:] if keep_end else text[:CONTEXT_SHOWN] + "…"


def _layer_names(kind: str, layers: int) -> list[str]:
    return [t(f"evidence.layer0.{kind}") if j == 0 else t("evidence.layer_j", j=j) for j in range(layers)]


def _top(prediction: obj.Prediction, k: int) -> str:
    return " · ".join(f"{c.token} {c.score:.0%}" for c in prediction.candidates[:k])


def _bars(named: list[tuple[str, obj.Prediction]], token: str, top_k: int, key: str) -> None:
    """Two models' guesses at one position, side by side on one probability scale, the real ``token`` marked
    with its rank (added below the top k when it is not among them)."""
    slots, truth = [], []
    for name, prediction in named:
        tokens, scores, real = obj.shown_candidates(prediction, token, top_k)
        slots.append((name, tokens, scores))
        truth.append(None if real is None else (real, t("obj.true_tick", token=token, rank=prediction.rank)))
    chart(prediction_figs.topk_bars(slots, xaxis_title=t("obj.candidate_axis"), large=presenting(),
                                    cols=1 if phone() else None, shared_x=True, truth=truth), key)


def show_text_notes(elmo: ModelRef, text: str) -> None:
    """What the models cannot see in ``text`` ([UNK], control characters), and a note for non-Chinese text."""
    notes = model_call(inspect_text, elmo, text)
    if notes.unknown:
        st.warning(t("fill.unknown_chars", chars=md_escape(" ".join(notes.unknown)), model=md_escape(elmo.name)))
    if notes.control:
        st.info(t("fill.control_chars", chars=", ".join(notes.control)))
    if not obj.is_chinese(text):
        st.info(t("obj.latin_note"))


def reading_of(typed: str) -> obj.BiLMReading:
    """mini-elmo-zh's reading of the sentence ``typed`` (checked: a bad one raises a LabError saying why),
    after saying what the models cannot see in it."""
    text = obj.check_sentence(typed)
    elmo = cache.model(DEFAULT_ELMO)
    show_text_notes(elmo, text)
    return model_call(obj.bilm_reading, elmo, text)


# ---- ① the biLM's two directions, character by character ---------------------------------------------
def bilm_section(reading: obj.BiLMReading, top_k: int) -> None:
    large = presenting()
    n = len(reading.tokens)
    forward_ll, backward_ll = reading.log_likelihood("forward"), reading.log_likelihood("backward")
    m1, m2, m3 = st.columns(3)
    m1.metric(t("obj.ll.forward"), f"{forward_ll:.2f}", help=t("obj.ll.help"))
    m2.metric(t("obj.ll.backward"), f"{backward_ll:.2f}", help=t("obj.ll.help"))
    m3.metric(t("obj.ll.sum"), f"{forward_ll + backward_ll:.2f}", help=t("obj.ll.help"))
    position = _position(Field("obj_pos", "pos", DEFAULT_POSITION), n)
    with st.container(key="obj_bilm_result"):  # the scene "bilm": every character's two probabilities
        st.subheader(t("obj.prob.title"))
        chart(position_bars(
            reading.tokens, [(t("obj.series.forward"), [p.actual for p in reading.forward], FORWARD_COLOUR),
                             (t("obj.series.backward"), [p.actual for p in reading.backward], BACKWARD_COLOUR)],
            yaxis_title=t("obj.prob_axis"), highlight=position, large=large), "obj_prob_chart")
    st.selectbox(t("obj.pos"), list(range(n)), key="obj_pos", persist_state="session",
                 format_func=lambda i: t("obj.pos_option", i=i + 1, token=reading.tokens[i]))
    position = int(ss["obj_pos"])
    sync_to_url(pos=position)
    start, end = reading.offsets[position]
    forward, backward = reading.forward[position], reading.backward[position]
    left, right = reading.text[:start], reading.text[end:]
    token = reading.tokens[position]
    _bars([(t("obj.slot.forward", left=_clip(left, True) or t("obj.start")), forward),
           (t("obj.slot.backward", right=_clip(right, False) or t("obj.end")), backward)], token, top_k,
          "obj_topk_chart")
    if forward.actual is None:
        st.caption(md_escape(token) + " " + t("obj.unknown_actual"))
    else:
        st.caption(t("obj.actual_note", token=md_escape(token), fp=_pct(forward.actual), fr=_rank(forward.rank),
                     bp=_pct(backward.actual), br=_rank(backward.rank)))
    hidden = forward.hidden + backward.hidden
    if hidden:
        st.caption(t("obj.hidden_note", n=hidden))
    st.markdown(t("obj.bilm.read"))
    st.subheader(t("obj.table.title"))
    st.dataframe(pd.DataFrame({
        t("obj.col.pos"): list(range(1, n + 1)),
        t("obj.col.token"): reading.tokens,
        t("obj.col.fwd_top"): [_top(p, top_k) for p in reading.forward],
        t("obj.col.fwd_p"): [_pct(p.actual) for p in reading.forward],
        t("obj.col.fwd_rank"): [_rank(p.rank) for p in reading.forward],
        t("obj.col.bwd_top"): [_top(p, top_k) for p in reading.backward],
        t("obj.col.bwd_p"): [_pct(p.actual) for p in reading.backward],
        t("obj.col.bwd_rank"): [_rank(p.rank) for p in reading.backward],
    }), hide_index=True, key="obj_table")


def _movement(bert: ModelRef, text_a: str, text_b: str) -> obj.RightContextMovement:
    """② on two checked sentences, each model's encodings cached."""
    elmo_pair = cache.encode(cache.model(DEFAULT_ELMO), (text_a, text_b))
    return obj.right_context_movement(elmo_pair, cache.encode(bert, (text_a, text_b)))


def answer_box():
    """The page's question and answer for a student at home (issue #44); None on the projector. ② adds its reading
    into it (:func:`deep_section`): the answer's figures are ②'s own, for the pair and character ② shows."""
    return plain_answer("obj_qa", t("obj.qa"))


# ---- ② shallow concatenation vs deep bidirectionality -------------------------------------------------
@experiment
def deep_section(bert_name: str | None, answer) -> None:
    """② and, into the page's ``answer`` box above (:func:`answer_box`; None: none), its plain reading: this
    fragment writes it there, so that it follows every change of ② and says what ②'s figures say."""
    large = presenting()
    st.header(t("obj.deep.title"))
    st.markdown(t("obj.deep.text"))
    with st.container(border=True):
        c1, c2 = st.columns(2)
        c1.text_input(t("obj.text_a"), key="obj_text_a", persist_state="session",
                      help=t("obj.pair_help", limit=obj.MAX_CHARS))
        c2.text_input(t("obj.text_b"), key="obj_text_b", persist_state="session",
                      help=t("obj.pair_help", limit=obj.MAX_CHARS))
        st.radio(t("obj.metric"), obj.METRICS, key="obj_metric", persist_state="session", horizontal=True,
                 format_func=lambda m: t(f"obj.metric.{m}"))
    typed_a, typed_b, metric = ss["obj_text_a"] or "", ss["obj_text_b"] or "", ss["obj_metric"]
    sync_to_url(a=typed_a if len(typed_a) <= 2 * obj.MAX_CHARS else None,
                b=typed_b if len(typed_b) <= 2 * obj.MAX_CHARS else None, metric=None if metric == "cosine" else metric)

    if (bert := model_or_message(bert_name, t("obj.no_model"), masked_lm=True)) is not None:
        moved = _movement(bert, *obj.check_pair(typed_a, typed_b))
        fwd, bwd, brt = moved.elmo_forward[metric], moved.elmo_backward[metric], moved.bert[metric]
        st.caption(t("obj.shared", shared=md_escape(moved.shared), n=len(moved.tokens)))
        with st.container(key="obj_deep_result"):
            # the metrics read the curves below (one character), so that the class can check them on the chart
            token = _position(Field("obj_token", "token", 0), len(moved.tokens))
            char = md_escape(moved.tokens[token])
            reading = obj.deep_reading(moved, metric, token)
            shown = {"forward": f"{reading.forward:.3g}", "backward": f"{reading.backward:.3f}",
                     "bert": f"{reading.bert:.3f}"}
            m1, m2, m3 = st.columns(3)
            m1.metric(t("obj.m.forward", token=char), shown["forward"], help=t("obj.m.forward_help"))
            m2.metric(t("obj.m.backward", token=char), shown["backward"], help=t("obj.m.min_help"))
            m3.metric(t("obj.m.bert", token=char), shown["bert"], help=t("obj.m.min_help"))
            if answer is not None:
                answer.markdown(t(f"obj.qa.reading.{reading.verdict}", a=md_escape(moved.text_a),
                                  b=md_escape(moved.text_b), shared=md_escape(moved.shared), token=char,
                                  metric=t(f"obj.metric.{metric}"), **shown))
            series = [Series(t("obj.series.elmo_fwd", model=DEFAULT_ELMO), _layer_names("elmo", len(fwd)),
                             fwd[:, token].tolist(), "elmo", "dash"),
                      Series(t("obj.series.elmo_bwd", model=DEFAULT_ELMO), _layer_names("elmo", len(bwd)),
                             bwd[:, token].tolist(), "elmo"),
                      Series(bert.name, _layer_names("bert", len(brt)), brt[:, token].tolist(), "bert")]
            chart(layer_curves(series, title=t("obj.curve.title", token=moved.tokens[token]),
                               xaxis_title=t("obj.layer_axis"), yaxis_title=t(f"obj.metric.{metric}"),
                               percent=False, large=large, height=430 if large else 520), "obj_move_chart")
        # below the curves: the metrics and the whole chart fit below the scene bar at 1280×720
        st.selectbox(t("obj.token"), list(range(len(moved.tokens))), key="obj_token", persist_state="session",
                     format_func=lambda i: t("obj.token_option", i=i + 1, token=moved.tokens[i]))
        sync_to_url(token=int(ss["obj_token"]))
        st.markdown(t("obj.deep.read"))
        columns = ([t("obj.heat.fwd", j=j) for j in range(1, len(fwd))]
                   + [t("obj.heat.bwd", j=j) for j in range(1, len(bwd))]
                   + [t("obj.heat.bert", j=j) for j in range(1, len(brt))])
        values = [[*fwd[1:, i], *bwd[1:, i], *brt[1:, i]] for i in range(len(moved.tokens))]
        if unfolded(t("page.show", what=t("obj.heat.title")), "obj_show_heatmap"):  # cramped on a phone
            st.markdown(f"**{t('obj.heat.title')}**")
            chart(word_heatmap(moved.tokens, columns, values, colorbar_title=t(f"obj.metric.{metric}"), zrange=None,
                               large=large), "obj_move_heatmap")


# ---- ③ left to right (GPT-style) vs masked (BERT) ------------------------------------------------------
@experiment
def gpt_section(bert_name: str | None, top_k: int) -> None:
    large = presenting()
    st.header(t("obj.gpt.title"))
    st.info(t("obj.gpt.honest"), icon=":material/info:")
    st.markdown(t("obj.gpt.text"))
    st.text_input(t("obj.sentence"), key="obj_gpt_sentence", persist_state="session",
                  help=t("obj.gpt.sentence_help", limit=obj.MAX_CHARS))
    typed = ss["obj_gpt_sentence"] or ""
    sync_to_url(gpt_sentence=typed if len(typed) <= 2 * obj.MAX_CHARS else None)
    reading = reading_of(typed)  # a bad sentence: the message stands here, under its box
    if (bert := model_or_message(bert_name, t("obj.no_model"), masked_lm=True)) is not None:
        n = len(reading.tokens)
        _position(Field("obj_mask_pos", "mask", DEFAULT_POSITION), n)
        st.selectbox(t("obj.mask_pos"), list(range(n)), key="obj_mask_pos", persist_state="session",
                     format_func=lambda i: t("obj.pos_option", i=i + 1, token=reading.tokens[i]))
        position = int(ss["obj_mask_pos"])
        sync_to_url(mask=position)
        token = reading.tokens[position]
        # BERT's prediction of each position: the count of positions where it is surer
        every = model_call(obj.masked_readings, bert, reading.text, tuple(reading.offsets), tuple(reading.tokens))
        masked = every[position]
        left = reading.forward[position]
        before, after = reading.tokens[:position], reading.tokens[position + 1:]
        with st.container(key="obj_gpt_result"):
            chart(prediction_figs.token_strip(
                [before + ["？"] + after, before + [api.load_masked_lm(bert).mask_token] + after],
                [["seen"] * len(before) + ["target"] + ["hidden"] * len(after),
                 ["seen"] * len(before) + ["target"] + ["seen"] * len(after)],
                colours=STRIP_COLOURS, kind_names={kind: t(f"obj.kind.{kind}") for kind in STRIP_COLOURS},
                track_names=[t("obj.track.left"), t("obj.track.masked", model=bert_name)], large=large,
                narrow=phone()),
                  "obj_gpt_strip")
            _bars([(t("obj.slot.left"), left), (t("obj.slot.masked", model=bert_name), masked)], token, top_k,
                  "obj_gpt_chart")
            st.caption(t("obj.gpt.note", token=md_escape(token), lp=_pct(left.actual), lr=_rank(left.rank),
                         mp=_pct(masked.actual), mr=_rank(masked.rank)))
        if left.hidden + masked.hidden:
            st.caption(t("obj.hidden_note", n=left.hidden + masked.hidden))
        surer, others = obj.surer_positions(reading.forward, every)
        count = t("obj.gpt.count", model=bert_name, surer=len(surer), n=len(surer) + len(others))
        if others:
            chars = md_escape(" ".join(reading.tokens[k] for k in others))
            count += "  \n" + t("obj.gpt.count_left", chars=chars)
        st.markdown(count)
        budget_note(DEFAULT_ELMO, bert_name)
        st.markdown(t("obj.gpt.read"))
