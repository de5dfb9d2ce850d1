"""Keeping loaded models: each model once per process, loaded at most once at a time, a bounded number of
hub / directory models (the least recently used goes; embedded ones stay), failed loads remembered for a while,
and :class:`ModelRef`, the weak handle a page holds.

An entry is as fresh as the files it was loaded from (``catalogue.files_identity``: every file's name, size and
mtime_ns): a checkpoint saved again into its folder is loaded again, and a remembered failure is forgotten when
the files change. ``core.interface.api.clear_cache`` empties it all.
"""
from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TypeVar

from ..guard.errors import LabError
from . import catalogue, hub, hub_cache, loaders
from .encoders import Encoder
from .hub import FAILURE_TTL_S

Kind = TypeVar("Kind", bound=Encoder)
MAX_OTHER_MODELS = 2  # hub / directory models kept loaded (least recently used goes); embedded ones stay
MAX_FAILURES = 256  # failed loads remembered at once (a class typing many wrong names); the oldest go first

_cache: OrderedDict[str, Encoder] = OrderedDict()  # key (catalogue.model_key) -> encoder, most recent last
# key -> (monotonic time, the error, the files' identity when it failed), oldest first
_failures: OrderedDict[str, tuple[float, LabError, catalogue.FilesIdentity | None]] = OrderedDict()
_identities: dict[str, catalogue.FilesIdentity | None] = {}  # key -> what its loaded model was read from
_load_locks: dict[str, tuple[threading.Lock, int]] = {}  # key -> (its lock, loads waiting on it); gone when 0
_state_lock = threading.Lock()  # guards the dicts above, never held while loading


def clear() -> None:
    """Forget every loaded model and every remembered answer: failed loads, the hub probe, the hub cache's
    listing (tests; loads in progress finish and are kept)."""
    with _state_lock:
        _cache.clear()
        _identities.clear()
        _failures.clear()
    hub.forget_probe()
    hub_cache.forget_scans()


@dataclass(frozen=True)
class Bookkeeping:
    """What the cache holds besides the models' weights, at one moment: every entry here costs memory, so
    its bounds (``MAX_OTHER_MODELS``, ``MAX_FAILURES``, no lock left once a load is over) are checked on it."""

    loaded: tuple[str, ...]  # keys of the loaded models, least recently used first
    failed: tuple[str, ...]  # keys of the remembered failed loads, oldest first
    loading: dict[str, int]  # key -> calls loading it or waiting for its load; absent once none is


def bookkeeping() -> Bookkeeping:
    """A snapshot of the cache's :class:`Bookkeeping`."""
    with _state_lock:
        return Bookkeeping(tuple(_cache), tuple(_failures),
                           {key: waiting for key, (_, waiting) in _load_locks.items()})


def load_encoder(name: str) -> Encoder:
    """Load a model by embedded name, local directory or hub id; cached for the whole process."""
    return load_by_key(catalogue.model_key(name))


def load_typed(name: str, kind: type[Kind]) -> Kind:
    """:func:`load_encoder` for a caller that needs one kind of encoder (an embedded model it names):
    a ``TypeError`` if ``name`` is another kind. User-given names go through ``api.load_masked_lm`` instead,
    whose refusal is a message."""
    encoder = load_encoder(name)
    if not isinstance(encoder, kind):
        raise TypeError(f"{name} is a {type(encoder).__name__}, not a {kind.__name__}")
    return encoder


def load_by_key(key: str, *, while_loading: Callable[[], AbstractContextManager] = nullcontext) -> Encoder:
    """The encoder of a cache ``key`` (``catalogue.model_key``'s answer), loaded at most once at a time, again
    when its files changed since. ``while_loading()`` is entered only when the model must be loaded, or its load
    waited for (the app's page run steps aside there: ``ui.cache.model``)."""
    identity = catalogue.files_identity(key)  # outside the lock: a stat per file
    with _state_lock:
        encoder = _cached(key, identity)
        if encoder is not None:
            return encoder
        lock, waiting = _load_locks.get(key) or (threading.Lock(), 0)
        _load_locks[key] = (lock, waiting + 1)
    try:
        with while_loading(), lock:  # concurrent first visits of one model wait for a single load
            return _load_once(key, identity)
    finally:
        with _state_lock:  # the last one out removes it: one lock per model being loaded, not per name ever tried
            lock, waiting = _load_locks[key]
            if waiting > 1:
                _load_locks[key] = (lock, waiting - 1)
            else:
                del _load_locks[key]


def _load_once(key: str, identity: catalogue.FilesIdentity | None) -> Encoder:
    """The cached encoder, or ``loaders.load(key)`` cached with the ``identity`` its files had before it was read
    (files changed during the load give another identity next time: loaded again, never kept stale); the caller
    holds the key's load lock."""
    with _state_lock:
        encoder = _cached(key, identity)
        if encoder is not None:
            return encoder
    try:
        encoder = loaders.load(key)
    except LabError as err:
        if key not in catalogue.EMBEDDED:  # embedded checks are instant and may pass after retraining
            # a copy without the traceback: the raised error's frames (and its cause's) hold what the load built,
            # a model of gigabytes kept alive for as long as the failure is remembered
            _remember_failure(key, LabError(err.code, **err.params), identity)
        raise
    with _state_lock:
        _cache[key] = encoder
        _identities[key] = identity
        _failures.pop(key, None)
        others = [k for k in _cache if k not in catalogue.EMBEDDED]
        for old in others[:-MAX_OTHER_MODELS]:
            del _cache[old], _identities[old]
    return encoder


def _remember_failure(key: str, err: LabError, identity: catalogue.FilesIdentity | None) -> None:
    """Cache a failed load for FAILURE_TTL_S while the files stay as they were; expired entries, and the oldest
    beyond MAX_FAILURES, go."""
    now = time.monotonic()
    with _state_lock:
        _failures.pop(key, None)
        _failures[key] = (now, err, identity)
        while _failures:
            oldest, (when, _, _) = next(iter(_failures.items()))
            if now - when < FAILURE_TTL_S and len(_failures) <= MAX_FAILURES:
                break
            del _failures[oldest]


def load_private(name: str) -> Encoder:
    """A new encoder of ``name``, outside the cache: for a job that runs for minutes (training from the page)
    and would otherwise hold the shared model's lock between every other session's forward passes."""
    return loaders.load(catalogue.model_key(name))


class ModelRef:
    """A loaded model as a page holds it: its ``name`` as the user gave it (for messages), its cache ``key``
    (what caches key on: hashable, equal for every spelling of one model) and its encoder, ``ref.encoder()``.

    The encoder is held weakly, because a page's globals outlive its run (the page's widget callbacks reach
    them), so every open session would keep the model of its last run alive after the cache dropped it.
    ``encoder()`` loads it again by its key if the cache dropped it meanwhile or its files changed; a method call
    in progress keeps its encoder until it returns."""

    __slots__ = ("name", "key", "_ref", "_identity")
    name: str
    key: str
    _ref: weakref.ref[Encoder]
    _identity: catalogue.FilesIdentity | None

    def __init__(self, name: str, key: str, encoder: Encoder, identity: catalogue.FilesIdentity | None = None):
        self.name, self.key, self._identity = name, key, identity
        self._ref = weakref.ref(encoder)

    def encoder(self) -> Encoder:
        encoder = self._ref()
        identity = catalogue.files_identity(self.key)
        if encoder is None or identity != self._identity:
            encoder = load_by_key(self.key)
            self._ref, self._identity = weakref.ref(encoder), identity
        return encoder

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelRef) and other.key == self.key

    def __repr__(self) -> str:
        return f"ModelRef({self.name!r}, key={self.key!r})"


def load_ref(name: str, *, while_loading: Callable[[], AbstractContextManager] = nullcontext) -> ModelRef:
    """:func:`load_encoder` as a :class:`ModelRef`: the name is normalised once, here (``while_loading``: see
    :func:`load_by_key`)."""
    key = catalogue.model_key(name)
    identity = catalogue.files_identity(key)
    return ModelRef(name, key, load_by_key(key, while_loading=while_loading), identity)


WARM_SENTENCE = "我吃了一个苹果。"


def warm_embedded() -> list[str]:
    """Load every available embedded model and run one sentence through it, so that the first visitor
    does not pay for loading the weights and for torch's first call. Returns the names warmed."""
    warmed = []
    for info in catalogue.list_models():
        if info.available:
            load_encoder(info.name).encode([WARM_SENTENCE])
            warmed.append(info.name)
    return warmed


def _cached(key: str, identity: catalogue.FilesIdentity | None) -> Encoder | None:
    """The loaded encoder (marked as just used), or the recent failure raised again, while the files are still
    those of ``identity``; else forgotten. The caller holds _state_lock."""
    if key in _cache:
        if _identities[key] == identity:
            _cache.move_to_end(key)
            return _cache[key]
        del _cache[key], _identities[key]
    failure = _failures.get(key)
    if failure is not None:
        when, err, failed_identity = failure
        if time.monotonic() - when < FAILURE_TTL_S and failed_identity == identity:
            raise LabError(err.code, **err.params)
        del _failures[key]
    return None
