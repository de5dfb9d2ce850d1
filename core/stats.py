"""Confidence intervals for accuracies measured on a small test set.

An accuracy on n = 400 reviews moves by several points from one sample to the next, so the app
shows intervals next to such figures instead of bare percentages.

- :func:`wilson_interval`: the Wilson score interval of one proportion (well behaved near 0 and 1).
- :func:`difference_interval`: the normal-approximation interval of p₁ − p₂ for two accuracies,
  treating the two as independent samples. Both methods here are scored on the same test set, which
  makes the true interval narrower; the independent one errs on the cautious side.
"""
from __future__ import annotations

import math

Z_95 = 1.959963984540054


def wilson_interval(p: float, n: int, z: float = Z_95) -> tuple[float, float]:
    if n <= 0:
        raise ValueError("n must be positive")
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be a proportion in [0, 1]")
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(p1: float, p2: float, n1: int, n2: int, z: float = Z_95) -> tuple[float, float, float]:
    """(p₁ − p₂, lower, upper)."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError("n must be positive")
    diff = p1 - p2
    half = z * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    return diff, diff - half, diff + half
