"""The top-k candidates of every [MASK], from one forward pass (the masks predicted independently, as BERT does)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..guard.errors import LabError
from ..guard.wordfilter import creates_vulgar
from ..models.encoders import BertEncoder
from .masks import around, check_masked_sentence
from .tokens import as_text, display, is_punctuation, mlm_logits, ranked, special_ids


@dataclass
class Candidate:
    token: str
    score: float


@dataclass
class MaskSlot:
    index: int  # 0-based order of the mask in the sentence
    token_index: int  # position in the tokenized input
    candidates: list[Candidate]
    probabilities: np.ndarray  # full distribution over the vocabulary (sums to 1)
    hidden: int = 0  # vulgar candidates left out of ``candidates`` (they stay in ``probabilities``)


@dataclass
class FillMaskResult:
    sentence: str
    tokens: list[str]
    masks: list[MaskSlot]


def top_candidates(encoder, distribution: np.ndarray, top_k: int, before: str = "", after: str = "",
                   hide_vulgar: bool = True, characters_only: bool = False) -> tuple[list[Candidate], int]:
    """The ``top_k`` most probable tokens of ``distribution`` (over ``encoder.tokenizer``'s vocabulary,
    special tokens never offered; ``characters_only``: punctuation and symbols neither) for the gap between
    ``before`` and ``after``, and how many were left out because they would complete a vulgar word
    (``hide_vulgar``). Any encoder with a tokenizer."""
    chosen, hidden = [], 0
    for token_id in ranked(distribution, special_ids(encoder, distribution.shape[-1])):
        token = display(encoder, token_id)
        if characters_only and is_punctuation(token):
            continue
        if hide_vulgar and creates_vulgar(before, as_text(token), after):
            hidden += 1
            continue
        chosen.append(Candidate(token, float(distribution[token_id])))
        if len(chosen) == top_k:
            break
    return chosen, hidden


def fill_mask(encoder: BertEncoder, sentence: str, top_k: int = 5, hide_vulgar: bool = True,
              characters_only: bool = False) -> FillMaskResult:
    """Top-k candidates with probabilities for every [MASK], from one forward pass.

    ``hide_vulgar`` leaves out candidates that would complete a word of the vulgar-word list
    (counted in ``MaskSlot.hidden``); the next candidates move up. ``characters_only``: punctuation and
    symbols are not offered either (the fill-mask page asks for words; their probability stays in the
    distribution).
    """
    return fill_masks(encoder, [sentence], top_k, hide_vulgar, characters_only)[0]


def fill_masks(encoder: BertEncoder, sentences: list[str], top_k: int = 5,
               hide_vulgar: bool = True, characters_only: bool = False) -> list[FillMaskResult]:
    """:func:`fill_mask` of each sentence, all from one batched forward pass."""
    if not 1 <= top_k <= 50:
        raise LabError("out_of_range", name="top_k", low=1, high=50)
    sentences = [check_masked_sentence(sentence, encoder.mask_token) for sentence in sentences]
    for sentence in sentences:
        encoder.check_length(sentence)
    batch, outputs = encoder.forward(sentences)
    logits = mlm_logits(outputs)
    results = []
    for row, sentence in enumerate(sentences):
        ids = batch["input_ids"][row][batch["attention_mask"][row].bool()]
        positions = (ids == encoder.tokenizer.mask_token_id).nonzero().flatten().tolist()
        probs = torch.softmax(logits[row, positions].float(), dim=-1).numpy()
        slots = []
        for k, position in enumerate(positions):
            distribution = probs[k].astype(np.float64)
            before, after = around(sentence, encoder.mask_token, k)
            chosen, hidden = top_candidates(encoder, distribution, top_k, before, after, hide_vulgar,
                                            characters_only)
            slots.append(MaskSlot(k, position, chosen, distribution, hidden))
        results.append(FillMaskResult(sentence, encoder.tokenizer.convert_ids_to_tokens(ids.tolist()), slots))
    return results
