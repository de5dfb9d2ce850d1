"""The static model's jieba segmenter: every word it has a vector for stays in one piece.

jieba's own dictionary lacks many word2vec words (its HMM found them while segmenting the corpus),
so each multi-character vocabulary word is added with the frequency ``suggest_freq`` finds just
high enough to keep it whole. Tuning 55 k words re-segments each of them (≈ 1.6 s, a sixth of the
app's cold start), so the tuned frequencies are computed once, at export, and stored next to the
model in ``segmenter-freq.txt`` (word TAB frequency, in vocabulary order). Adding the stored
frequencies in the same order gives exactly the tuned tokenizer's state; a file that does not match
the vocabulary (older export, other words) is ignored and the words are tuned again.
"""
from __future__ import annotations

import logging
from pathlib import Path

FREQ_FILE = "segmenter-freq.txt"


def _fresh_tokenizer():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba.Tokenizer()  # private instance: the global segmenter other modules use stays as it is


def _tune(tokenizer, words: list[str]) -> list[tuple[str, int]]:
    """Add each multi-character word with its tuned frequency; returns (word, frequency) in order."""
    added = []
    for word in words:
        if len(word) > 1:
            freq = tokenizer.suggest_freq(word, tune=False)
            tokenizer.add_word(word, freq)
            added.append((word, freq))
    return added


def write_frequencies(directory: Path, words: list[str]) -> Path:
    """Tune the words on a fresh tokenizer and store the frequencies (the word2vec export step)."""
    path = Path(directory) / FREQ_FILE
    path.write_text("".join(f"{w}\t{f}\n" for w, f in _tune(_fresh_tokenizer(), words)), encoding="utf-8")
    return path


def _stored(directory: Path, words: list[str]) -> list[tuple[str, int]] | None:
    path = Path(directory) / FREQ_FILE
    if not path.is_file():
        return None
    pairs = [line.rsplit("\t", 1) for line in path.read_text(encoding="utf-8").splitlines()]
    if [p[0] for p in pairs] != [w for w in words if len(w) > 1]:
        return None
    return [(word, int(freq)) for word, freq in pairs]


def segmenter(directory: Path, words: list[str]):
    """A jieba tokenizer that keeps every word of ``words`` whole (stored frequencies when they match)."""
    tokenizer = _fresh_tokenizer()
    stored = _stored(directory, words)
    if stored is None:
        _tune(tokenizer, words)
    else:
        for word, freq in stored:
            tokenizer.add_word(word, freq)
    return tokenizer
