"""Process-wide caches: each model is loaded once, each (model, text) computed once, each results file
read once per version.

Pages call these instead of core directly so that moving a slider only slices cached arrays.
Models are cached by ``core.registry`` alone (bounded, keyed by the normalised name): a second cache
here, keyed by the raw name, would keep every spelling of a path alive.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import streamlit as st

from core import api, experiments, registry
from core import vectors_view as vv
from core.encoders import Encoding

Result = TypeVar("Result")


def encoder(name: str):
    """The encoder for ``name`` (raises core.errors.LabError with a user-facing message)."""
    return registry.load_encoder(name)


def bert_encoder(name: str):
    """The encoder for ``name``, which must be a BERT-family masked LM (the fill-mask/attention pages)."""
    return api.load_masked_lm(name)


def encode(name: str, sentences: tuple[str, ...], attentions: bool = False) -> list[Encoding]:
    return _encode(registry.model_key(name), sentences, attentions)


@st.cache_data(show_spinner=False, max_entries=256)
def _encode(key: str, sentences: tuple[str, ...], attentions: bool) -> list[Encoding]:
    return registry.load_encoder(key).encode(list(sentences), attentions=attentions)


def model_call(func: Callable[..., Result], name: str, *args, **kwargs) -> Result:
    """``func(encoder of name, *args, **kwargs)``, computed once per (func, model, arguments) for every
    session: a rerun that only moves a slider finds the result here. ``func`` is a core function (or an
    encoder method) taking the encoder first; the arguments must be hashable values (text, numbers)."""
    return _model_call(func, f"{func.__module__}.{func.__qualname__}", registry.model_key(name), args,
                       tuple(sorted(kwargs.items())))


@st.cache_data(show_spinner=False, max_entries=1024)
def _model_call(_func: Callable, func_name: str, key: str, args: tuple, kwargs: tuple):  # noqa: ARG001 (keys)
    return _func(registry.load_encoder(key), *args, **dict(kwargs))


@st.cache_data(show_spinner=False, max_entries=64)
def occurrence_view(ctx_name: str | None, static_name: str | None, sentences: tuple[str, ...], word: str,
                    labels: tuple[str | None, ...]) -> vv.VectorsView:
    """Every layer's vector of every occurrence of ``word`` (``core.vectors_view.occurrence_layers``),
    shared by the static and ELMo pages; the sentences are encoded through :func:`encode`'s cache."""
    return vv.occurrence_layers(encoder(ctx_name) if ctx_name else None,
                                encoder(static_name) if static_name else None, list(sentences), word, list(labels),
                                encode=lambda texts: encode(ctx_name, tuple(texts)))


def file_result(load: Callable[[str], Result], path: str | Path) -> Result:
    """``load(path)``, read again only when the file changes (its modification time is part of the key)."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = 0.0
    return _file_result(load, f"{load.__module__}.{load.__qualname__}", str(path), mtime)


@st.cache_data(show_spinner=False, max_entries=8)
def _file_result(_load: Callable, load_name: str, path: str, mtime: float):  # noqa: ARG001 (keys)
    return _load(path)


# The session-state key of this session's recomputed layer experiments (the evidence page writes it, the ELMo
# page reads it; the results file is not touched).
EXPERIMENT_RESULTS_KEY = "evidence_results"


def experiment_results() -> dict | None:
    """The layer experiments' results: this session's recomputation (evidence page), else the shipped file."""
    return (st.session_state.get(EXPERIMENT_RESULTS_KEY)
            or file_result(experiments.load_results, experiments.DEFAULT_OUT))
