"""Next-sentence prediction, BERT's second pretraining task."""
from __future__ import annotations

from ..guard.validation import check_text
from ..models.encoders import BertEncoder
from .masks import MAX_CHARS


def next_sentence(encoder: BertEncoder, first: str, second: str) -> float:
    """P(IsNext) of sentence B after sentence A."""
    return encoder.next_sentence_probability(check_text(first, MAX_CHARS), check_text(second, MAX_CHARS))
