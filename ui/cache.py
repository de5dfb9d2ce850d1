"""Process-wide caches: each model is loaded once, each (model, text) computed once, each results file
read once per version.

Pages call these instead of core directly so that moving a slider only slices cached arrays.
Models are cached by ``core.models.cache`` alone (bounded, keyed by the normalised name): a second cache
here, keyed by the raw name, would keep every spelling of a path alive.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from core import experiments
from core.interface import api
from core.models.cache import ModelRef, load_ref
from core.models.catalogue import files_identity
from core.models.encoders import Encoding, StaticEncoder
from core.runtime.concurrency import step_aside
from core.vectors.view import VectorsView, occurrence_layers

Result = TypeVar("Result")


# Cached functions take a model as its handle and key on the handle's cache key: one entry for every
# spelling of one model, and nothing about the model is pickled or hashed but its key, with what its files are
# (a checkpoint saved again into its folder is computed again, as the model cache loads it again).
BY_KEY: dict[str | type[Any], Callable[[Any], Any]] = {ModelRef: lambda ref: (ref.key, files_identity(ref.key))}


def model(name: str, *, masked_lm: bool = False) -> ModelRef:
    """The model ``name`` as a handle (``core.models.cache.load_ref``); ``masked_lm`` refuses anything but a
    BERT-family masked LM (the fill-mask/attention pages). Raises core.guard.errors.LabError with a user-facing
    message."""
    # a load takes seconds (a hub model: minutes): the class's page runs go on meanwhile
    ref = load_ref(name, while_loading=step_aside)
    if masked_lm:
        api.load_masked_lm(ref)
    return ref


@st.cache_data(show_spinner=False, max_entries=256, hash_funcs=BY_KEY)
def encode(model: ModelRef, sentences: tuple[str, ...], attentions: bool = False) -> list[Encoding]:
    return model.encoder().encode(list(sentences), attentions=attentions)


def model_call(func: Callable[..., Result], model: ModelRef, *args, **kwargs) -> Result:
    """``func(the model's encoder, *args, **kwargs)``, computed once per (func, model, arguments) for every
    session: a rerun that only moves a slider finds the result here. ``func`` is a core function (or an
    encoder method) taking the encoder first; the arguments must be hashable values (text, numbers)."""
    return _model_call(func, f"{func.__module__}.{func.__qualname__}", model, args, tuple(sorted(kwargs.items())))


@st.cache_data(show_spinner=False, max_entries=1024, hash_funcs=BY_KEY)
def _model_call(_func: Callable, func_name: str, model: ModelRef, args: tuple,  # func_name: _func's key
                kwargs: tuple):
    return _func(model.encoder(), *args, **dict(kwargs))


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=BY_KEY)
def occurrence_view(ctx: ModelRef | None, static: ModelRef | None, sentences: tuple[str, ...],
                    word: str, labels: tuple[str | None, ...], one_by_one: bool = False,
                    first_only: bool = False) -> VectorsView:
    """Every layer's vector of every occurrence of ``word`` (``core.vectors.view.occurrence_layers``),
    shared by the static, ELMo and class board pages; the sentences are encoded through :func:`encode`'s cache,
    all at once, or ``one_by_one`` (the class board, which grows by a sentence at a time: only the new one is
    encoded); ``first_only``: each sentence's first occurrence only (the class board's one sentence, one point)."""
    def run(texts: list[str]) -> list[Encoding]:
        assert ctx is not None  # called only to encode for the contextual model
        return [encode(ctx, (text,))[0] for text in texts] if one_by_one else encode(ctx, tuple(texts))

    static_encoder = static.encoder() if static else None
    assert static_encoder is None or isinstance(static_encoder, StaticEncoder)  # the pages pass word2vec-zh
    return occurrence_layers(ctx.encoder() if ctx else None, static_encoder,
                                list(sentences), word, list(labels), encode=run, first_only=first_only)


def file_result(load: Callable[[str], Result], path: str | Path) -> Result:
    """``load(path)``, read again only when the file changes (its modification time is part of the key)."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        mtime = 0.0
    return _file_result(load, f"{load.__module__}.{load.__qualname__}", str(path), mtime)


@st.cache_data(show_spinner=False, max_entries=8)
def _file_result(_load: Callable, load_name: str, path: str, mtime: float):  # load_name: _load's key
    return _load(path)


# The session-state key of this session's recomputed layer experiments (the evidence page writes it, the ELMo
# page reads it; the results file is not touched).
EXPERIMENT_RESULTS_KEY = "evidence_results"


def experiment_results() -> dict | None:
    """The layer experiments' results: this session's recomputation (evidence page), else the shipped file."""
    return (st.session_state.get(EXPERIMENT_RESULTS_KEY)
            or file_result(experiments.load_results, experiments.DEFAULT_OUT))
