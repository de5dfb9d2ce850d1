"""Confidence intervals for accuracies measured on a small test set.

An accuracy on n = 400 reviews moves by several points from one sample to the next, so the app
shows intervals next to such figures instead of bare percentages.

- :func:`wilson_interval`: the Wilson score interval of one proportion (well behaved near 0 and 1).
- :func:`difference_interval`: the normal-approximation interval of p₁ − p₂ for two accuracies,
  treating the two as independent samples. Both methods here are scored on the same test set, which
  makes the true interval narrower; the independent one errs on the cautious side.
- :func:`paired_difference_interval`: the interval of p₁ − p₂ when both were scored on the same items and
  each item's outcome is known: only the items where the two disagree vary the difference.
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


def paired_difference_interval(correct_1, correct_2, z: float = Z_95) -> tuple[float, float, float]:
    """(p₁ − p₂, lower, upper) from two per-item outcome sequences on the same items (0/1, "0"/"1", or a
    share in between for a tied vote): the normal (Wald) interval of the mean of the per-item differences,
    whose variance comes from the disagreements."""
    a = [float(x) for x in correct_1]
    b = [float(x) for x in correct_2]
    if not a or len(a) != len(b):
        raise ValueError("need two outcome sequences of the same, positive length")
    n = len(a)
    diffs = [x - y for x, y in zip(a, b)]
    diff = sum(diffs) / n
    variance = max(sum(d * d for d in diffs) / n - diff * diff, 0.0) / n
    half = z * math.sqrt(variance)
    return diff, diff - half, diff + half
