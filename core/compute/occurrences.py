"""Find a target word in sentences and turn each occurrence into one vector per layer.

A word vector is the mean of the vectors of the tokens that cover it (characters for Chinese,
WordPieces for English). Static models answer with the one vector of the word type: the same
for every occurrence, which is exactly the limitation the lecture starts from.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..guard.errors import LabError
from ..guard.validation import check_length
from ..models.encoders import MAX_SENTENCE_CHARS, Encoder, Encoding, StaticEncoder
from .token_vectors import _frame, layer_indices

if TYPE_CHECKING:
    import pandas as pd

MAX_SENTENCES = 200


@dataclass
class Occurrence:
    """One occurrence of the word: its sentence (``sentence_index`` counts from 0), its character span
    ``start:end``, the model's tokens that cover it, ``layers`` ``(num_layers, dim)`` (the mean of those tokens'
    vectors in each layer) and the sense ``label`` given with the sentence, if any."""

    sentence_index: int
    sentence: str
    start: int
    end: int
    token_indices: list[int]
    layers: np.ndarray  # (num_layers, dim)
    label: str | None = None


@dataclass
class WordVectors:
    """What :func:`core.interface.api.embed` returns (and :func:`core.interface.api.stream_word_vectors` yields
    per batch): every
    :class:`Occurrence` of ``word`` with one vector per layer of ``layer_names``; ``missing``: the sentences
    without the word; ``windowed``: those read in overlapping windows; ``oov``: a static model has no vector for
    the word. ``stacked()`` and ``to_frame()`` give them as one array or one table."""

    word: str
    model: str
    layer_names: list[str]
    occurrences: list[Occurrence]
    missing: list[int] = field(default_factory=list)  # sentences without the word
    oov: bool = False  # static model: the word has no vector at all
    windowed: list[int] = field(default_factory=list)  # sentences longer than the model takes, read in windows

    def stacked(self) -> np.ndarray:
        """(num_layers, num_occurrences, dim)."""
        if not self.occurrences:
            return np.zeros((len(self.layer_names), 0, 0), np.float32)
        return np.stack([o.layers for o in self.occurrences], axis=1)

    def to_frame(self, layers: Sequence[int] | None = None) -> pd.DataFrame:
        """One row per occurrence and layer (occurrences in order, then layers), as ``TokenVectors.to_frame``
        and ``SentenceVectors.to_frame`` give theirs: ``model, layer_index, layer, sentence_index, sentence,
        start, end, label, d0 …`` (the columns of ``core.interface.export``'s CSV and Parquet tables); ``layers``: the
        layers to keep, negative ones counting from the top (``[-1]``: the last)."""
        chosen = layer_indices(layers, len(self.layer_names))
        rows = [(occurrence, j) for occurrence in self.occurrences for j in chosen]
        meta: dict[str, list] = {
            "layer_index": [j for _, j in rows], "layer": [self.layer_names[j] for _, j in rows],
            "sentence_index": [o.sentence_index for o, _ in rows], "sentence": [o.sentence for o, _ in rows],
            "start": [o.start for o, _ in rows], "end": [o.end for o, _ in rows],
            "label": [o.label for o, _ in rows]}
        return _frame(self.model, meta, [o.layers[j][None] for o, j in rows])


def find_spans(sentence: str, word: str) -> list[tuple[int, int]]:
    """Non-overlapping character spans of ``word`` in ``sentence`` (case-insensitive).

    Latin words only match whole words (``apple`` does not match inside ``pineapple``); Chinese
    has no word boundaries to respect.
    """
    if not word:
        return []
    pattern = re.escape(word)
    if re.fullmatch(r"[A-Za-z0-9]+", word):
        pattern = rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z0-9])"
    return [(m.start(), m.end()) for m in re.finditer(pattern, sentence, flags=re.IGNORECASE)]


def covering_tokens(encoding: Encoding, start: int, end: int) -> list[int]:
    return [i for i, ((s, e), special) in enumerate(zip(encoding.offsets, encoding.special))
            if not special and e > s and s < end and e > start]


def parse_labelled(lines: list[str]) -> tuple[list[str], list[str | None]]:
    """``label|sentence`` lines → sentences and labels (None when unlabelled); blank lines dropped."""
    sentences: list[str] = []
    labels: list[str | None] = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        label, sep, rest = line.partition("|")
        if sep and label.strip() and rest.strip() and len(label.strip()) <= 20:
            sentences.append(rest.strip())
            labels.append(label.strip())
        else:
            sentences.append(line)
            labels.append(None)
    return sentences, labels


def check_sentences(sentences: Sequence[str], max_chars: int) -> None:
    """Raise LabError ``empty_input`` for no sentence, ``too_many_sentences`` above :data:`MAX_SENTENCES`,
    ``too_long`` for a sentence over ``max_chars``."""
    if not sentences:
        raise LabError("empty_input")
    if len(sentences) > MAX_SENTENCES:
        raise LabError("too_many_sentences", count=len(sentences), limit=MAX_SENTENCES)
    for sentence in sentences:
        check_length(sentence, max_chars)


def word_vectors(encoder: Encoder, sentences: list[str], word: str,
                 labels: Sequence[str | None] | None = None, encodings: Mapping[int, Encoding] | None = None,
                 first_only: bool = False) -> WordVectors:
    """Every occurrence of ``word`` in ``sentences`` with its per-layer vectors; ``encodings``: those of the
    sentences that hold the word, by sentence index, when the caller has them already. ``first_only``: each
    sentence's first occurrence only (the class board: one sentence, one point)."""
    word = (word or "").strip()
    if not word:
        raise LabError("empty_word")
    sentences = [s for s in sentences]
    check_sentences(sentences, MAX_SENTENCE_CHARS)
    labels = labels or [None] * len(sentences)
    spans = [find_spans(s, word)[:1] if first_only else find_spans(s, word) for s in sentences]
    missing = [i for i, found in enumerate(spans) if not found]
    result = WordVectors(word, encoder.name, list(encoder.layer_names), [], missing)

    if isinstance(encoder, StaticEncoder):
        vector = encoder.word_vector(word)
        result.oov = vector is None
        if vector is not None:
            for i, found in enumerate(spans):
                for start, end in found:
                    result.occurrences.append(Occurrence(i, sentences[i], start, end, [], vector[None].copy(),
                                                         labels[i]))
        return result

    present = [i for i, found in enumerate(spans) if found]
    if not present:
        return result
    if encodings is None:
        encodings = dict(zip(present, encoder.encode([sentences[i] for i in present])))
    for i in present:
        encoding = encodings[i]
        if encoding.windows > 1:  # every occurrence is still there (encoders.LONG_TEXT_POLICY): said, not hidden
            result.windowed.append(i)
        for start, end in spans[i]:
            tokens = covering_tokens(encoding, start, end)
            if not tokens:  # e.g. the word fell on characters the tokenizer dropped
                continue
            vector = encoding.layers[:, tokens].mean(axis=1)
            result.occurrences.append(Occurrence(i, sentences[i], start, end, tokens, vector, labels[i]))
    return result
