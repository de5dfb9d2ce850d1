"""The vector pages' input: the text box (one sentence per line, optional ``label|sentence``) and the target word,
checked and cleaned."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ..compute.occurrences import check_sentences, parse_labelled
from ..guard.errors import LabError
from ..guard.validation import check_length

MAX_TEXT_CHARS = 10_000  # the whole text box
MAX_LINE_CHARS = 500  # one sentence (the models have their own, smaller token limits)
MAX_WORD_CHARS = 20


@dataclass
class ParsedInput:
    sentences: list[str]
    labels: list[str | None]
    word: str
    removed_controls: int = 0  # control characters dropped from the text and the word

    @property
    def has_labels(self) -> bool:
        return sum(1 for label in self.labels if label) >= 2 and len({l for l in self.labels if l}) >= 2


def strip_controls(text: str) -> tuple[str, int]:
    """``text`` without control/format characters (tabs become spaces, line breaks stay)."""
    out, removed = [], 0
    for char in text.replace("\r\n", "\n").replace("\r", "\n"):
        if char == "\n":
            out.append(char)
        elif char == "\t":
            out.append(" ")
        elif unicodedata.category(char) in ("Cc", "Cs") or char in "\u2028\u2029":
            removed += 1
        else:
            out.append(char)
    return "".join(out), removed


def parse_input(text: str, word: str) -> ParsedInput:
    """Validate the text box (one sentence per line, optional ``label|sentence``) and the word.

    Raises LabError: ``too_long`` (whole text, one line or the word), ``empty_input``,
    ``too_many_sentences``, ``empty_word``.
    """
    text = text or ""
    check_length(text, MAX_TEXT_CHARS)
    clean, removed = strip_controls(text)
    sentences, labels = parse_labelled(clean.split("\n"))
    check_sentences(sentences, MAX_LINE_CHARS)
    word_clean, removed_word = strip_controls(word or "")
    word_clean = " ".join(word_clean.split())
    if not word_clean:
        raise LabError("empty_word")
    check_length(word_clean, MAX_WORD_CHARS)
    return ParsedInput(sentences, labels, word_clean, removed + removed_word)
