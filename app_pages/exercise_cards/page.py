"""动手练一练: the lecture's two exercises as "predict, then reveal" cards.

Thin page: the student's choices and typed vector go to ``core.content.exercises`` (tolerant parsing, checks
against ``core.compute.mixing.scalar_mix``); the reference answers are the lecture's own text.
"""
from __future__ import annotations

import streamlit as st

from core.compute.mixing import format_vector
from core.content import exercises as ex
from ui.i18n import t
from ui.page import attempt, how_computed, plain_answer
from ui.presentation import scene_link
from ui.state import Field, one_of, seed, sync_to_url

ss = st.session_state
VARIANT_SCENES = {"lecture": "worked", "syntax": "syntax", "semantics": "semantics"}  # ui.lecture_scenes ids


def _vec(values) -> str:
    return format_vector(values, 2, trim=True)  # as the lecture writes answers: [0.4, 0.6, 1.0]


st.title(t("ex.title"))
if plain_answer("ex_qa", t("ex.qa")) is None:  # the box says what the intro says, for a student at home
    st.markdown(t("ex.intro"))

# ---- 1. concept: feature-based vs fine-tuning ---------------------------------------------------------
strategy_labels = {s: t(f"ex.strategy.{s}") for s in ex.STRATEGIES}
# the sorting radios' keys, one per statement and per model: "start over" clears exactly these
STATEMENT_KEYS = {item: f"ex_c_{item}" for item in ex.CONCEPT_STATEMENTS}
MODEL_KEYS = {model: f"ex_m_{model}" for model in ex.CONCEPT_MODELS}


def _reset_concept() -> None:
    for key in (*STATEMENT_KEYS.values(), *MODEL_KEYS.values()):
        ss.pop(key, None)
    ss["ex_concept_text"] = ""
    ss["ex_concept_revealed"] = False


def _reveal_concept() -> None:
    ss["ex_concept_revealed"] = True


with st.container(border=True):
    st.subheader(t("ex.concept.title"))
    st.markdown(t("ex.concept.question"))
    st.text_area(t("ex.concept.own"), key="ex_concept_text", height=110, max_chars=2000,
                 placeholder=t("ex.concept.own_placeholder"))
    st.markdown(f"**{t('ex.concept.sort')}**")
    revealed = bool(ss.get("ex_concept_revealed"))
    answers: dict[str, str | None] = {}
    for item in ex.CONCEPT_STATEMENTS:
        answers[item] = st.radio(t(f"ex.concept.stmt.{item}"), list(ex.STRATEGIES), index=None, horizontal=True,
                                 key=STATEMENT_KEYS[item], format_func=strategy_labels.__getitem__)
    st.markdown(f"**{t('ex.concept.models')}**")
    model_answers: dict[str, str | None] = {}
    model_cols = st.columns(len(ex.CONCEPT_MODELS))
    for col, model in zip(model_cols, ex.CONCEPT_MODELS):
        model_answers[model] = col.radio(t(f"ex.concept.model.{model}"), list(ex.STRATEGIES), index=None,
                                         key=MODEL_KEYS[model], format_func=strategy_labels.__getitem__)
    with st.container(horizontal=True):
        st.button(t("ex.reveal"), key="ex_concept_reveal", on_click=_reveal_concept, type="primary",
                  icon=":material/visibility:")
        st.button(t("ex.reset"), key="ex_concept_reset", on_click=_reset_concept, icon=":material/restart_alt:")

    if revealed:
        verdict = {**ex.check_concept(answers, ex.CONCEPT_STATEMENTS),
                   **ex.check_concept(model_answers, ex.CONCEPT_MODELS)}
        right = sum(v is True for v in verdict.values())
        unanswered = sum(v is None for v in verdict.values())
        st.markdown(t("ex.concept.score", right=right, total=len(verdict)))
        if unanswered:
            st.caption(t("ex.concept.unanswered", n=unanswered))
        lines = []
        for item, truth in list(ex.CONCEPT_STATEMENTS.items()) + list(ex.CONCEPT_MODELS.items()):
            key = f"ex.concept.stmt.{item}" if item in ex.CONCEPT_STATEMENTS else f"ex.concept.model.{item}"
            mark = {True: ":green[:material/check_circle:]", False: ":red[:material/cancel:]",
                    None: ":gray[:material/help:]"}[verdict[item]]
            lines.append(f"- {mark} {t(key)} → **{strategy_labels[truth]}**")
        st.markdown("\n".join(lines))
        with st.container(border=True):
            st.markdown(f"**{t('ex.reference')}**")
            st.markdown(t("ex.concept.answer"))
        scene_link("transfer", t("ex.concept.link"), ":material/science:")

# ---- 2. formula: the ELMo scalar mix ------------------------------------------------------------------
variants = list(ex.FORMULA_VARIANTS)
seed(Field("ex_variant", "variant", "lecture", one_of(*variants)))
variant_labels = {v: t(f"ex.formula.variant.{v}") for v in variants}


def _changed_variant() -> None:
    ss["ex_formula_checked"] = False
    ss["ex_formula_revealed"] = False


def _check() -> None:
    ss["ex_formula_checked"] = bool(str(ss.get("ex_formula_answer") or "").strip())


def _reveal_formula() -> None:
    ss["ex_formula_revealed"] = True


with st.container(border=True):
    st.subheader(t("ex.formula.title"))
    st.selectbox(t("ex.formula.variant"), variants, key="ex_variant", format_func=variant_labels.__getitem__,
                 on_change=_changed_variant)
    variant = ss["ex_variant"]
    sync_to_url(variant=None if variant == "lecture" else variant)
    s, gamma = ex.FORMULA_VARIANTS[variant]
    st.markdown(t("ex.formula.question" if variant == "lecture" else "ex.formula.question_variant",
                  s=_vec(s), gamma=f"{gamma:g}"))
    st.latex(r"h_0=[1,0,0],\quad h_1=[0,1,0],\quad h_2=[0,0,1]")
    st.latex(r"s=" + _vec(s).replace(", ", ",\\ ") + rf",\qquad \gamma={gamma:g}")
    st.latex(r"\mathrm{ELMo}_k = \gamma \sum_{j=0}^{L} s_j\, h_{k,j} \;=\; ?")
    st.text_input(t("ex.formula.answer"), key="ex_formula_answer", on_change=_check, max_chars=ex.MAX_INPUT_CHARS,
                  placeholder=t("ex.formula.placeholder"), help=t("ex.formula.answer_help"))
    with st.container(horizontal=True):
        st.button(t("ex.check"), key="ex_formula_check", on_click=_check, icon=":material/task_alt:")
        st.button(t("ex.reveal"), key="ex_formula_reveal", on_click=_reveal_formula, type="primary",
                  icon=":material/visibility:")

    if ss.get("ex_formula_checked"):
        typed = attempt(ex.parse_vector, ss.get("ex_formula_answer") or "")
        if typed is not None:
            checked = ex.check_formula(typed, variant)
            if checked.correct:
                st.success(t("ex.formula.right", vec=_vec(checked.answer)), icon=":material/check_circle:")
            else:
                st.warning(t("ex.formula.wrong", vec=_vec(checked.answer)) + " "
                           + t(f"ex.formula.hint.{checked.hint}"), icon=":material/lightbulb:")

    if ss.get("ex_formula_revealed"):
        expected = ex.formula_expected(variant)
        weighted = ex.formula_expected(variant, scaled=False)  # Σ s_j h_j, before γ
        with st.container(border=True):
            st.markdown(f"**{t('ex.reference')}**")
            st.markdown(t("ex.formula.step1"))
            w_tex = _vec(weighted).replace(", ", ",\\ ")
            st.latex(r"\begin{aligned} s_0 h_0 + s_1 h_1 + s_2 h_2 &= "
                     + rf"{s[0]:g}\,[1,0,0] + {s[1]:g}\,[0,1,0] + {s[2]:g}\,[0,0,1] \\ &= " + w_tex
                     + r"\end{aligned}")
            st.markdown(t("ex.formula.step2"))
            st.latex(rf"\gamma \sum_j s_j h_j = {gamma:g} \times " + w_tex + " = "
                     + _vec(expected).replace(", ", ",\\ "))
            st.markdown(t("ex.formula.conclusion", vec=_vec(expected)))
            how_computed(t("ex.formula.computed_by"))
        scene_link(VARIANT_SCENES[variant], t("ex.formula.link"), ":material/tune:")
