"""benchmarks.common.net_ratio: a ratio over a net time (full run minus its startup) is reported only
when the net time exceeds the run-to-run spread of what was subtracted; otherwise inconclusive.

The numbers are made-up repetition timings (seconds); nothing is timed here.
"""
from __future__ import annotations

import pytest

from benchmarks.common import inconclusive_result, net_ratio


def test_clear_signal_gives_the_ratio_of_medians():
    # 2,000 sentences on an idle box: startup ≈ 5.6 s, full run ≈ 9.5 s, little jitter
    result = net_ratio(reference=[3.4, 3.5, 3.6], full=[9.4, 9.5, 9.6], base=[5.5, 5.6, 5.7])
    assert result.net_s == pytest.approx(3.9) and result.spread_s == pytest.approx(0.4)
    assert result.value == pytest.approx(3.5 / 3.9) and result.point_estimate == result.value
    assert result.reason is None


def test_net_time_within_the_startup_jitter_is_inconclusive():
    # the --quick case: 200 sentences add less than process start varies between runs
    result = net_ratio(reference=[3.4, 3.5, 3.6], full=[6.2, 5.5, 6.4], base=[5.6, 5.0, 6.1])
    assert result.value is None
    assert result.net_s == pytest.approx(0.6) and result.spread_s == pytest.approx(0.9 + 1.1)
    assert result.point_estimate == pytest.approx(3.5 / 0.6)  # kept for the report, not as a result
    assert "0.600" in result.reason and "2.000" in result.reason and "noise" in result.reason


def test_net_equal_to_the_spread_is_still_inconclusive():
    result = net_ratio(reference=[1.0, 1.0], full=[2.0, 3.0], base=[0.0, 1.0])  # net 2.0, spread 1.0 + 1.0
    assert result.net_s == 2.0 and result.spread_s == 2.0 and result.value is None


def test_non_positive_net_time_has_no_ratio_at_all():
    result = net_ratio(reference=[1.0, 1.1, 1.2], full=[5.0, 5.1, 5.2], base=[5.2, 5.3, 5.4])
    assert result.value is None and result.point_estimate is None and result.net_s < 0
    assert "no ratio" in result.reason


def test_one_repetition_cannot_show_its_noise():
    # however large the net time looks, one run of each says nothing about their jitter
    result = net_ratio(reference=[1.0], full=[100.0], base=[1.0])
    assert result.value is None and result.spread_s is None and result.point_estimate == pytest.approx(1 / 99)
    assert "1 repetition" in result.reason


def test_inconclusive_result_is_neither_pass_nor_failure():
    result = inconclusive_result("x", 5.0, "net 0.2 s ≤ spread 0.5 s", higher_is_better=True, unit="x",
                                 details={"point_estimate": 8.84})
    assert result["inconclusive"] is True and result["skipped"] is False
    assert result["value"] is None and result["ratio_to_limit"] is None and result["pass"] is None
    assert result["target"] == ">=" and result["details"] == {"point_estimate": 8.84}
