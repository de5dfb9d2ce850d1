"""core/guard/validation.py: the text checks every computation shares."""
from __future__ import annotations

import pytest

from core.guard.errors import LabError
from core.guard.validation import check_length, check_text

LIMIT = 12


@pytest.mark.parametrize(("text", "code"), [("", "empty_input"), ("  \n", "empty_input"), (None, "empty_input"),
                                            ("好" * (LIMIT + 1), "too_long")])
def test_check_text(text, code):
    with pytest.raises(LabError) as info:
        check_text(text, LIMIT)
    assert info.value.code == code


def test_check_text_strips_before_counting():
    assert check_text("  今天 \n", LIMIT) == "今天"
    assert check_text(" " + "好" * LIMIT + " ", LIMIT) == "好" * LIMIT


def test_check_length_gives_the_length_and_the_limit():
    check_length("好" * LIMIT, LIMIT)
    with pytest.raises(LabError) as info:
        check_length("好" * (LIMIT + 1), LIMIT)
    assert info.value.params == {"length": LIMIT + 1, "limit": LIMIT}
