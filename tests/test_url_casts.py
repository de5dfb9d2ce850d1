"""The URL casts pages give ``ui.state.url_param``: a value a page cannot use falls back to its default."""
from __future__ import annotations

import pytest

from ui.state import decode, in_range, one_of


def test_one_of_accepts_only_its_choices():
    cast = one_of("cosine", "l2")
    assert decode("l2", cast) == "l2"
    for bad in ("L2", "", "cosine ", "<script>"):
        with pytest.raises(ValueError):
            decode(bad, cast)


@pytest.mark.parametrize("raw, expected", [("1", 1), ("12", 12), ("5", 5)])
def test_in_range_accepts_numbers_inside_the_bounds(raw, expected):
    assert decode(raw, in_range(1, 12)) == expected


@pytest.mark.parametrize("raw", ["0", "13", "-1", "1.5", "abc", "", "1e3"])
def test_in_range_refuses_the_rest(raw):
    with pytest.raises(ValueError):
        decode(raw, in_range(1, 12))


def test_in_range_without_an_upper_bound_and_with_floats():
    assert decode("100000", in_range(0)) == 100000
    assert decode("2.5", in_range(0.1, 4.0, kind=float)) == 2.5
    for bad in ("nan", "inf", "-inf", "4.01", "0"):
        with pytest.raises(ValueError):
            decode(bad, in_range(0.1, 4.0, kind=float))
