"""Download buttons for the analysts' tools (``core.interface.export``): the static-vs-contextual page's word vectors
for the TensorBoard Embedding Projector, the attention page's attention in bertviz's layout. Files are built on
click (``on_click="ignore"`` with a callable), not on every rerun; file names are constants, never user text.
"""
from __future__ import annotations

import streamlit as st

from core.attention.view import AttentionView
from core.interface import export
from core.vectors.view import VectorsView
from ui.i18n import t


def projector_button(view: VectorsView) -> None:
    """vectors.tsv + metadata.tsv of every contextual occurrence and layer, zipped (one download is one file)."""
    contextual = view.contextual  # None: no occurrence, and the button is disabled
    st.download_button(t("static.dl_projector"), data=lambda: export.projector_zip(contextual) if contextual else b"",
                       file_name="embedding-projector.zip", mime="application/zip", on_click="ignore",
                       key="static_dl_projector", icon=":material/download:", disabled=not view.num_occurrences)


def bertviz_button(view: AttentionView) -> None:
    """Every layer and head as shown (tokens or words, with or without [CLS]/[SEP]), for ``bertviz.head_view``."""
    st.download_button(t("att.download_bertviz"), data=lambda: export.bertviz_json(view.att, view.labels),
                       file_name="attention-bertviz.json", mime="application/json", on_click="ignore",
                       key="att_dl_bertviz", icon=":material/download:")
