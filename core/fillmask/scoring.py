"""Words the user proposes, scored at the masks."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.encoders import BertEncoder
from .prediction import fill_mask


@dataclass(frozen=True)
class CandidateScore:
    """A word the user proposed, scored at the masks (:func:`candidate_scores`)."""
    word: str
    score: float | None  # the product of ``per_token``; None when the word does not fit the masks
    per_token: tuple[float, ...]  # each token's probability at its mask; empty when it does not fit

    @property
    def fits(self) -> bool:
        return self.score is not None


def candidate_scores(encoder: BertEncoder, sentence: str, candidates: list[str], first_mask: int = 0
                     ) -> list[CandidateScore]:
    """Score user-given words at the masks starting at ``first_mask``.

    A candidate of n tokens occupies n consecutive masks; its score is the product of each
    token's probability at its mask (one forward pass, masks treated as independent, as BERT
    predicts them). A candidate whose length does not fit the masks is reported, not scored.
    """
    result = fill_mask(encoder, sentence, top_k=1)
    vocab = encoder.vocab
    scored = []
    for word in candidates:
        word = word.strip()
        if not word:
            continue
        pieces = encoder.tokens(word)
        slots = result.masks[first_mask:first_mask + len(pieces)]
        unknown = encoder.tokenizer.unk_token
        if len(slots) != len(pieces) or any(p not in vocab or p == unknown for p in pieces):
            scored.append(CandidateScore(word, None, ()))
            continue
        per_token = tuple(float(slot.probabilities[vocab[p]]) for slot, p in zip(slots, pieces))
        scored.append(CandidateScore(word, float(np.prod(per_token)), per_token))
    return scored
