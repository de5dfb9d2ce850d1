"""BERT's pretraining corruption of a sentence: 15% of the tokens chosen; of those 80% → [MASK], 10% → a
random token, 10% unchanged."""
from __future__ import annotations

import random
from dataclasses import dataclass

from ..guard.errors import LabError
from ..guard.validation import check_text
from ..models.encoders import BertEncoder
from .masks import MAX_CHARS


@dataclass
class CorruptedToken:
    token: str
    chosen: bool
    action: str  # "keep" (not chosen), "mask", "random", "unchanged"
    shown: str  # what the model sees


def _corruption_plan(size: int, rng: random.Random, rate: float, normal_count: int) -> list[tuple[str, int]]:
    """(action, random index into the normal ids) per token of one draw; index -1 unless "random"."""
    chosen = set(rng.sample(range(size), max(1, round(rate * size))))
    plan = []
    for i in range(size):
        if i not in chosen:
            plan.append(("keep", -1))
            continue
        roll = rng.random()
        if roll < 0.8:
            plan.append(("mask", -1))
        elif roll < 0.9:
            plan.append(("random", rng.randrange(normal_count)))
        else:
            plan.append(("unchanged", -1))
    return plan


def _corruption_input(encoder: BertEncoder, sentence: str) -> tuple[list[str], list[int]]:
    """The sentence's tokens and the ids a random replacement may take (no special tokens)."""
    sentence = check_text(sentence, MAX_CHARS)
    encoder.check_length(sentence)
    tokens = encoder.tokens(sentence)
    if not tokens:
        raise LabError("empty_input")
    special = set(encoder.tokenizer.all_special_ids)
    return tokens, [i for i in range(len(encoder.tokenizer)) if i not in special]


def mlm_corruption(encoder: BertEncoder, sentence: str, seed: int | None = 0,
                   rate: float = 0.15) -> list[CorruptedToken]:
    """BERT's pretraining corruption of one sentence: ``rate`` of the tokens chosen (at least
    one); of those 80% → [MASK], 10% → a random token, 10% unchanged."""
    tokens, normal_ids = _corruption_input(encoder, sentence)
    out = []
    for token, (action, pick) in zip(tokens, _corruption_plan(len(tokens), random.Random(seed), rate, len(normal_ids))):
        shown = (encoder.tokenizer.convert_ids_to_tokens([normal_ids[pick]])[0] if action == "random"
                 else {"keep": token, "unchanged": token, "mask": encoder.mask_token}[action])
        out.append(CorruptedToken(token, action != "keep", action, shown))
    return out


def corruption_stats(encoder: BertEncoder, sentence: str, draws: int = 400, first_seed: int = 10_000,
                     rate: float = 0.15) -> dict[str, float]:
    """Over ``draws`` corruptions of one sentence (the draws :func:`mlm_corruption` makes with seeds
    ``first_seed`` …): the share of tokens chosen, and of the chosen ones the shares masked, replaced
    by a random token and left unchanged. They approach ``rate`` and 80/10/10 as draws grow."""
    tokens, normal_ids = _corruption_input(encoder, sentence)
    counts = dict.fromkeys(("keep", "mask", "random", "unchanged"), 0)
    for seed in range(first_seed, first_seed + draws):
        for action, _ in _corruption_plan(len(tokens), random.Random(seed), rate, len(normal_ids)):
            counts[action] += 1
    chosen = max(counts["mask"] + counts["random"] + counts["unchanged"], 1)
    total = max(sum(counts.values()), 1)
    return {"chosen": (total - counts["keep"]) / total, "mask": counts["mask"] / chosen,
            "random": counts["random"] / chosen, "unchanged": counts["unchanged"] / chosen}
