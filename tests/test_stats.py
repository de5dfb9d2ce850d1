"""core/stats.py: intervals checked against textbook values and their defining properties."""
from __future__ import annotations

import pytest

from core.stats import difference_interval, paired_difference_interval, wilson_interval


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
