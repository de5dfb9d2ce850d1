"""The ELMo scalar mix (Peters et al., 2018, eq. 1; cf. AllenNLP ``scalar_mix.py``).

For token k with layer representations h_{k,0}, ..., h_{k,L}:

    ELMo_k = γ · Σ_j s_j · h_{k,j},    s = softmax(w)  (so s_j ≥ 0 and Σ_j s_j = 1)

The task learns the L+1 pre-softmax weights w and the scale γ. In the lecture the weights are
also written directly in normalised form s; both forms are accepted here.

The layers need not be on one scale (mini-elmo-zh's token layer is several times longer than its
biLSTM layers), so equal s is not an equal contribution. ``do_layer_norm=True`` first standardises each
layer, as AllenNLP's ``ScalarMix(do_layer_norm=True)`` does: minus the layer's mean, divided by its
standard deviation, both over all of that layer's numbers (every position and dimension, not per token).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

_SUM_TOLERANCE = 1e-6
_LAYER_NORM_EPS = 1e-12  # AllenNLP's: a constant layer becomes zeros instead of 0 / 0

# name -> (weights, gamma, pre_softmax) for three layers (L = 2), as used in the lecture.
PRESETS: dict[str, tuple[list[float], float, bool]] = {
    "uniform": ([0.0, 0.0, 0.0], 1.0, True),  # equal pre-softmax weights -> plain average
    "syntax": ([0.5, 0.4, 0.1], 2.0, False),  # lower layers carry more syntax
    "semantics": ([0.1, 0.3, 0.6], 2.0, False),  # top layer carries more word sense
    "worked_example": ([0.2, 0.3, 0.5], 2.0, False),
}


def _as_weight_vector(weights: ArrayLike) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights must be a non-empty 1-D sequence, got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"weights must be finite, got {w.tolist()}")
    return w


def softmax(weights: ArrayLike) -> np.ndarray:
    """Numerically stable softmax of a 1-D weight vector."""
    w = _as_weight_vector(weights)
    # Subtracting the max leaves the result unchanged but keeps exp() from overflowing.
    e = np.exp(w - w.max())
    return e / e.sum()


def normalise_weights(weights: ArrayLike, *, pre_softmax: bool) -> np.ndarray:
    """Return the normalised mixing weights s.

    pre_softmax=True: ``weights`` are the learned w, and s = softmax(w).
    pre_softmax=False: ``weights`` already are s; they are checked, not rescaled, so a typo in a
    preset shows up as an error instead of silently changing the lecture's numbers.
    """
    if pre_softmax:
        return softmax(weights)
    s = _as_weight_vector(weights)
    if np.any(s < 0):
        raise ValueError(f"normalised weights must be non-negative, got {s.tolist()}")
    total = float(s.sum())
    if abs(total - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"normalised weights must sum to 1, got {s.tolist()} (sum {total:.6g})")
    return s


def _as_layers(layers: ArrayLike) -> np.ndarray:
    h = np.asarray(layers, dtype=np.float64)
    if h.ndim < 2:
        raise ValueError(f"layers must have shape (L+1, ..., dim), got shape {h.shape}")
    return h


def layer_normalise(layers: ArrayLike, mask: ArrayLike | None = None) -> np.ndarray:
    """Each layer of (L+1, ..., dim) standardised over all of its numbers: (h_j − mean_j) / √(var_j + ε),
    AllenNLP's ``do_layer_norm``. One mean and one variance per layer, not per token, so the positions of a
    layer keep their relative lengths. ``mask`` (shape ``layers.shape[1:-1]``, e.g. ``(batch, time)``; true or 1
    for a real token, false or 0 for padding): only the real tokens set the mean and the variance, as in
    AllenNLP's ``ScalarMix.forward(tensors, mask)``; every position is still standardised with them. Without a
    mask every position counts."""
    h = _as_layers(layers)
    if h[0].size == 0:  # no positions: nothing to standardise (and no 0 / 0 mean)
        return h.copy()
    axes = tuple(range(1, h.ndim))
    if mask is None:
        centred = h - h.mean(axis=axes, keepdims=True)
        return centred / np.sqrt((centred ** 2).mean(axis=axes, keepdims=True) + _LAYER_NORM_EPS)
    keep = _as_mask(mask, h.shape[1:-1])
    broadcast = keep[None, ..., None]
    count = keep.sum() * h.shape[-1]  # AllenNLP's num_elements_not_masked
    mean = (h * broadcast).sum(axis=axes, keepdims=True) / count
    variance = (((h - mean) * broadcast) ** 2).sum(axis=axes, keepdims=True) / count
    return (h - mean) / np.sqrt(variance + _LAYER_NORM_EPS)


def _as_mask(mask: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    """``mask`` as 0/1 floats of ``shape`` (the layers' positions), with at least one real position."""
    m = np.asarray(mask)
    if m.shape != shape:
        raise ValueError(f"mask must have the layers' positions' shape {shape}, got shape {m.shape}")
    if m.dtype != bool and not np.isin(m, (0, 1)).all():
        raise ValueError("mask must hold only true/false or 1/0")
    m = m.astype(np.float64)
    if not m.any():
        raise ValueError("mask marks no real position: nothing to standardise with")
    return m


def mean_norms(layers: ArrayLike) -> np.ndarray:
    """The mean Euclidean length of each layer's vectors, (L+1,): how much each layer weighs in the mix
    at equal s."""
    h = _as_layers(layers)
    norms = np.linalg.norm(h, axis=-1).reshape(h.shape[0], -1)
    return norms.mean(axis=1) if norms.shape[1] else np.zeros(h.shape[0])


def scalar_mix(
    layers: ArrayLike,
    weights: ArrayLike,
    gamma: float = 1.0,
    *,
    pre_softmax: bool = False,
    do_layer_norm: bool = False,
    mask: ArrayLike | None = None,
) -> np.ndarray:
    """γ · Σ_j s_j · layers[j] for layers of shape (L+1, ..., dim); float64 of shape (..., dim).
    ``do_layer_norm``: each layer :func:`layer_normalise`-d first, its mean and variance taken over the
    positions ``mask`` marks as real (every position without one); ``mask`` is ignored otherwise, as in AllenNLP."""
    h = _as_layers(layers)
    s = normalise_weights(weights, pre_softmax=pre_softmax)
    if s.shape[0] != h.shape[0]:
        raise ValueError(
            f"got {s.shape[0]} weights for {h.shape[0]} layers; need one weight per layer (L+1)"
        )
    if not np.isfinite(gamma):
        raise ValueError(f"gamma must be finite, got {gamma}")
    return float(gamma) * np.tensordot(s, layer_normalise(h, mask) if do_layer_norm else h, axes=1)


def one_hot(n_layers: int, k: int) -> np.ndarray:
    """Normalised weights selecting layer k alone (s_k = 1), e.g. to show a single layer."""
    if n_layers < 1:
        raise ValueError(f"n_layers must be at least 1, got {n_layers}")
    if not 0 <= k < n_layers:
        raise ValueError(f"layer index k must be in [0, {n_layers - 1}], got {k}")
    s = np.zeros(n_layers, dtype=np.float64)
    s[k] = 1.0
    return s


def pre_softmax_from_normalised(s: Sequence[float] | np.ndarray) -> np.ndarray:
    """Pre-softmax weights w with softmax(w) = s / Σ s, shifted so max(w) = 0.

    Lets sliders that hold pre-softmax values start at a normalised preset. The shift is free
    (softmax ignores constants) and keeps the slider values in a small range ≤ 0.
    """
    v = _as_weight_vector(s)
    if np.any(v <= 0):
        # log(0) = -inf: a zero weight has no finite pre-softmax value.
        raise ValueError(f"normalised weights must be strictly positive, got {v.tolist()}")
    w = np.log(v)
    return w - w.max()


def format_vector(values: Sequence[float] | np.ndarray, decimals: int = 1, *, trim: bool = False) -> str:
    """``[0.4, 0.6, 1.0]``, the lecture's way of writing a small vector. ``trim`` drops trailing zeros
    (keeping one decimal) for answers; live values keep all ``decimals`` so they do not jump in width."""
    parts = []
    for v in values:
        text = f"{float(v):.{decimals}f}"
        if trim:
            text = text.rstrip("0")
            text = text + "0" if text.endswith(".") else text
        parts.append(text)
    return "[" + ", ".join(parts) + "]"
