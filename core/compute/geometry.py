"""Geometry of contextual vectors: 2-D projection, cosine similarity and sense separation.

    cos(u, v) = u·v / (‖u‖ ‖v‖)            (defined as 0 when u or v is the zero vector)
    centred:    cos(u − μ, v − μ),  μ = mean of the vectors (corrects anisotropy: contextual
                vectors share a large common direction that makes every raw cosine high)

PCA: X − mean = U S Vᵀ (a full SVD, as scikit-learn's ``PCA(svd_solver="full")``); the components are the first
rows of Vᵀ, explained variance ratio_i = S_i² / Σ S², coords = (X − mean) · componentsᵀ, with each component's sign
fixed so that its largest-|loading| entry is positive, so pictures do not flip between runs. numpy's SVD, not
scikit-learn's PCA around it: importing scikit-learn took a second of a projecting page's first visit.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

# Vectors whose norm is below this fraction of the largest input norm count as zero: centring
# identical vectors leaves float rounding dust (~1e-17) whose direction is meaningless.
_ZERO_NORM_FRACTION = 1e-12
# Similarities are compared after rounding to this many decimals, so ties that differ only by
# float rounding (e.g. identical vectors) are broken by index, not by the BLAS summation order.
_TIE_DECIMALS = 12

Label = str | None


@dataclass(frozen=True)
class Projection:
    """A fitted PCA: coords (n, k), explained_variance_ratio (k,), components (k, dim), mean (dim,)."""

    coords: np.ndarray
    explained_variance_ratio: np.ndarray
    components: np.ndarray
    mean: np.ndarray


def _as_matrix(vectors: ArrayLike, name: str) -> np.ndarray:
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} must have shape (n, dim) with n, dim ≥ 1, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite")
    return x


def project(points: ArrayLike, n_components: int = 2) -> Projection:
    """Fit PCA on points (n, dim) and return their k = n_components coordinates.

    When fewer components exist than asked for (n ≤ k, dim < k, or all points equal) the missing
    ones are zero: zero coords, zero loadings and explained variance 0.
    """
    x = _as_matrix(points, "points")
    if n_components < 1:
        raise ValueError(f"n_components must be at least 1, got {n_components}")
    n, dim = x.shape
    mean = x.mean(axis=0)
    components = np.zeros((n_components, dim))
    ratio = np.zeros(n_components)
    fitted = min(n_components, n, dim)
    # With zero total variance (n == 1 or identical points) PCA's ratios are 0/0; keep zeros.
    if np.any(x != x[0]):
        _, singular, rows = np.linalg.svd(x - mean, full_matrices=False)
        loadings = rows[:fitted]
        largest = np.argmax(np.abs(loadings), axis=1)
        signs = np.sign(loadings[np.arange(fitted), largest])
        components[:fitted] = loadings * signs[:, None]
        variance = singular ** 2
        ratio[:fitted] = variance[:fitted] / variance.sum()
    return Projection((x - mean) @ components.T, ratio, components, mean)


def transform(projection: Projection, points: ArrayLike) -> np.ndarray:
    """Coordinates (m, k) of other points under an already fitted projection.

    Fit once on every layer's points stacked together, then transform each layer, so that a
    layer scrubber moves points within one shared frame instead of re-fitting per layer.
    """
    x = _as_matrix(points, "points")
    if x.shape[1] != projection.mean.shape[0]:
        raise ValueError(
            f"points have dimension {x.shape[1]}, but the projection was fitted on "
            f"dimension {projection.mean.shape[0]}"
        )
    return (x - projection.mean) @ projection.components.T


def _unit_rows(x: np.ndarray, scale: float | None = None) -> np.ndarray:
    """Rows scaled to length 1; rows shorter than a tiny fraction of ``scale`` become zero.

    ``scale`` defaults to the longest row of ``x``.
    """
    norms = np.linalg.norm(x, axis=1)
    nonzero = norms > _ZERO_NORM_FRACTION * (norms.max() if scale is None else scale)
    unit = np.zeros_like(x)
    unit[nonzero] = x[nonzero] / norms[nonzero, None]
    return unit


def cosine_matrix(vectors: ArrayLike, centre: bool = False) -> np.ndarray:
    """Pairwise cosine similarities (n, n) in the original space; zero vectors give 0."""
    x = _as_matrix(vectors, "vectors")
    scale = float(np.linalg.norm(x, axis=1).max())  # judge "zero" against the uncentred size
    if centre:
        x = x - x.mean(axis=0)
    unit = _unit_rows(x, scale)
    # Rounding can push |cos| a hair past 1.
    return np.clip(unit @ unit.T, -1.0, 1.0)


def _ranking(similarities: np.ndarray, exclude: int | None = None) -> list[int]:
    """Indices other than ``exclude``, most similar first; ties go to the lowest index."""
    rounded = np.round(similarities, _TIE_DECIMALS)
    order = np.lexsort((np.arange(rounded.size), -rounded))
    return [int(i) for i in order if i != exclude]


def nearest_neighbours(
    vectors: ArrayLike, k: int = 3, centre: bool = False
) -> list[list[tuple[int, float]]]:
    """For each vector, its k most cosine-similar others as (index, similarity), best first.

    Fewer than k are returned when there are only n − 1 < k others.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    sims = cosine_matrix(vectors, centre=centre)
    return [
        [(j, float(sims[i, j])) for j in _ranking(sims[i], exclude=i)[:k]]
        for i in range(sims.shape[0])
    ]


def _labelled(vectors: ArrayLike, labels: Sequence[Label], name: str) -> tuple[np.ndarray, list[str]]:
    x = _as_matrix(vectors, name)
    if len(labels) != x.shape[0]:
        raise ValueError(f"got {len(labels)} labels for {x.shape[0]} {name}")
    keep = [i for i, label in enumerate(labels) if label]  # None and "" mean "unlabelled"
    return x[keep], [str(labels[i]) for i in keep]


def loo_nn_accuracy(
    vectors: ArrayLike, labels: Sequence[Label], centre: bool = False
) -> float | None:
    """Leave-one-out 1-nearest-neighbour sense accuracy by cosine.

    Unlabelled items (None or "") are dropped before anything else, centring included. Returns
    None when fewer than 2 labelled items or fewer than 2 distinct labels remain (nothing to
    separate). Tied nearest neighbours share the vote (the expected accuracy of breaking the tie at
    random): with all-equal vectors (a static embedding such as word2vec gives every occurrence the
    same vector) every other item ties, so the score is exactly the guessing level of a random
    neighbour, Σ (n_sense − 1) / (n − 1) / n (≈ 49% for two balanced senses), not 100%.
    """
    hits = loo_nn_hits(vectors, labels, centre=centre)
    return None if hits is None else float(hits.mean())


def loo_nn_hits(vectors: ArrayLike, labels: Sequence[Label], centre: bool = False) -> np.ndarray | None:
    """Per labelled item (in order), its :func:`loo_nn_accuracy` outcome: 1 when its nearest neighbour has its
    sense, 0 when not, a tie's share in between; paired comparisons of two settings on the same items use it."""
    x, kept = _labelled(vectors, labels, "vectors")
    if len(kept) < 2 or len(set(kept)) < 2:
        return None
    sims = np.round(cosine_matrix(x, centre=centre), _TIE_DECIMALS)
    hits = np.empty(len(kept))
    for i in range(len(kept)):
        others = np.delete(np.arange(len(kept)), i)
        best = others[sims[i, others] == sims[i, others].max()]
        hits[i] = np.mean([kept[j] == kept[i] for j in best])
    return hits


def centroid_accuracy(
    train_vectors: ArrayLike,
    train_labels: Sequence[Label],
    test_vectors: ArrayLike,
    test_labels: Sequence[Label],
) -> float:
    """Accuracy of assigning each test vector the sense whose train centroid is most cosine-similar.

    Centroids are the mean train vector per sense; ties go to the alphabetically first sense.
    Unlabelled items are ignored; a test sense absent from training always counts as wrong.
    """
    train, train_kept = _labelled(train_vectors, train_labels, "train_vectors")
    test, test_kept = _labelled(test_vectors, test_labels, "test_vectors")
    if not train_kept:
        raise ValueError("train_labels has no labelled items")
    if not test_kept:
        raise ValueError("test_labels has no labelled items")
    if train.shape[1] != test.shape[1]:
        raise ValueError(
            f"train vectors have dimension {train.shape[1]}, test vectors {test.shape[1]}"
        )
    senses = sorted(set(train_kept))
    centroids = np.stack([train[[lab == s for lab in train_kept]].mean(axis=0) for s in senses])
    predicted = [senses[_ranking(row)[0]] for row in _unit_rows(test) @ _unit_rows(centroids).T]
    return sum(p == t for p, t in zip(predicted, test_kept)) / len(test_kept)
