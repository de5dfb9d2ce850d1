"""Evidence: the papers' layer-wise findings reproduced on our own models.

Reads the cached results (``assets/experiments.json``, written by ``python -m core.experiments``)
so that it opens instantly; the last section can recompute them with the current weights.
Sections (``sections.py`` beside this page): POS probe (Peters et al. 2018, Table 6), word-sense probe
(Peters et al. 2018, Table 5; Coenen et al. 2019), context-specificity (Ethayarajh 2019), ELMo
layer-weight presets; then recompute (the recomputation, the one heavy job here, goes through
``ui.training_gate``).
"""
from __future__ import annotations

import streamlit as st

from app_pages.evidence import sections
from core.experiments import stale_models, view
from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC
from ui.budget_note import budget_note
from ui.cache import EXPERIMENT_RESULTS_KEY, experiment_results
from ui.i18n import current_lang, error_text, t, timestamp
from ui.page import attempt, presenting
from ui.presentation import PINNED_KEY
from ui.sidebar import get_model_infos
from ui.state import Field, one_of, seed, sync_to_url

SECTIONS = sections.CHOICES


# ---- header -----------------------------------------------------------------------------------
st.title(t("evidence.title"))
results = attempt(experiment_results)
if results is not None:
    sections.findings_answer(results)
st.markdown(t("evidence.intro"))

infos, problem = get_model_infos()
if problem:
    st.warning(problem)
for info in infos or []:
    if info.name in (DEFAULT_ELMO, DEFAULT_BERT, DEFAULT_STATIC) and not info.available:
        st.warning(t("evidence.model_unavailable", reason=error_text(info.problem)))

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
    if st.session_state.get(EXPERIMENT_RESULTS_KEY):
        st.info(t("evidence.session_results"))
    stale = stale_models(results)
    if stale:
        st.info(t("evidence.stale", models=", ".join(stale)))
    budget_note(*(m for m in results.get("requested_models", []) if m != DEFAULT_STATIC))
    for name, reason in view.skipped(results).items():
        st.caption(t("evidence.skipped", name=name, reason=(reason or {}).get(current_lang(), "?")))
elif section != "recompute":
    st.info(t("evidence.no_results"))


sections.show(section, results)
