"""The vocabulary's tokens as fill-mask candidates: their text, which are punctuation, which are never offered."""
from __future__ import annotations

import unicodedata

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


def ranked(distribution: np.ndarray, excluded: list[int]) -> np.ndarray:
    """Token ids from most to least probable, ``excluded`` last."""
    ranking = distribution.astype(np.float64).copy()
    ranking[excluded] = -1.0
    return np.argsort(-ranking, kind="stable")


def special_ids(encoder: BertEncoder, size: int) -> list[int]:
    # Special tokens ([MASK], [CLS], [SEP], [PAD], [UNK]) are never offered as fillers: a predicted
    # [MASK] would re-open the slot and iterative_fill would loop forever. They stay in the distribution.
    return [i for i in encoder.tokenizer.all_special_ids if 0 <= i < size]
