"""BERT's masked-language-model view: fill one or several [MASK]s, compare candidates, replay
iterative filling, and show the pretraining corruption (15% chosen: 80% [MASK], 10% random, 10% kept).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

import numpy as np
import torch

from .encoders import BertEncoder
from .errors import LabError

MAX_MASKS = 16
MAX_CHARS = 500
_MASK_VARIANTS = re.compile(r"[\[［]\s*mask\s*[\]］]", re.IGNORECASE)


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


@dataclass
class FillMaskResult:
    sentence: str
    tokens: list[str]
    masks: list[MaskSlot]


@dataclass
class FillStep:
    step: int
    text_before: str
    filled_mask: int  # index among the masks still open before this step, in sentence order
    token: str
    score: float
    open_masks: list[MaskSlot]  # predictions for every open mask before this step
    text_after: str


def normalise_masks(sentence: str, mask_token: str = "[MASK]") -> str:
    """Accept [mask], ［MASK］ and similar spellings a user types."""
    return _MASK_VARIANTS.sub(mask_token, sentence)


def check_masked_sentence(sentence: str, mask_token: str = "[MASK]") -> str:
    sentence = normalise_masks((sentence or "").strip(), mask_token)
    if not sentence:
        raise LabError("empty_input")
    if len(sentence) > MAX_CHARS:
        raise LabError("too_long", length=len(sentence), limit=MAX_CHARS)
    count = sentence.count(mask_token)
    if count == 0:
        raise LabError("no_mask")
    if count > MAX_MASKS:
        raise LabError("too_many_masks", count=count, limit=MAX_MASKS)
    if not re.sub(r"[\s\W_]", "", sentence.replace(mask_token, "")):
        raise LabError("only_masks")
    return sentence


def _mlm_logits(outputs) -> torch.Tensor:
    logits = getattr(outputs, "prediction_logits", None)
    return logits if logits is not None else outputs.logits


def _display(encoder: BertEncoder, token_id: int) -> str:
    return encoder.tokenizer.convert_ids_to_tokens(int(token_id))


def _as_text(token: str) -> str:
    """A WordPiece continuation (##ing) is glued to the previous text without its marker."""
    return token[2:] if token.startswith("##") else token


def fill_mask(encoder: BertEncoder, sentence: str, top_k: int = 5) -> FillMaskResult:
    """Top-k candidates with probabilities for every [MASK], from one forward pass."""
    if not 1 <= top_k <= 50:
        raise LabError("bad_value", detail="top_k must be between 1 and 50")
    sentence = check_masked_sentence(sentence, encoder.mask_token)
    encoder.check_length(sentence)
    batch, outputs = encoder.forward([sentence])
    ids = batch["input_ids"][0]
    positions = (ids == encoder.tokenizer.mask_token_id).nonzero().flatten().tolist()
    probs = torch.softmax(_mlm_logits(outputs)[0].float(), dim=-1).numpy()
    # Special tokens ([MASK], [CLS], [SEP], [PAD], [UNK]) are never offered as fillers: a predicted
    # [MASK] would re-open the slot and iterative_fill would loop forever. They stay in the distribution.
    special = [i for i in encoder.tokenizer.all_special_ids if 0 <= i < probs.shape[-1]]
    slots = []
    for k, position in enumerate(positions):
        distribution = probs[position].astype(np.float64)
        ranking = distribution.copy()
        ranking[special] = -1.0
        top = np.argsort(-ranking, kind="stable")[:top_k]
        slots.append(MaskSlot(k, position, [Candidate(_display(encoder, t), float(distribution[t])) for t in top],
                              distribution))
    return FillMaskResult(sentence, encoder.tokenizer.convert_ids_to_tokens(ids.tolist()), slots)


def candidate_scores(encoder: BertEncoder, sentence: str, candidates: list[str], first_mask: int = 0
                     ) -> list[dict]:
    """Score user-given words at the masks starting at ``first_mask``.

    A candidate of n tokens occupies n consecutive masks; its score is the product of each
    token's probability at its mask (one forward pass, masks treated as independent, as BERT
    predicts them). A candidate whose length does not fit the masks is reported, not scored.
    """
    result = fill_mask(encoder, sentence, top_k=1)
    vocab = encoder.tokenizer.get_vocab()
    scored = []
    for word in candidates:
        word = word.strip()
        if not word:
            continue
        pieces = encoder.tokenizer.tokenize(word)
        slots = result.masks[first_mask:first_mask + len(pieces)]
        unknown = encoder.tokenizer.unk_token
        if len(slots) != len(pieces) or any(p not in vocab or p == unknown for p in pieces):
            scored.append({"word": word, "score": None, "per_token": [], "fits": False})
            continue
        per_token = [float(slot.probabilities[vocab[p]]) for slot, p in zip(slots, pieces)]
        scored.append({"word": word, "score": float(np.prod(per_token)), "per_token": per_token, "fits": True})
    return scored


def whole_word_mask(sentence: str, word: str, encoder: BertEncoder | None = None) -> str:
    """Replace every occurrence of ``word`` by one [MASK] per token (per character without an encoder)."""
    from .occurrences import find_spans

    spans = find_spans(sentence, word)
    if not spans:
        raise LabError("bad_value", detail=f"“{word}” does not occur in the sentence")
    mask = encoder.mask_token if encoder else "[MASK]"
    out, cursor = [], 0
    for start, end in spans:
        piece = sentence[start:end]
        count = len(encoder.tokenizer.tokenize(piece)) if encoder else len(piece)
        out.extend([sentence[cursor:start], mask * count])
        cursor = end
    out.append(sentence[cursor:])
    return "".join(out)


def iterative_fill(encoder: BertEncoder, sentence: str, top_k: int = 5) -> list[FillStep]:
    """Fill the most confident mask, re-run the model, repeat until no mask is left."""
    steps = []
    text = check_masked_sentence(sentence, encoder.mask_token)
    for _ in range(text.count(encoder.mask_token)):  # each step fills exactly one mask
        result = fill_mask(encoder, text, top_k)
        best = max(result.masks, key=lambda slot: slot.candidates[0].score)
        choice = best.candidates[0]
        parts = text.split(encoder.mask_token)
        filled = encoder.mask_token.join(parts[:best.index + 1]) + _as_text(choice.token) + encoder.mask_token.join(parts[best.index + 1:])
        steps.append(FillStep(len(steps) + 1, text, best.index, choice.token, choice.score, result.masks, filled))
        text = filled
    return steps


@dataclass
class CorruptedToken:
    token: str
    chosen: bool
    action: str  # "keep" (not chosen), "mask", "random", "unchanged"
    shown: str  # what the model sees


def mlm_corruption(encoder: BertEncoder, sentence: str, seed: int | None = 0, rate: float = 0.15) -> list[CorruptedToken]:
    """BERT's pretraining corruption of one sentence: ``rate`` of the tokens chosen (at least
    one); of those 80% → [MASK], 10% → a random token, 10% unchanged."""
    sentence = (sentence or "").strip()
    if not sentence:
        raise LabError("empty_input")
    encoder.check_length(sentence)
    rng = random.Random(seed)
    tokens = encoder.tokenizer.tokenize(sentence)
    if not tokens:
        raise LabError("empty_input")
    chosen = set(rng.sample(range(len(tokens)), max(1, round(rate * len(tokens)))))
    special = set(encoder.tokenizer.all_special_ids)
    normal_ids = [i for i in range(len(encoder.tokenizer)) if i not in special]
    out = []
    for i, token in enumerate(tokens):
        if i not in chosen:
            out.append(CorruptedToken(token, False, "keep", token))
            continue
        roll = rng.random()
        if roll < 0.8:
            out.append(CorruptedToken(token, True, "mask", encoder.mask_token))
        elif roll < 0.9:
            out.append(CorruptedToken(token, True, "random",
                                      encoder.tokenizer.convert_ids_to_tokens(rng.choice(normal_ids))))
        else:
            out.append(CorruptedToken(token, True, "unchanged", token))
    return out
