"""Process-wide caches: each model is loaded once, each (model, text) computed once.

Pages call these instead of core directly so that moving a slider only slices cached arrays.
"""
from __future__ import annotations

import streamlit as st

from core import registry
from core.encoders import Encoding


@st.cache_resource(show_spinner=False, max_entries=8)
def encoder(name: str):
    """The encoder for ``name`` (raises core.errors.LabError with a user-facing message)."""
    return registry.load_encoder(name)


@st.cache_data(show_spinner=False, max_entries=256)
def encode(name: str, sentences: tuple[str, ...], attentions: bool = False) -> list[Encoding]:
    return encoder(name).encode(list(sentences), attentions=attentions)
