"""特征式 vs 微调: the lecture's two transfer strategies, measured on one small task, and LoRA, the
parameter-efficient fine-tuning of the lecture's 今天怎么做, next to them.

Thin page: the numbers come from ``core.transfer`` — cached in ``assets/transfer_results.json``
(``python -m core.transfer``) so the page is instant in class, or recomputed here with a progress
bar. The sections (``sections.py`` beside it) draw those results; the layer / pooling controls live in
an st.fragment and only pick numbers out of them.
"""
from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from app_pages.transfer import sections
from core import transfer
from core.transfer import lora
from ui import cache
from ui.i18n import t, timestamp
from ui.page import attempt, how_computed, presenting

ss = st.session_state
large = presenting()


# ---- the two strategies --------------------------------------------------------------------------
st.title(t("transfer.title"))
# an unreadable results file is a message here; the page goes on without results (its recompute box open)
shown = attempt(transfer.shown_results, ss.get("transfer_results"), transfer.RESULTS_PATH,
                bert=transfer.BERT_MODEL, elmo=transfer.ELMO_MODEL,
                load=partial(cache.file_result, transfer.load_results)) or transfer.NOTHING_SHOWN
view, origin = shown.view, shown.origin
if view is not None and not large:  # a student at home: the answer first; on the projector the lecturer says it
    sections.question(view)
st.markdown(t("transfer.intro"))
dim = view.bert.dim if view else 256  # the sentence vector's size
col_a, col_b, col_c = st.columns(3, gap="medium")
with col_a.container(border=True):
    st.markdown(f"#### :material/lock: {t('transfer.feature.title')}")
    st.markdown(t("transfer.feature.body", dim=dim, trained=dim + 1))
with col_b.container(border=True):
    st.markdown(f"#### :material/local_fire_department: {t('transfer.finetune.title')}")
    st.markdown(t("transfer.finetune.body"))
with col_c.container(border=True):
    st.markdown(f"#### :material/tune: {t('transfer.lora_card.title')}")
    st.markdown(t("transfer.lora_card.body", r=lora.DEFAULT_LORA.r))


# ---- task and data --------------------------------------------------------------------------------
with st.expander(t("transfer.data.title"), expanded=not large):
    cfg = view.config if view else vars(transfer.DEFAULT_CONFIG)
    st.markdown(t("transfer.data.body", train=cfg.get("n_train", 600), test=cfg.get("n_test", 400),
                  chars=cfg.get("max_chars", 64), seed=cfg.get("seed", 0),
                  package=f"{transfer.DATA_PACKAGE}=={transfer.DATA_PACKAGE_VERSION}"))
    examples = view.examples if view else []
    if examples:  # six short reviews: a plain table reads whole on a phone, with no toolbar's Tab stops
        st.table(
            pd.DataFrame({t("transfer.data.col.label"): [t(f"transfer.label.{e['label']}") for e in examples],
                          t("transfer.data.col.text"): [e["text"] for e in examples]}),
            hide_index=True, border="horizontal")

# ---- results ----------------------------------------------------------------------------------------
st.header(t("transfer.results.title"))
if view is None:
    st.info(t("transfer.results.none"))
else:
    if origin == "session":
        st.caption(t("transfer.results.from_session", created=timestamp(view.created)))
    else:
        how_computed(t("transfer.results.from_file", created=timestamp(view.created), minutes=f"{view.minutes:.1f}",
                       cpu=f"{view.cpu_minutes:.1f}"))
    if shown.stale:
        st.warning(t("transfer.results.stale", models=", ".join(shown.stale)))

if view is not None:
    sections.explorer(view)
    sections.parameters(view)
    sections.fine_tuning_curve(view)
sections.lora_today(view)
with st.expander(t("transfer.recompute.title"), expanded=view is None):
    sections.recompute(from_session=origin == "session")
