"""The vulgar-word list, corpus cleaning and the fill-mask candidate filter."""
from __future__ import annotations

import pytest
import torch

from core.fillmask.iterative import iterative_fill
from core.fillmask.prediction import fill_mask
from core.fillmask.words import word_candidates
from core.guard.wordfilter import contains_vulgar, creates_vulgar, vulgar_words
from core.train.corpus import clean_lines, read_lines
from tests.conftest import build_tiny_bert


def test_word_list_loads_and_skips_comments():
    words = vulgar_words()
    assert "牛逼" in words and "傻逼" in words
    assert not any(w.startswith("#") or not w.strip() for w in words)


@pytest.mark.parametrize("text", ["我们操作电脑。", "敌人逼近了城市。", "这是妈妈的书。", "今日你好吗？",
                                  "我靠自己的努力。", "尼玛次仁是他的名字。", "他喝了一杯牛奶。"])
def test_ordinary_text_is_not_flagged(text):
    assert not contains_vulgar(text)


@pytest.mark.parametrize(("before", "filling", "after", "expected"), [
    ("他喝了一杯牛", "逼", "。", True),       # the filling completes 牛逼
    ("他喝了一杯牛", "奶", "。", False),
    ("", "傻", "逼", True),                   # completes the word from its left end
    ("他说了句傻逼。我吃了", "苹果", "。", False),  # the vulgar word is the user's own, away from the blank
    ("", "屌", "", True),                     # a one-character entry on its own
])
def test_creates_vulgar(before, filling, after, expected):
    assert creates_vulgar(before, filling, after) is expected


def test_clean_lines_drops_vulgar_lines_and_exact_repeats():
    lines = ["今天天气很好。", "这个人真是傻逼。", "今天天气很好。", "明天下雨。", "今天天气很好！"]
    assert list(clean_lines(lines)) == ["今天天气很好。", "明天下雨。", "今天天气很好！"]


def test_cleaning_leaves_the_heldout_split_alone(tmp_path):
    corpus = tmp_path / "corpus.txt"
    # line 0 and line 100 are held out; both are repeats of a training line and line 100 is vulgar
    lines = (["重复的一句话。"] + [f"第{i}行的内容。" for i in range(1, 100)] + ["真是牛逼。"]
             + ["真是牛逼。", "重复的一句话。"])
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert list(read_lines(corpus, "heldout")) == ["重复的一句话。", "真是牛逼。"]
    train = list(clean_lines(read_lines(corpus, "train")))
    assert "真是牛逼。" not in train and train.count("重复的一句话。") == 1
    assert len(train) == 100  # 99 numbered lines + the one repeat kept once


# ---- the filter on a model that proposes the vulgar word first ------------------------------------
@pytest.fixture(scope="module")
def vulgar_first_bert(tmp_path_factory):
    from core.models.cache import load_encoder

    encoder = load_encoder(str(build_tiny_bert(tmp_path_factory.mktemp("tiny-vulgar"), extra_chars="牛逼奶")))
    vocab = encoder.tokenizer.get_vocab()
    with torch.no_grad():
        encoder.model.cls.predictions.bias[vocab["逼"]] += 50.0  # 逼 becomes every mask's top candidate
    return encoder


def test_fill_mask_hides_vulgar_completion_by_default(vulgar_first_bert):
    shown = fill_mask(vulgar_first_bert, "他喝了一杯牛[MASK]。", top_k=10, hide_vulgar=False).masks[0]
    hidden = fill_mask(vulgar_first_bert, "他喝了一杯牛[MASK]。", top_k=10).masks[0]
    assert shown.candidates[0].token == "逼" and shown.hidden == 0
    assert "逼" not in [c.token for c in hidden.candidates] and hidden.hidden == 1
    # the rest keeps its order and moves up; the distribution itself is untouched
    assert [c.token for c in hidden.candidates[:9]] == [c.token for c in shown.candidates[1:]]
    assert len(hidden.candidates) == 10
    assert hidden.probabilities[vulgar_first_bert.tokenizer.get_vocab()["逼"]] > 0.5


def test_fill_mask_keeps_the_character_where_it_makes_no_vulgar_word(vulgar_first_bert):
    slot = fill_mask(vulgar_first_bert, "我吃了一个[MASK]。", top_k=5).masks[0]
    assert slot.candidates[0].token == "逼" and slot.hidden == 0  # 一个逼 completes no listed word


def test_iterative_fill_never_writes_a_vulgar_word(vulgar_first_bert):
    steps = iterative_fill(vulgar_first_bert, "他喝了一杯牛[MASK]。")
    assert not contains_vulgar(steps[-1].text_after)
    steps = iterative_fill(vulgar_first_bert, "他喝了一杯牛[MASK]。", hide_vulgar=False)
    assert steps[-1].text_after == "他喝了一杯牛逼。"


def test_word_candidates_hide_vulgar_words(vulgar_first_bert):
    shown = word_candidates(vulgar_first_bert, "他是[MASK][MASK]。", hide_vulgar=False)[0]
    # 逼逼 is not on the list: the filter judges words, not characters
    assert shown.words[0].word == "逼逼" and shown.hidden == 0
    run = word_candidates(vulgar_first_bert, "真是傻[MASK][MASK]。")[0]
    assert all(not w.word.startswith("逼") for w in run.words) and run.hidden > 0


def _creates_vulgar_by_definition(before: str, filling: str, after: str) -> bool:
    """The definition, word by word and position by position: some vulgar word occurs overlapping the filling."""
    text, start, end = before + filling + after, len(before), len(before) + len(filling)
    return any(text.startswith(word, i) and i < end and i + len(word) > start
               for word in vulgar_words() for i in range(len(text)))


def test_creates_vulgar_agrees_with_its_definition_on_random_fillings():
    """The one-scan implementation (issue #50) against the definition, on texts built from the words' own characters
    (so that words occur, overlap each other and straddle the blank) and empty fillings."""
    import random

    rng = random.Random(50)
    alphabet = sorted({c for word in vulgar_words() for c in word}) + ["我", "的", "了"]
    found = 0
    for _ in range(3000):
        parts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, n))) for n in (5, 3, 5)]
        expected = _creates_vulgar_by_definition(*parts)
        assert creates_vulgar(*parts) is expected, parts
        found += expected
    assert 100 < found < 2900  # both answers were exercised
