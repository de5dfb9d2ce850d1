"""ONE PCA frame for all layers of the occurrences, so that a layer scrubber or a weight slider moves points
inside a fixed frame."""
from __future__ import annotations

import numpy as np

from ..compute import geometry


def joint_projection(stacked: np.ndarray) -> geometry.Projection:
    """ONE PCA for all layers of (L, n, dim): every layer is centred on its own mean, then all
    layers are stacked and fitted together.

    The shared components keep the frame fixed while a layer scrubber moves; the per-layer
    centring keeps each layer's cloud around the origin. Without it the offsets BETWEEN layers
    (each layer has its own mean and scale) take the first components and squeeze the
    differences WITHIN a layer, the ones the page is about, into a dot.
    """
    stacked = np.asarray(stacked, dtype=np.float64)
    num_layers, n, dim = stacked.shape
    centred = stacked - stacked.mean(axis=1, keepdims=True)
    return geometry.project(centred.reshape(num_layers * n, dim))


def project_layers(projection: geometry.Projection, vectors: np.ndarray) -> np.ndarray:
    """Coordinates of (..., n, dim) vectors in the joint frame, each group centred on its own mean."""
    vectors = np.asarray(vectors, dtype=np.float64)
    centred = vectors - vectors.mean(axis=-2, keepdims=True)
    return centred @ projection.components.T
