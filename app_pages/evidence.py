"""Evidence: the papers' layer-wise findings reproduced on our own models.

Reads the cached results (``assets/experiments.json``, written by ``python -m core.experiments``)
so that it opens instantly; the last section can recompute them with the current weights.
Sections (``ui.evidence_sections``): POS probe (Peters et al. 2018, Table 6), word-sense probe
(Peters et al. 2018, Table 5; Coenen et al. 2019), context-specificity (Ethayarajh 2019), ELMo
layer-weight presets; then recompute.
"""
from __future__ import annotations

import json

import streamlit as st

from core.experiments import run_all, stale_models, view
from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC
from ui import training_gate
from ui.budget_note import budget_note
from ui.cache import EXPERIMENT_RESULTS_KEY as RESULTS_KEY  # this session's recomputation, read by the ELMo page too
from ui.cache import experiment_results
from ui.evidence_sections import SECTIONS as SECTION_VIEWS
from ui.i18n import current_lang, error_text, t, timestamp
from ui.page import attempt, presenting
from ui.presentation import PINNED_KEY
from ui.sidebar import bert_model_name, get_model_infos
from ui.state import Field, one_of, seed, sync_to_url

SECTIONS = (*SECTION_VIEWS, "recompute")


# ---- header -----------------------------------------------------------------------------------
st.title(t("evidence.title"))
st.markdown(t("evidence.intro"))

infos, problem = get_model_infos()
if problem:
    st.warning(problem)
for info in infos or []:
    if info.name in (DEFAULT_ELMO, DEFAULT_BERT, DEFAULT_STATIC) and not info.available:
        st.warning(t("evidence.model_unavailable", reason=error_text(info.problem)))

results = attempt(experiment_results)

seed(Field("_ev_section", "section", "pos", one_of(*SECTIONS)))
# labels computed now, in the current language (a format_func calling t() later could be
# evaluated in another language, e.g. by the testing framework)
section_labels = {s: t(f"evidence.section.{s}") for s in SECTIONS}
# on the projector the sections' switch stays pinned under the scene bar (ui.presentation.PINNED_KEY): a scene's
# note asks to switch, and the switch and the section's result are then both in view
with st.container(key=PINNED_KEY if presenting() else None):
    section = st.radio(t("evidence.section.label"), SECTIONS, key="_ev_section", horizontal=True,
                       format_func=section_labels.__getitem__,
                       label_visibility="collapsed" if presenting() else "visible")
sync_to_url(section=section)

if results is not None:
    mode = t("evidence.mode.quick") if results.get("quick") else t("evidence.mode.full")
    st.caption(t("evidence.provenance", created=timestamp(results.get("created", "?")), mode=mode,
                 seconds=f"{results.get('timing_seconds', {}).get('total', 0):.0f}"))
    if st.session_state.get(RESULTS_KEY):
        st.info(t("evidence.session_results"))
    stale = stale_models(results)
    if stale:
        st.info(t("evidence.stale", models=", ".join(stale)))
    budget_note(*(m for m in results.get("requested_models", []) if m != DEFAULT_STATIC))
    for name, reason in view.skipped(results).items():
        st.caption(t("evidence.skipped", name=name, reason=(reason or {}).get(current_lang(), "?")))
elif section != "recompute":
    st.info(t("evidence.no_results"))


# ---- ⑤ recompute ----------------------------------------------------------------------------------
def recompute_section(results: dict | None) -> None:
    st.subheader(t("evidence.recompute.title"))
    st.markdown(t("evidence.recompute.text"))
    models = [DEFAULT_ELMO, DEFAULT_BERT]  # the embedded ones: a run on a large model takes the server for long
    st.caption(t("evidence.recompute.models", models=", ".join(models + [DEFAULT_STATIC])))
    chosen = bert_model_name()
    if chosen and chosen != DEFAULT_BERT:
        st.caption(t("evidence.recompute.fixed_model", chosen=chosen, bert=DEFAULT_BERT))
    seed(Field("_ev_quick", "quick", True, bool))
    quick = st.toggle(t("evidence.recompute.quick"), key="_ev_quick")
    sync_to_url(quick=quick)
    if training_gate.button(t("evidence.recompute.button"), key="_ev_run"):
        bar = st.empty()  # drawn by the first report: a refused run shows none

        def progress(fraction: float, text: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=f"{t('evidence.recompute.running')} {text}")

        fresh = training_gate.run(run_all, models, static=DEFAULT_STATIC, quick=quick, progress=progress)
        if fresh is not None:
            st.session_state[RESULTS_KEY] = fresh
            st.session_state["_ev_done"] = fresh["timing_seconds"]["total"]
            st.rerun()  # redraw the whole page (provenance line included) from the new results
    done = st.session_state.pop("_ev_done", None)
    if done is not None:
        st.success(t("evidence.recompute.done", seconds=f"{done:.0f}"))
    if st.session_state.get(RESULTS_KEY) and st.button(t("evidence.recompute.reset"), key="_ev_reset"):
        del st.session_state[RESULTS_KEY]
        st.rerun()
    if results is not None:
        st.download_button(t("evidence.download_json"), lambda: json.dumps(results, ensure_ascii=False, indent=1),
                           file_name="experiments.json", mime="application/json", on_click="ignore", key="dl_json")


if section == "recompute":
    recompute_section(results)
elif results is not None:
    try:
        SECTION_VIEWS[section](results)
    except (KeyError, TypeError, IndexError) as exc:  # a results file from an older format
        st.error(t("evidence.bad_results", detail=type(exc).__name__))
