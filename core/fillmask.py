"""BERT's masked-language-model view: fill one or several [MASK]s, compare candidates, replay
iterative filling, and show the pretraining corruption (15% chosen: 80% [MASK], 10% random, 10% kept).
"""
from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .errors import LabError
from .models.encoders import BertEncoder
from .validation import check_length, check_text
from .wordfilter import creates_vulgar

MAX_MASKS = 16
MAX_CHARS = 500
WORD_BEAM = 16  # hypotheses kept per position by word_candidates
INPUT_MODES = ("masked", "word", "chars")  # masked_input: typed [MASK]s, a word to mask, characters to mask
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
    hidden: int = 0  # vulgar candidates left out of ``candidates`` (they stay in ``probabilities``)


@dataclass
class FillMaskResult:
    sentence: str
    tokens: list[str]
    masks: list[MaskSlot]


@dataclass
class WordCandidate:
    word: str
    score: float  # left-to-right chain score: P(c1 | context) · P(c2 | context, c1) · …
    per_token: list[float]


@dataclass
class MaskRun:
    first: int  # sentence-order index of the run's first mask
    length: int  # adjacent masks in the run (2 or more)
    words: list[WordCandidate]
    hidden: int = 0


@dataclass(frozen=True)
class CandidateScore:
    """A word the user proposed, scored at the masks (:func:`candidate_scores`)."""
    word: str
    score: float | None  # the product of ``per_token``; None when the word does not fit the masks
    per_token: tuple[float, ...]  # each token's probability at its mask; empty when it does not fit

    @property
    def fits(self) -> bool:
        return self.score is not None


@dataclass
class FillStep:
    step: int
    text_before: str
    filled_mask: int  # index among the masks still open before this step, in sentence order
    token: str
    score: float
    open_masks: list[MaskSlot]  # top-k predictions for every open mask before this step (no full distributions)
    text_after: str


def normalise_masks(sentence: str, mask_token: str = "[MASK]") -> str:
    """Accept [mask], ［MASK］ and similar spellings a user types."""
    return _MASK_VARIANTS.sub(mask_token, sentence)


def check_masked_sentence(sentence: str, mask_token: str = "[MASK]") -> str:
    sentence = normalise_masks((sentence or "").strip(), mask_token)
    if not sentence:
        raise LabError("empty_input")
    check_length(sentence, MAX_CHARS)
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


def _around(sentence: str, mask_token: str, first: int, length: int = 1) -> tuple[str, str]:
    """Text before the ``first``-th mask and after the run of ``length`` masks starting there."""
    parts = sentence.split(mask_token)
    return mask_token.join(parts[:first + 1]), mask_token.join(parts[first + length:])


def _ranked(distribution: np.ndarray, excluded: list[int]) -> np.ndarray:
    ranking = distribution.astype(np.float64).copy()
    ranking[excluded] = -1.0
    return np.argsort(-ranking, kind="stable")


def _special_ids(encoder: BertEncoder, size: int) -> list[int]:
    # Special tokens ([MASK], [CLS], [SEP], [PAD], [UNK]) are never offered as fillers: a predicted
    # [MASK] would re-open the slot and iterative_fill would loop forever. They stay in the distribution.
    return [i for i in encoder.tokenizer.all_special_ids if 0 <= i < size]


def top_candidates(encoder, distribution: np.ndarray, top_k: int, before: str = "", after: str = "",
                   hide_vulgar: bool = True, characters_only: bool = False) -> tuple[list[Candidate], int]:
    """The ``top_k`` most probable tokens of ``distribution`` (over ``encoder.tokenizer``'s vocabulary,
    special tokens never offered; ``characters_only``: punctuation and symbols neither) for the gap between
    ``before`` and ``after``, and how many were left out because they would complete a vulgar word
    (``hide_vulgar``). Any encoder with a tokenizer."""
    chosen, hidden = [], 0
    for token_id in _ranked(distribution, _special_ids(encoder, distribution.shape[-1])):
        token = _display(encoder, token_id)
        if characters_only and _is_punctuation(token):
            continue
        if hide_vulgar and creates_vulgar(before, _as_text(token), after):
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
    logits = _mlm_logits(outputs)
    results = []
    for row, sentence in enumerate(sentences):
        ids = batch["input_ids"][row][batch["attention_mask"][row].bool()]
        positions = (ids == encoder.tokenizer.mask_token_id).nonzero().flatten().tolist()
        probs = torch.softmax(logits[row, positions].float(), dim=-1).numpy()
        slots = []
        for k, position in enumerate(positions):
            distribution = probs[k].astype(np.float64)
            before, after = _around(sentence, encoder.mask_token, k)
            chosen, hidden = top_candidates(encoder, distribution, top_k, before, after, hide_vulgar,
                                            characters_only)
            slots.append(MaskSlot(k, position, chosen, distribution, hidden))
        results.append(FillMaskResult(sentence, encoder.tokenizer.convert_ids_to_tokens(ids.tolist()), slots))
    return results


def _is_punctuation(token: str) -> bool:
    return all(unicodedata.category(ch).startswith(("P", "S")) for ch in _as_text(token))


def mask_runs(sentence: str, mask_token: str = "[MASK]") -> list[tuple[int, int]]:
    """(first mask index, length) of every run of two or more directly adjacent masks."""
    runs, index, cursor = [], 0, 0
    while (found := sentence.find(mask_token, cursor)) != -1:
        length = 1
        while sentence.startswith(mask_token, found + length * len(mask_token)):
            length += 1
        if length > 1:
            runs.append((index, length))
        index += length
        cursor = found + length * len(mask_token)
    return runs


@torch.inference_mode()
def word_candidates(encoder: BertEncoder, sentence: str, top_n: int = 5, beam: int = WORD_BEAM,
                    hide_vulgar: bool = True) -> list[MaskRun]:
    """Ranked whole words for every run of adjacent masks (我吃了一个[MASK][MASK]。 → 苹果, 包子, …).

    Beam search over the run, left to right: each hypothesis fills the run's next mask and the
    model is run again, so a word's score is the chain P(c1 | context) · P(c2 | context, c1) · …
    (the scores over all words sum to at most 1). It is a score of this left-to-right decoding, not a
    probability the MLM gives the word: an MLM defines no joint distribution, and chaining the same
    conditionals right to left gives another number. Punctuation and
    symbols are not word characters and are skipped. Masks outside the run stay masked. One
    batched forward pass per position in the run.
    """
    sentence = check_masked_sentence(sentence, encoder.mask_token)
    encoder.check_length(sentence)
    mask = encoder.mask_token
    runs = []
    for first, length in mask_runs(sentence, mask):
        before, after = _around(sentence, mask, first, length)
        hypotheses: list[tuple[list[str], float, list[float]]] = [([], 1.0, [])]
        for j in range(length):
            texts = [before + "".join(_as_text(tok) for tok in tokens) + mask * (length - j) + after
                     for tokens, _, _ in hypotheses]
            batch, outputs = encoder.forward(texts)
            probs = torch.softmax(_mlm_logits(outputs).float(), dim=-1).numpy()
            special = _special_ids(encoder, probs.shape[-1])
            extended = []
            for row, (tokens, score, per_token) in enumerate(hypotheses):
                # the run's next open mask is the ``first``-th mask still in this text
                position = (batch["input_ids"][row] == encoder.tokenizer.mask_token_id).nonzero().flatten()[first]
                distribution = probs[row, int(position)]
                kept = 0
                for token_id in _ranked(distribution, special):
                    token = _display(encoder, token_id)
                    if _is_punctuation(token):  # a word is made of characters, not of 。or ，
                        continue
                    p = float(distribution[token_id])
                    extended.append((tokens + [token], score * p, per_token + [p]))
                    kept += 1
                    if kept == beam:
                        break
            hypotheses = sorted(extended, key=lambda h: -h[1])[:beam]
        words, hidden = [], 0
        for tokens, score, per_token in hypotheses:
            word = "".join(_as_text(tok) for tok in tokens)
            if hide_vulgar and creates_vulgar(before, word, after):
                hidden += 1
                continue
            words.append(WordCandidate(word, score, per_token))
        runs.append(MaskRun(first, length, words[:top_n], hidden))
    return runs


def proposals(result: FillMaskResult, runs: list[MaskRun]) -> list[str]:
    """What the model proposes for a sentence with one gap, best first: the whole words of its first run
    of masks, else the characters of its first mask (the form of the evaluation sets' answers)."""
    return [w.word for w in runs[0].words] if runs else [c.token for c in result.masks[0].candidates]


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


def masked_input(encoder: BertEncoder, mode: str, *, sentence: str = "", plain: str = "", word: str = "",
                 chars: Sequence[int] = ()) -> str:
    """The sentence BERT sees, made one of the fill-mask page's three ways (``INPUT_MODES``): typed with
    [MASK]s; a plain sentence with every occurrence of ``word`` masked, one [MASK] per token; or a plain
    sentence with the characters at the positions ``chars`` masked. Bad input raises LabError."""
    if mode not in INPUT_MODES:  # the page offers these only: a wrong mode is a caller's bug
        raise ValueError(f"mode must be one of {INPUT_MODES}, not {mode!r}")
    if mode == "masked":
        return check_masked_sentence(sentence, encoder.mask_token)
    text = (plain or "").strip() if mode == "word" else (plain or "")
    if not text.strip():
        raise LabError("empty_input")
    check_length(text, MAX_CHARS)  # before masking: the message gives the length the user typed
    if mode == "word":
        if not (word or "").strip():
            raise LabError("empty_word")
        raw = whole_word_mask(text, word.strip(), encoder)
    else:
        chosen = set(chars)
        raw = "".join(encoder.mask_token if i in chosen else c for i, c in enumerate(text))
    return check_masked_sentence(raw, encoder.mask_token)


def whole_word_mask(sentence: str, word: str, encoder: BertEncoder | None = None) -> str:
    """Replace every occurrence of ``word`` by one [MASK] per token (per character without an encoder)."""
    from .occurrences import find_spans

    spans = find_spans(sentence, word)
    if not spans:
        raise LabError("word_not_in_sentence", word=word)
    mask = encoder.mask_token if encoder else "[MASK]"
    out, cursor = [], 0
    for start, end in spans:
        piece = sentence[start:end]
        count = len(encoder.tokens(piece)) if encoder else len(piece)
        out.extend([sentence[cursor:start], mask * count])
        cursor = end
    out.append(sentence[cursor:])
    return "".join(out)


def iterative_fill(encoder: BertEncoder, sentence: str, top_k: int = 5, hide_vulgar: bool = True,
                   characters_only: bool = False) -> list[FillStep]:
    """Fill the most confident mask, re-run the model, repeat until no mask is left. A step keeps the
    top-k candidates of its open masks, not their distributions over the whole vocabulary."""
    steps: list[FillStep] = []
    text = check_masked_sentence(sentence, encoder.mask_token)
    for _ in range(text.count(encoder.mask_token)):  # each step fills exactly one mask
        result = fill_mask(encoder, text, top_k, hide_vulgar, characters_only)
        best = max(result.masks, key=lambda slot: slot.candidates[0].score)
        choice = best.candidates[0]
        parts = text.split(encoder.mask_token)
        filled = (encoder.mask_token.join(parts[:best.index + 1]) + _as_text(choice.token)
                  + encoder.mask_token.join(parts[best.index + 1:]))
        open_masks = [MaskSlot(m.index, m.token_index, m.candidates, m.probabilities[:0]) for m in result.masks]
        steps.append(FillStep(len(steps) + 1, text, best.index, choice.token, choice.score, open_masks, filled))
        text = filled
    return steps


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


def next_sentence(encoder: BertEncoder, first: str, second: str) -> float:
    """P(IsNext) of sentence B after sentence A (BERT's second pre-training task)."""
    return encoder.next_sentence_probability(check_text(first, MAX_CHARS), check_text(second, MAX_CHARS))
