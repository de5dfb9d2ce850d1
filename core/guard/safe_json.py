"""JSON from untrusted places (URL parameters, command-line arguments), bounded before it is parsed.

``json.loads`` recurses once per nesting level, so ``[[[[…`` a few thousand levels deep raises
RecursionError instead of ValueError; it also accepts ``NaN``/``Infinity`` and turns ``1e999`` into
``inf``. :func:`loads` checks size and depth with a flat scan first and refuses non-finite numbers:
every problem is a ValueError that names it.
"""
from __future__ import annotations

import json
import math
import re

MAX_DEPTH = 8
MAX_CHARS = 100_000

_SPECIAL = re.compile(r'[\[\]{}"\\]')


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of ``text`` outside string literals: one linear pass over the
    brackets, quotes and backslashes (no recursion, no backtracking)."""
    depth = deepest = 0
    in_string, escaped = False, -1  # escaped: position of a character a backslash escapes
    for match in _SPECIAL.finditer(text):
        position, char = match.start(), match.group()
        if position == escaped:
            continue
        if in_string:
            if char == "\\":
                escaped = position + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:20]}")
    return value


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


def loads(text: str, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS):
    """``json.loads(text)`` for untrusted text: ValueError when it is longer than ``max_chars``,
    nested deeper than ``max_depth``, invalid, or holds NaN/Infinity or a number beyond float range."""
    if len(text) > max_chars:
        raise ValueError(f"longer than {max_chars} characters")
    if nesting_depth(text) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
