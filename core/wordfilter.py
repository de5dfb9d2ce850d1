"""Vulgar-word filter shared by corpus cleaning and the fill-mask candidate lists.

The list (``assets/wordlists/vulgar-zh.txt``) only holds words that are vulgar wherever they occur,
so a plain substring test is enough. A fill-mask candidate is hidden when putting it in the blank
creates such a word that the text did not contain before (牛[MASK] + 逼 → 牛逼), so a lecturer's own
sentence is never judged, only what the model proposes.
"""
from __future__ import annotations

import functools
import re

from .paths import ASSETS

WORDLIST = ASSETS / "wordlists" / "vulgar-zh.txt"


@functools.lru_cache(maxsize=1)
def vulgar_words() -> tuple[str, ...]:
    lines = WORDLIST.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@functools.lru_cache(maxsize=1)
def _pattern() -> re.Pattern:
    return re.compile("|".join(re.escape(w) for w in sorted(vulgar_words(), key=len, reverse=True)))


def contains_vulgar(text: str) -> bool:
    return _pattern().search(text or "") is not None


def creates_vulgar(before: str, filling: str, after: str) -> bool:
    """True when ``before + filling + after`` holds a vulgar word that overlaps ``filling``."""
    text = before + filling + after
    start, end = len(before), len(before) + len(filling)
    for word in vulgar_words():
        found = text.find(word, max(0, start - len(word) + 1))
        while found != -1 and found < end:
            if found + len(word) > start:
                return True
            found = text.find(word, found + 1)
    return False
