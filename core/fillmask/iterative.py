"""Filling the masks one at a time, the most confident first, re-running the model after each."""
from __future__ import annotations

from dataclasses import dataclass

from ..models.encoders import BertEncoder
from .masks import check_masked_sentence
from .prediction import FillMaskResult, MaskSlot, fill_mask
from .tokens import as_text


@dataclass
class FillStep:
    step: int
    text_before: str
    filled_mask: int  # index among the masks still open before this step, in sentence order
    token: str
    score: float
    open_masks: list[MaskSlot]  # top-k predictions for every open mask before this step (no full distributions)
    text_after: str


def iterative_fill(encoder: BertEncoder, sentence: str, top_k: int = 5, hide_vulgar: bool = True,
                   characters_only: bool = False, first: FillMaskResult | None = None) -> list[FillStep]:
    """Fill the most confident mask, re-run the model, repeat until no mask is left. A step keeps the
    top-k candidates of its open masks, not their distributions over the whole vocabulary.

    ``first``: :func:`fill_mask` of ``sentence`` with the same settings, when the caller has it already (the
    first step then runs no model)."""
    steps: list[FillStep] = []
    text = check_masked_sentence(sentence, encoder.mask_token)
    if first is not None and first.sentence != text:
        raise ValueError("first must be the fill_mask result of sentence")
    for _ in range(text.count(encoder.mask_token)):  # each step fills exactly one mask
        result = first if first is not None and not steps else fill_mask(encoder, text, top_k, hide_vulgar,
                                                                          characters_only)
        best = max(result.masks, key=lambda slot: slot.candidates[0].score)
        choice = best.candidates[0]
        parts = text.split(encoder.mask_token)
        filled = (encoder.mask_token.join(parts[:best.index + 1]) + as_text(choice.token)
                  + encoder.mask_token.join(parts[best.index + 1:]))
        open_masks = [MaskSlot(m.index, m.token_index, m.candidates, m.probabilities[:0]) for m in result.masks]
        steps.append(FillStep(len(steps) + 1, text, best.index, choice.token, choice.score, open_masks, filled))
        text = filled
    return steps
