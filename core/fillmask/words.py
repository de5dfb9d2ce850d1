"""Whole words for a run of adjacent masks (我吃了一个[MASK][MASK]。 → 苹果, 包子, …), by beam search."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..guard.wordfilter import creates_vulgar
from ..models.encoders import BertEncoder
from .masks import around, check_masked_sentence, mask_runs
from .prediction import FillMaskResult
from .tokens import as_text, display, is_punctuation, mlm_logits, ranked, special_ids

WORD_BEAM = 16  # hypotheses kept per position by word_candidates


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
        before, after = around(sentence, mask, first, length)
        hypotheses: list[tuple[list[str], float, list[float]]] = [([], 1.0, [])]
        for j in range(length):
            texts = [before + "".join(as_text(tok) for tok in tokens) + mask * (length - j) + after
                     for tokens, _, _ in hypotheses]
            batch, outputs = encoder.forward(texts)
            probs = torch.softmax(mlm_logits(outputs).float(), dim=-1).numpy()
            special = special_ids(encoder, probs.shape[-1])
            extended = []
            for row, (tokens, score, per_token) in enumerate(hypotheses):
                # the run's next open mask is the ``first``-th mask still in this text
                position = (batch["input_ids"][row] == encoder.tokenizer.mask_token_id).nonzero().flatten()[first]
                distribution = probs[row, int(position)]
                kept = 0
                for token_id in ranked(distribution, special):
                    token = display(encoder, token_id)
                    if is_punctuation(token):  # a word is made of characters, not of 。or ，
                        continue
                    p = float(distribution[token_id])
                    extended.append((tokens + [token], score * p, per_token + [p]))
                    kept += 1
                    if kept == beam:
                        break
            hypotheses = sorted(extended, key=lambda h: -h[1])[:beam]
        words, hidden = [], 0
        for tokens, score, per_token in hypotheses:
            word = "".join(as_text(tok) for tok in tokens)
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
