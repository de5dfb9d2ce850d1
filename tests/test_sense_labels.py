"""core.train.evaluate.apple_sense: the cue-word labeller of the held-out 苹果 set."""
import pytest

from core.train.evaluate import apple_sense


@pytest.mark.parametrize("sentence, sense", [
    ("京东买的苹果手机一直有问题", "公司"),
    ("苹果很甜，水分足", "水果"),
    ("还冠以烟台果品总公司，砸烟台苹果的牌子", None),  # cues both ways: left out, not guessed
    ("苹果排在第三位", None),  # no cue at all
    ("我用的是iPhone，苹果的系统", "公司"),  # cues match case-insensitively
])
def test_sense_comes_from_unambiguous_cues_only(sentence, sense):
    assert apple_sense(sentence) == sense
