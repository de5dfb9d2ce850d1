"""core/compute/stats.py: intervals checked against textbook values and their defining properties."""
from __future__ import annotations

import pytest

from core.compute.stats import difference_interval, paired_difference_interval, wilson_interval


def test_wilson_interval_textbook_value():
    # Wilson 95% interval for 81 successes in 263 trials (a standard worked example): 0.2553–0.3662
    low, high = wilson_interval(81 / 263, 263)
    assert low == pytest.approx(0.2553, abs=5e-4) and high == pytest.approx(0.3662, abs=5e-4)


def test_wilson_interval_stays_in_range_and_narrows_with_n():
    assert wilson_interval(0.0, 10)[0] == 0.0 and wilson_interval(1.0, 10)[1] == pytest.approx(1.0)
    small, large = wilson_interval(0.77, 100), wilson_interval(0.77, 10_000)
    assert small[0] < large[0] < 0.77 < large[1] < small[1]


def test_difference_interval():
    diff, low, high = difference_interval(0.773, 0.728, 400, 400)
    assert diff == pytest.approx(0.045)
    assert low < 0 < high  # 4.5 points apart on 400 reviews each: not distinguishable
    assert high - diff == pytest.approx(diff - low)


def test_paired_difference_interval():
    # 100 items: 10 only the first gets right, 5 only the second, 85 agree -> 0.05 ± 1.96·sqrt((0.15 − 0.05²)/100)
    first = "1" * 10 + "0" * 5 + "1" * 60 + "0" * 25
    second = "0" * 10 + "1" * 5 + "1" * 60 + "0" * 25
    diff, low, high = paired_difference_interval(first, second)
    assert diff == pytest.approx(0.05) and high - diff == pytest.approx(1.959964 * (0.1475 / 100) ** 0.5, rel=1e-5)
    assert low == pytest.approx(2 * diff - high)
    # the same accuracies as independent samples give a wider interval: agreement carries no sampling error
    assert high - low < difference_interval(0.7, 0.65, 100, 100)[2] - difference_interval(0.7, 0.65, 100, 100)[1]
    assert paired_difference_interval(first, first) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        paired_difference_interval("101", "10")


@pytest.mark.parametrize("args", [(0.5, 0), (1.5, 10), (-0.1, 10)])
def test_wilson_interval_rejects_bad_input(args):
    with pytest.raises(ValueError):
        wilson_interval(*args)


# --- the policy: paired comparisons, accuracies with n, choices, out-of-fold labels ---

from core.compute.stats import Accuracy, accuracy, choose, compare, cross_validated, order_test, paired  # noqa: E402


def test_exact_mcnemar_matches_the_binomial_test():
    from scipy.stats import binomtest

    # the word-sense case: 15 items only layer 2 gets right, 4 only layer 1, 118 both or neither
    layer2 = [1] * 15 + [0] * 4 + [1] * 90 + [0] * 28
    layer1 = [0] * 15 + [1] * 4 + [1] * 90 + [0] * 28
    result = paired(layer2, layer1)
    assert result.n == 137 and (result.a_only, result.b_only) == (15, 4)
    assert result.p_value == pytest.approx(binomtest(4, 19, 0.5).pvalue, rel=1e-9)
    assert result.p_value == pytest.approx(0.0192, abs=1e-4)
    assert result.diff == pytest.approx(11 / 137) and result.verdict == "higher"
    ci = binomtest(15, 19, 0.5).proportion_ci(0.95, method="exact")
    assert result.low == pytest.approx(19 / 137 * (2 * ci.low - 1), rel=1e-9)
    assert result.high == pytest.approx(19 / 137 * (2 * ci.high - 1), rel=1e-9)
    assert paired(layer1, layer2).verdict == "lower"


@pytest.mark.parametrize("b", range(0, 25))
@pytest.mark.parametrize("c", [0, 1, 3, 7, 12])
def test_the_interval_excludes_zero_exactly_when_the_test_rejects(b, c):
    a_side = [1] * b + [0] * c + [1] * 40
    b_side = [0] * b + [1] * c + [1] * 40
    result = paired(a_side, b_side)
    assert (result.p_value < 0.05) == (result.verdict != "tie"), (b, c, result)
    assert result.low <= result.diff <= result.high


def test_a_near_significant_difference_is_a_tie():
    # 10 vs 3 disagreements: the Wald interval excludes 0, the exact McNemar test does not reject (p = 0.092)
    first = [1] * 10 + [0] * 3 + [1] * 187
    second = [0] * 10 + [1] * 3 + [1] * 187
    assert paired_difference_interval(first, second)[1] > 0
    result = paired(first, second)
    assert result.p_value == pytest.approx(0.0923, abs=1e-4) and result.verdict == "tie" and result.low < 0


def test_identical_outcomes_and_tied_votes():
    same = paired([1, 0, 1], [1, 0, 1])
    assert (same.diff, same.low, same.high, same.p_value, same.verdict) == (0.0, 0.0, 0.0, 1.0, "tie")
    half = paired([0.5, 1, 1, 1], [1, 0, 0, 0])
    assert half.b_only == 0.5 and half.a_only == 3 and 0 < half.p_value < 1
    with pytest.raises(ValueError):
        paired([2, 0], [1, 0])


def test_unpaired_fallback_says_it_is_unpaired():
    result = compare(None, [1, 0], Accuracy(77, 100), Accuracy(70, 100))
    assert not result.paired and result.low < result.diff < result.high and result.verdict == "tie"
    assert compare([1, 0, 1], [0, 0, 1], Accuracy(2, 3), Accuracy(1, 3)).paired


def test_accuracy_carries_n_and_its_interval():
    acc = accuracy([1, 1, 0, 1])
    assert (acc.right, acc.n, acc.value, acc.percent()) == (3, 4, 0.75, "75%")
    assert acc.interval == wilson_interval(0.75, 4)
    with pytest.raises(ValueError):
        accuracy([])
    with pytest.raises(ValueError):
        Accuracy(5, 4)


def test_a_choice_on_test_gets_no_verdict():
    scores = {"cls": 0.8, "mean": 0.82, "first": 0.82}
    assert choose(scores, "validation").key == "mean" and choose(scores, "validation").judgeable
    assert choose(scores, "validation", order=["first", "mean", "cls"]).key == "first"
    assert not choose(scores, "test").judgeable
    with pytest.raises(ValueError):
        choose({}, "test")


def test_cross_validated_labels_never_see_their_item():
    items = list(range(40))
    seen_by_fold: list[set[int]] = []

    def fit(train):
        seen = set(train)
        seen_by_fold.append(seen)
        return lambda item: item in seen

    labels = cross_validated(items, fit, folds=4, seed=1)
    assert labels == [False] * 40 and len(seen_by_fold) == 4
    assert all(len(seen) == 30 for seen in seen_by_fold)
    # grouped: both items of a group land in the same fold, so the fit never sees the other half of a pair
    grouped = cross_validated(items, fit, folds=4, group=lambda item: item // 2)
    assert grouped == [False] * 40
    assert cross_validated(items, fit, folds=4, seed=1) == labels
    with pytest.raises(ValueError):
        cross_validated(items, fit, folds=1)


def test_the_order_test_is_the_exact_mann_whitney_test():
    from scipy.stats import mannwhitneyu

    # #48: all 9 seed pairs in the lecture's order, yet three seeds a side cannot reach p < 0.05
    pos, sentiment = [0.593, 0.592, 0.589], [0.671, 0.664, 0.891]
    order = order_test(pos, sentiment)
    assert (order.below, order.pairs) == (9, 9) and order.p_value == pytest.approx(0.1) == order.p_min
    assert order.verdict == "unclear"
    assert order.p_value == pytest.approx(mannwhitneyu(pos, sentiment, method="exact").pvalue)
    five = order_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert five.verdict == "below" and five.p_value == pytest.approx(2 / 252)
    assert order_test([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]).verdict == "above"
    mixed = order_test([1, 3, 5, 7], [2, 4, 6, 8])
    assert mixed.verdict == "unclear" and mixed.below == 10
    assert mixed.p_value == pytest.approx(mannwhitneyu([1, 3, 5, 7], [2, 4, 6, 8], method="exact").pvalue)
    with pytest.raises(ValueError):
        order_test([], [1.0])
