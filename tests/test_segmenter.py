"""core.models.segmenter: the stored jieba frequencies rebuild exactly the tuned segmenter."""
from __future__ import annotations

from pathlib import Path

import jieba
import pytest

from core.models.segmenter import FREQ_FILE, segmenter, write_frequencies

# jieba's default dictionary splits 苹果手机 and 吃苹果; 仙美果 (HMM-found) comes out whole anyway
WORDS = ["苹果", "苹果手机", "了", "吃苹果", "仙美果", "新手机"]
MULTI = [w for w in WORDS if len(w) > 1]


def _state(tokenizer) -> tuple[dict, int]:
    return dict(tokenizer.FREQ), tokenizer.total


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """The segmenter tuned without a stored file, built once (each new tokenizer reads jieba's dictionary, 0.8 s)."""
    return segmenter(tmp_path_factory.mktemp("no-file"), WORDS)


def test_default_jieba_splits_the_words_the_tuning_keeps_whole(tuned):
    plain = jieba.Tokenizer()
    assert "苹果手机" not in plain.lcut("我说苹果手机了") and "吃苹果" not in plain.lcut("他吃苹果了")
    for word in MULTI:
        assert word in tuned.lcut(f"我说{word}了"), word


def test_stored_frequencies_give_the_tuned_state(tmp_path, tuned):
    path = write_frequencies(tmp_path, WORDS)
    assert path.name == FREQ_FILE
    assert [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines()] == MULTI
    assert _state(segmenter(tmp_path, WORDS)) == _state(tuned)


def test_a_file_for_other_words_is_ignored(tmp_path, tuned):
    write_frequencies(tmp_path, ["香蕉", "电脑"])
    loaded = segmenter(tmp_path, WORDS)
    assert _state(loaded) == _state(tuned)
    assert "苹果手机" in loaded.lcut("我说苹果手机了")


def test_the_shipped_word2vec_file_matches_its_vocabulary():
    directory = Path(__file__).resolve().parent.parent / "assets" / "models" / "word2vec-zh"
    if not (directory / "vocab.txt").is_file():
        pytest.skip("word2vec-zh not trained yet")
    words = [line.split("\t")[0] for line in (directory / "vocab.txt").read_text(encoding="utf-8").splitlines()]
    stored = [line.split("\t")[0] for line in (directory / FREQ_FILE).read_text(encoding="utf-8").splitlines()]
    assert stored == [w for w in words if len(w) > 1]
