"""The lab's one statistics policy: every verdict, accuracy, direction and sureness figure a student reads is
computed here, the same way everywhere.

1. **An accuracy comes with its n and interval** (:class:`Accuracy`): k right of n, with the Wilson score
   interval (well behaved near 0 and 1). One item of twelve is 8 points; the reader must see n.
2. **Two classifiers scored on the same items are compared paired** (:func:`paired`): only the items where the
   two disagree carry information. The test is the exact McNemar test (a two-sided binomial test of the
   disagreements, b of one kind and c of the other, at ½) and its interval is the matching exact one: the
   Clopper–Pearson interval of b / (b + c), mapped to the difference (b − c) / n. So "beyond sampling error"
   (p < 0.05) and "the 95 % interval excludes 0" are one statement, never two that can disagree. Samples that are
   not the same items fall back to :func:`difference_interval` (independent samples, wider), and say so.
3. **A choice among candidates is made on validation only** (:func:`choose`): the candidate that scored best on
   data the verdict does not use. A pick made on the test items (the best of ten probes on test) is stated as
   such, and :class:`Choice` refuses it a verdict (``judgeable`` is False): the best of many is above its own
   truth by selection alone.
4. **An order between two small groups** (the learned weights of a few random seeds per task) **is an exact
   permutation test** (:func:`order_test`): how many of the cross-group pairs are in order, and how often a random
   relabelling of the pooled values would look at least as ordered. Three seeds a side can never reach p < 0.05
   (the smallest two-sided p is 2 / 20 = 0.1), and the text says so instead of calling the order a finding.
5. **Sureness is scored on data its thresholds never saw** (:func:`cross_validated`): thresholds fitted on
   k − 1 folds label the k-th fold; the labels a page reports ("N of M right") are those out-of-fold labels, or
   labels on a separate held-out set.

:func:`wilson_interval`, :func:`difference_interval` and :func:`paired_difference_interval` are the bare
formulas beneath; pages and texts use the policy's objects above.
"""
from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

Z_95 = 1.959963984540054
ALPHA = 0.05  # two-sided: "beyond sampling error" means p < ALPHA, and the intervals are 1 − ALPHA = 95 %

T = TypeVar("T")
R = TypeVar("R")


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
    """(p₁ − p₂, lower, upper) for two accuracies on different samples (the normal approximation)."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError("n must be positive")
    diff = p1 - p2
    half = z * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    return diff, diff - half, diff + half


def paired_difference_interval(correct_1, correct_2, z: float = Z_95) -> tuple[float, float, float]:
    """(p₁ − p₂, lower, upper) from two per-item outcome sequences on the same items (0/1, "0"/"1", or a
    share in between for a tied vote): the normal (Wald) interval of the mean of the per-item differences.
    Verdicts use :func:`paired`, whose exact interval agrees with its test."""
    a, b = _outcomes(correct_1, correct_2)
    n = len(a)
    diffs = [x - y for x, y in zip(a, b)]
    diff = sum(diffs) / n
    variance = max(sum(d * d for d in diffs) / n - diff * diff, 0.0) / n
    half = z * math.sqrt(variance)
    return diff, diff - half, diff + half


def _outcomes(correct_1: Iterable, correct_2: Iterable) -> tuple[list[float], list[float]]:
    a = [float(x) for x in correct_1]
    b = [float(x) for x in correct_2]
    if not a or len(a) != len(b):
        raise ValueError("need two outcome sequences of the same, positive length")
    if any(not 0.0 <= x <= 1.0 for x in a + b):
        raise ValueError("outcomes must be 0/1 (or a share in between for a tied vote)")
    return a, b


@dataclass(frozen=True)
class Accuracy:
    """``right`` of ``n`` items, with the Wilson 95 % interval. ``right`` may be fractional where a tied vote
    counts as a share."""
    right: float
    n: int

    def __post_init__(self) -> None:
        if self.n <= 0 or not 0 <= self.right <= self.n:
            raise ValueError(f"an accuracy needs 0 ≤ right ≤ n and n > 0 (got {self.right} of {self.n})")

    @property
    def value(self) -> float:
        return self.right / self.n

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.value, self.n)

    def percent(self, digits: int = 0) -> str:
        """The bare percentage; a text shows ``n`` beside it."""
        return f"{100 * self.value:.{digits}f}%"


def accuracy(outcomes: Sequence) -> Accuracy:
    """The accuracy of per-item outcomes (1/0, True/False)."""
    values = [float(x) for x in outcomes]
    if not values:
        raise ValueError("an accuracy needs at least one item")
    return Accuracy(sum(values), len(values))


def _binomial_cdf_half(k: float, n: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, ½), continued to fractional counts through the regularised incomplete beta
    function (exact at integers)."""
    from scipy.special import betainc  # lazily: the CLI's first answer does not pay for SciPy

    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return float(betainc(n - k, k + 1, 0.5))


def _clopper_pearson(k: float, n: float) -> tuple[float, float]:
    from scipy.special import betaincinv

    low = 0.0 if k <= 0 else float(betaincinv(k, n - k + 1, ALPHA / 2))
    high = 1.0 if k >= n else float(betaincinv(k + 1, n - k, 1 - ALPHA / 2))
    return low, high


@dataclass(frozen=True)
class Paired:
    """a − b on the same ``n`` items: ``a_only`` items only a got right, ``b_only`` only b; the exact McNemar
    p-value and the matching exact 95 % interval of the difference in accuracy."""
    n: int
    a_only: float
    b_only: float
    p_value: float
    low: float
    high: float
    paired: bool = True  # False: two samples of different items (normal interval, no McNemar)

    @property
    def diff(self) -> float:
        return (self.a_only - self.b_only) / self.n

    @property
    def verdict(self) -> Literal["higher", "lower", "tie"]:
        """"higher" / "lower": a is above / below b beyond sampling error; "tie": it is not."""
        if self.low > 0:
            return "higher"
        if self.high < 0:
            return "lower"
        return "tie"


def paired(correct_a: Iterable, correct_b: Iterable) -> Paired:
    """The exact McNemar comparison of two classifiers' per-item outcomes on the same items (see the module
    docstring); a tied vote's share counts as a fraction of a disagreement.

    Outcomes given as strings ("0"/"1" per item, as results files store them) are compared once per process and
    pair of strings (:func:`_paired_strings`): the evidence page's verdicts compare the same stored outcomes of
    11,536 test words on every page run of every session (a third of a second of Python each, issue #50)."""
    if isinstance(correct_a, str) and isinstance(correct_b, str):
        return _paired_strings(correct_a, correct_b)
    return _paired(correct_a, correct_b)


@functools.lru_cache(maxsize=1024)
def _paired_strings(correct_a: str, correct_b: str) -> Paired:
    return _paired(correct_a, correct_b)  # Paired is frozen: one instance may be shared


def _paired(correct_a: Iterable, correct_b: Iterable) -> Paired:
    a, b = _outcomes(correct_a, correct_b)
    n = len(a)
    a_only = sum(max(x - y, 0.0) for x, y in zip(a, b))
    b_only = sum(max(y - x, 0.0) for x, y in zip(a, b))
    discordant = a_only + b_only
    if discordant == 0:
        return Paired(n, 0.0, 0.0, 1.0, 0.0, 0.0)
    p_value = min(1.0, 2 * _binomial_cdf_half(min(a_only, b_only), discordant))
    share_low, share_high = _clopper_pearson(a_only, discordant)
    scale = discordant / n
    return Paired(n, a_only, b_only, p_value, scale * (2 * share_low - 1), scale * (2 * share_high - 1))


def unpaired(a: Accuracy, b: Accuracy) -> Paired:
    """a − b for accuracies on different items: the normal interval; ``paired`` False, no McNemar p."""
    diff, low, high = difference_interval(a.value, b.value, a.n, b.n)
    n = min(a.n, b.n)
    return Paired(n, max(diff, 0.0) * n, max(-diff, 0.0) * n, float("nan"), low, high, paired=False)


def compare(a_outcomes: Sequence | None, b_outcomes: Sequence | None, a: Accuracy, b: Accuracy) -> Paired:
    """Paired when both per-item outcome lists are known and of one length, else the unpaired fallback."""
    if a_outcomes and b_outcomes and len(a_outcomes) == len(b_outcomes):
        return paired(a_outcomes, b_outcomes)
    return unpaired(a, b)


@dataclass(frozen=True)
class Order:
    """How ``a`` lies below ``b``: ``below`` of the ``pairs`` cross-group pairs (a tie counts half) have a's value
    under b's; ``p_value`` the exact two-sided permutation p (Mann–Whitney), ``p_min`` the smallest p these group
    sizes allow."""
    below: float
    pairs: int
    p_value: float
    p_min: float

    @property
    def verdict(self) -> Literal["below", "above", "unclear"]:
        if self.p_value >= ALPHA:
            return "unclear"
        return "below" if 2 * self.below > self.pairs else "above"


def _pairs_below(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(1.0 if x < y else 0.5 if x == y else 0.0 for x in a for y in b)


def order_test(a: Sequence[float], b: Sequence[float]) -> Order:
    """The exact permutation test of "a lies below b" for small groups (every split of the pooled values is
    enumerated: keep the groups to a few dozen values together)."""
    if not a or not b:
        raise ValueError("an order test needs two non-empty groups")
    pooled = [float(x) for x in [*a, *b]]
    pairs = len(a) * len(b)
    observed = abs(_pairs_below(a, b) - pairs / 2)
    splits = list(itertools.combinations(range(len(pooled)), len(a)))
    extreme = 0
    for chosen in splits:
        group = set(chosen)
        left = [pooled[i] for i in chosen]
        right = [pooled[i] for i in range(len(pooled)) if i not in group]
        extreme += abs(_pairs_below(left, right) - pairs / 2) >= observed - 1e-12
    return Order(_pairs_below(a, b), pairs, extreme / len(splits), min(1.0, 2 / len(splits)))


@dataclass(frozen=True)
class Choice(Generic[T]):
    """A candidate picked by a score. ``on``: the data it was picked on. Only a validation pick may be judged on
    the test items; a test pick is reported as "the best on test", without a verdict."""
    key: T
    on: Literal["validation", "test"]

    @property
    def judgeable(self) -> bool:
        return self.on == "validation"


def choose(scores: Mapping[T, float], on: Literal["validation", "test"], order: Sequence[T] | None = None) -> Choice[T]:
    """The best-scoring key; a tie goes to the key listed first in ``order`` (default: ``scores``' order), so
    a choice is deterministic and favours the simpler candidate when the caller lists it first."""
    if not scores:
        raise ValueError("nothing to choose from")
    ranked = list(order) if order is not None else list(scores)
    best = max(scores, key=lambda k: (scores[k], -ranked.index(k)))
    return Choice(best, on)


def cross_validated(items: Sequence[T], fit: Callable[[Sequence[T]], Callable[[T], R]], folds: int = 5,
                    seed: int = 0, group: Callable[[T], Hashable] | None = None) -> list[R]:
    """Out-of-fold labels: items are dealt into ``folds`` shuffled folds (by ``group`` when given, so items of
    one group never straddle the fit and the scoring); each fold is labelled by the rule ``fit`` builds from
    the other folds. ``result[i]`` labels ``items[i]`` and never saw it."""
    if folds < 2:
        raise ValueError("cross-validation needs at least two folds")
    keys = [group(item) if group else i for i, item in enumerate(items)]
    distinct = sorted(set(keys), key=str)
    random.Random(seed).shuffle(distinct)
    fold_of = {key: j % folds for j, key in enumerate(distinct)}
    out: list[R | None] = [None] * len(items)
    for fold in range(folds):
        held = [i for i, key in enumerate(keys) if fold_of[key] == fold]
        if not held:
            continue
        rule = fit([item for i, item in enumerate(items) if fold_of[keys[i]] != fold])
        for i in held:
            out[i] = rule(items[i])
    return out  # type: ignore[return-value]  # every index is in exactly one fold
