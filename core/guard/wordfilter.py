"""Vulgar-word filter shared by corpus cleaning and the fill-mask candidate lists.

The list (``assets/wordlists/vulgar-zh.txt``) only holds words that are vulgar wherever they occur,
so a plain substring test is enough, on the text's filter form (``core.guard.safe_text.filter_form``: NFKC, format
characters dropped, lower case, spaces and spacer symbols between Chinese characters removed, the Traditional
spellings of the list's characters mapped to Simplified: 傻\u200b逼, 傻 逼, 他媽的, 雞巴, 傻B are all caught).
A fill-mask candidate is hidden when putting it in the blank
creates such a word that the text did not contain before (牛[MASK] + 逼 → 牛逼), so a lecturer's own
sentence is never judged, only what the model proposes.
"""
from __future__ import annotations

import functools
import re

from ..runtime.paths import ASSETS
from .safe_text import filter_form

WORDLIST = ASSETS / "wordlists" / "vulgar-zh.txt"

# Traditional (and variant) spellings of the characters the list is written with: enough for the filter, which
# compares Simplified text (no conversion library is a dependency of the project)
TRADITIONAL = {"筆": "笔", "裝": "装", "樣": "样", "雞": "鸡", "難": "难", "賤": "贱", "貨": "货", "馬": "马",
               "媽": "妈", "爺": "爷", "臥": "卧", "滾": "滚", "妳": "你", "艸": "艹", "鷄": "鸡", "個": "个",
               "們": "们", "孃": "娘"}


@functools.lru_cache(maxsize=1)
def vulgar_words() -> tuple[str, ...]:
    lines = WORDLIST.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@functools.lru_cache(maxsize=1)
def _pattern() -> re.Pattern:
    return re.compile("|".join(re.escape(w) for w in sorted(vulgar_words(), key=len, reverse=True)))


def contains_vulgar(text: str) -> bool:
    """Whether ``text``'s filter form holds a word of the list."""
    return _pattern().search(filter_form(text or "", TRADITIONAL)) is not None


@functools.lru_cache(maxsize=1)
def _starts() -> tuple[re.Pattern, int]:
    """Every position where a vulgar word starts, overlapping ones included (a lookahead; the longest word first at
    a position, which overlaps a span whenever a shorter one there does), and the longest word's length."""
    words = sorted(vulgar_words(), key=len, reverse=True)
    return re.compile("(?=(" + "|".join(re.escape(w) for w in words) + "))"), max(map(len, words), default=0)


def creates_vulgar(before: str, filling: str, after: str) -> bool:
    """True when ``before + filling + after`` holds a vulgar word that overlaps ``filling``. One regular-expression
    scan of the few characters around the blank (a fill-mask run checks hundreds of candidates: a loop over the
    list per candidate was a tenth of the objectives page's run, issue #50)."""
    pattern, longest = _starts()
    if not longest:
        return False
    text = before + filling + after
    start, end = len(before), len(before) + len(filling)
    for match in pattern.finditer(text, max(0, start - longest + 1), min(len(text), end + longest - 1)):
        if match.start() >= end:
            return False
        if match.start() + len(match.group(1)) > start:
            return True
    return False
