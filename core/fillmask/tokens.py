"""The vocabulary's tokens as fill-mask candidates: their text, which are punctuation, which are never offered."""
from __future__ import annotations

import unicodedata
from collections.abc import Iterator

import numpy as np
import torch

from ..models.encoders import BertEncoder


def mlm_logits(outputs) -> torch.Tensor:
    """The masked-LM logits of a forward pass (pretraining heads name them ``prediction_logits``)."""
    logits = getattr(outputs, "prediction_logits", None)
    return logits if logits is not None else outputs.logits


def display(encoder: BertEncoder, token_id: int) -> str:
    return encoder.tokenizer.convert_ids_to_tokens(int(token_id))


def as_text(token: str) -> str:
    """A WordPiece continuation (##ing) is glued to the previous text without its marker."""
    return token[2:] if token.startswith("##") else token


def is_punctuation(token: str) -> bool:
    """Whether every character of ``token``'s text is punctuation or a symbol (not a word character)."""
    return all(unicodedata.category(ch).startswith(("P", "S")) for ch in as_text(token))


RANKED_HEAD = 256  # the most probable ids sorted first: callers stop after a few dozen


def ranked(distribution: np.ndarray, excluded: list[int]) -> Iterator[int]:
    """Token ids from most to least probable (ties in id order), ``excluded`` last. The head is found by a
    partition, not by sorting the whole vocabulary: a caller that takes the top 10 of 21,128 ids on every page run
    was a tenth of the fill-mask page's time (issue #50); the rest is sorted only if a caller goes past the head."""
    ranking = distribution.astype(np.float64).copy()
    ranking[excluded] = -1.0
    if not ranking.size:
        return
    cut = ranking.size - min(RANKED_HEAD, ranking.size)
    threshold = np.partition(ranking, cut)[cut]
    head = np.flatnonzero(ranking >= threshold)  # every id tied with the threshold too: the stable order's prefix
    yield from head[np.lexsort((head, -ranking[head]))].tolist()
    yield from np.argsort(-ranking, kind="stable")[head.size:].tolist()  # (sorted only when a caller gets here)


def special_ids(encoder: BertEncoder, size: int) -> list[int]:
    # Special tokens ([MASK], [CLS], [SEP], [PAD], [UNK]) are never offered as fillers: a predicted
    # [MASK] would re-open the slot and iterative_fill would loop forever. They stay in the distribution.
    return [i for i in encoder.tokenizer.all_special_ids if 0 <= i < size]
