"""Word vectors per layer for pre-segmented sentences, shared by the three experiments.

A word's vector in a layer is the mean of the vectors of the tokens that cover its character span
in the re-joined sentence (``Encoding.offsets``; characters for the Chinese models). A static model
(word2vec) looks the gold word up directly: an out-of-vocabulary (OOV) word gets a zero vector and
``found = False``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..models.encoders import Encoder

Progress = Callable[[float, str], None]


def no_progress(fraction: float, text: str) -> None:  # the default callback
    pass


@dataclass
class SentenceVectors:
    layers: np.ndarray  # (num_layers, n_words, dim) float32
    found: np.ndarray  # (n_words,) bool: False = OOV (static) or no covering token (contextual)


def _spans(words: Sequence[str]) -> np.ndarray:
    ends = np.cumsum([len(w) for w in words])
    return np.stack([ends - np.array([len(w) for w in words]), ends], axis=1)


def pool_words(encoding, spans: np.ndarray) -> SentenceVectors:
    """Mean of the covering tokens' vectors for every word span ``(n, 2)`` of one encoding."""
    offsets = np.array(encoding.offsets, dtype=np.int64).reshape(-1, 2)
    usable = ~np.array(encoding.special, dtype=bool) & (offsets[:, 1] > offsets[:, 0])
    cover = ((offsets[None, :, 0] < spans[:, 1:2]) & (offsets[None, :, 1] > spans[:, 0:1]) & usable[None, :])
    counts = cover.sum(axis=1)
    weights = cover / np.maximum(counts, 1)[:, None]
    layers = np.einsum("nt,ltd->lnd", weights.astype(np.float32), encoding.layers.astype(np.float32))
    return SentenceVectors(layers.astype(np.float32), counts > 0)


def static_vectors(encoder, words: Sequence[str]) -> SentenceVectors:
    dim = encoder.vectors.shape[1]
    vectors, found = [], []
    for word in words:
        vector = encoder.word_vector(word)
        found.append(vector is not None)
        vectors.append(np.zeros(dim, np.float32) if vector is None else np.asarray(vector, np.float32))
    return SentenceVectors(np.stack(vectors)[None], np.array(found, dtype=bool))


def sentence_vectors(encoder: Encoder, sentences: Sequence[Sequence[str]], *, progress: Progress = no_progress,
                     chunk: int = 64) -> list[SentenceVectors]:
    """One :class:`SentenceVectors` per segmented sentence (a sentence = its list of words).

    Sentences are encoded ``chunk`` at a time so that token-level arrays never pile up;
    ``progress(fraction, text)`` is called after each chunk.
    """
    out: list[SentenceVectors] = []
    total = max(len(sentences), 1)
    if encoder.kind == "static":
        for words in sentences:
            out.append(static_vectors(encoder, words))
        progress(1.0, f"{encoder.name}: {len(sentences)} sentences")
        return out
    for start in range(0, len(sentences), chunk):
        batch = sentences[start:start + chunk]
        encodings = encoder.encode(["".join(words) for words in batch])
        for words, encoding in zip(batch, encodings):
            out.append(pool_words(encoding, _spans(words)))
        done = min(start + chunk, len(sentences))
        progress(done / total, f"{encoder.name}: {done}/{len(sentences)} sentences")
    return out


def scaled_progress(progress: Progress, lo: float, hi: float) -> Progress:
    """A callback that maps its own 0..1 onto ``lo..hi`` of ``progress``."""
    return lambda fraction, text: progress(lo + (hi - lo) * min(max(fraction, 0.0), 1.0), text)


def resolve(model) -> tuple[Encoder | None, str, dict | None]:
    """``(encoder, name, None)``, or ``(None, name, {"zh": reason, "en": reason})`` when the model
    cannot be loaded here (e.g. not trained yet).

    ``model`` is a registry name / directory / hub id, or an already loaded :class:`Encoder`.
    """
    from ..guard.errors import LabError
    from ..models.cache import load_encoder

    if not isinstance(model, (str, bytes)):  # an Encoder (or an object with the same interface)
        return model, model.name, None
    try:
        encoder = load_encoder(str(model))
    except LabError as err:
        return None, str(model), {"zh": err.message("zh", markdown=True), "en": err.message("en", markdown=True)}
    return encoder, encoder.name, None


def first_of_kind(models, kind: str, skipped: dict) -> Encoder | None:
    """The first model of ``kind`` (e.g. "elmo") in ``models`` that loads; models that cannot be
    loaded on the way are recorded in ``skipped`` with their reason."""
    for model in models:
        encoder, name, reason = resolve(model)
        if encoder is None:
            skipped[name] = reason
        elif encoder.kind == kind:
            return encoder
    return None


def each_model(models, static, progress: Progress, skipped: dict):
    """The loop every experiment shares: yields ``(encoder, name, sub_progress, is_static)`` for the
    contextual models and then the static baseline, each with its share of ``progress``; a model
    that cannot be loaded is recorded in ``skipped`` with its reason instead."""
    entries = [(m, False) for m in models] + ([(static, True)] if static is not None else [])
    for i, (model, is_static) in enumerate(entries):
        sub = scaled_progress(progress, i / len(entries), (i + 1) / len(entries))
        encoder, name, reason = resolve(model)
        if encoder is None:
            skipped[name] = reason
            continue
        yield encoder, name, sub, is_static


def store_result(out: dict, name: str, is_static: bool, result: dict) -> None:
    """The static baseline goes to ``out["static"]``, contextual models to ``out["models"]``."""
    if is_static:
        out["static"] = {"model": name, **result}
    else:
        out["models"][name] = result
