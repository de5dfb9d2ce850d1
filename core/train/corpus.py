"""Corpus reading shared by every trainer: a deterministic held-out split and sentence splitting.

The corpus lives outside the repository (``../shared/corpus``) and is never committed.
"""
from __future__ import annotations

import collections
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..guard.wordfilter import contains_vulgar

DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "zh_mixed_v1.txt"
EVERYDAY_CORPUS = DEFAULT_CORPUS.with_name("zh_everyday_v1.txt")
HELDOUT_EVERY = 100  # line i is held out when i % 100 == 0: 1% of lines, never trained on

SENTENCE_FINAL = "。！？!?；;…"
_SENTENCE_END = re.compile(f"(?<=[{SENTENCE_FINAL}])")


def read_lines(path: Path | str = DEFAULT_CORPUS, split: str = "train", limit: int | None = None) -> Iterator[str]:
    """Yield stripped lines of the ``train`` or ``heldout`` split (1% of lines, by line index)."""
    if split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    want_heldout = split == "heldout"
    count = 0
    with open(path, encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if (index % HELDOUT_EVERY == 0) != want_heldout:
                continue
            line = line.strip()
            if not line:
                continue
            yield line
            count += 1
            if limit is not None and count >= limit:
                return


def corpus_spec(spec: str) -> tuple[Path, int]:
    """``PATH`` or ``PATH:N``: a corpus file and how many times its paragraphs enter the training mix."""
    path, _, times = spec.rpartition(":") if spec.rpartition(":")[2].isdigit() else (spec, "", "1")
    if int(times) < 1:
        raise ValueError(f"{spec}: the repeat count must be at least 1")
    return Path(path), int(times)


def training_mix(specs: list[str], prepare: Callable[[Path, list[str]], list], tokens: Callable[[Any], int],
                 limit: int | None = None) -> list:
    """The training items of every ``PATH[:N]`` corpus: a file's cleaned training lines turned into items by
    ``prepare(path, lines)``, put into the mix N times (references, not copies). Prints each file's share of
    the mix in tokens (``tokens(item)`` counts an item's)."""
    mix, shares = [], {}
    for spec in specs:
        path, times = corpus_spec(spec)
        items = prepare(path, list(clean_lines(read_lines(path, "train", limit))))
        mix.extend(items * times)
        shares[path.stem] = times * sum(tokens(item) for item in items)
    total = sum(shares.values())
    print("mix (tokens per pass): " + ", ".join(f"{k} {v / 1e6:.1f} M ({v / total:.0%})" for k, v in shares.items()),
          flush=True)
    return mix


def clean_lines(lines) -> Iterator[str]:
    """Training-side cleaning: drop lines with a vulgar word and exact repeats of an earlier line.

    Applied to the training split only, so the held-out split (and every figure measured on it)
    stays exactly as it was.
    """
    seen: set[str] = set()
    for line in lines:
        if line in seen or contains_vulgar(line):
            continue
        seen.add(line)
        yield line


def split_sentences(line: str, max_chars: int = 120) -> list[str]:
    """Split a paragraph at sentence-final punctuation; cut very long pieces at ``max_chars``."""
    pieces = [p.strip() for p in _SENTENCE_END.split(line) if p.strip()]
    out: list[str] = []
    for piece in pieces:
        out.extend(piece[i:i + max_chars] for i in range(0, len(piece), max_chars))
    return out


def join_lines(lines: list[str], per_paragraph: int = 6) -> list[str]:
    """Consecutive lines as paragraphs of ``per_paragraph`` lines. In a file of dialogue turns and short
    messages most lines are one sentence, and a one-sentence paragraph never gives a true next sentence
    (it is only ever drawn as a random one): NSP would learn that everyday sentences do not follow each
    other. Joined, a turn and the turn after it make an IsNext pair."""
    return ["".join(line if line[-1] in SENTENCE_FINAL else line + "。" for line in lines[i:i + per_paragraph])
            for i in range(0, len(lines), per_paragraph)]


def char_counts(lines) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for line in lines:
        counts.update(line)
    return counts
