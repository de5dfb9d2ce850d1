"""How sure the fill-mask model is of its first answer, read from its own distribution, and what that much
sureness has meant on the project's check sentences (``core.fill_examples.CHECK_SETS``).

Every gap of a sentence (one [MASK], or a run of adjacent masks answered as a whole word) gets a
:class:`Signal`: the first answer's probability (a word's left-to-right chain score), its margin over the second
answer and the entropy of the model's distribution at the gap's masks. ``python -m core.fill_confidence``
measures these on every check sentence with the shipped mini-bert-zh and writes them, with whether the first
answer was an accepted one, to ``assets/eval/fill_confidence.json``. The thresholds are computed from those
rows when they are read, never typed: ``low`` is the first-answer probability that best separates right from
wrong answers (Youden's J), ``high`` the lowest one above which at least ``SURE_PRECISION`` of the answers were
right. Of the three signals the first-answer probability separated right from wrong first answers best on those
sentences when this was written (area under the ROC curve 0.81; margin 0.80, entropy 0.75–0.80), so it alone
decides the level; margin and entropy are shown beside it.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from . import fill_examples as fx
from . import results_store
from .fillmask.prediction import FillMaskResult, fill_mask
from .fillmask.words import MaskRun, proposals, word_candidates

CONFIDENCE_FILE = fx.EVAL_DIR / "fill_confidence.json"
VERSION = 1
SURE_PRECISION = 0.75  # "fairly sure": at least three in four such answers were right on the check sentences
MIN_SURE = 5  # ... counted over at least this many answers
LEVELS = ("sure", "unsure", "guess")  # top1 ≥ high, low ≤ top1 < high, top1 < low


@dataclass(frozen=True)
class Signal:
    first: int  # sentence-order index of the gap's first mask
    length: int  # masks in the gap
    answer: str  # the model's first answer (never punctuation nor a special token)
    top1: float  # its probability (a run's left-to-right chain score)
    margin: float  # top1 minus the second answer's
    entropy: float  # bits: of the model's distribution at each of the gap's masks, averaged


def _entropy_bits(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def signals(result: FillMaskResult, runs: Sequence[MaskRun]) -> list[Signal]:
    """One signal per gap of ``result``'s sentence, in sentence order (``runs``: its runs of two or more masks,
    as ``word_candidates`` gives them)."""
    in_run = {run.first + j for run in runs for j in range(run.length)}
    gaps = [(run.first, run.length, [(w.word, w.score) for w in run.words]) for run in runs]
    gaps += [(slot.index, 1, [(c.token, c.score) for c in slot.candidates])
             for slot in result.masks if slot.index not in in_run]
    out = []
    for first, length, ranked in sorted(gaps, key=lambda gap: gap[0]):
        if not ranked:
            continue
        top1 = ranked[0][1]
        second = ranked[1][1] if len(ranked) > 1 else 0.0
        entropy = float(np.mean([_entropy_bits(result.masks[first + j].probabilities) for j in range(length)]))
        out.append(Signal(first, length, ranked[0][0], top1, top1 - second, entropy))
    return out


@dataclass(frozen=True)
class Checked:
    """One check sentence's first gap: its signal and whether the first (and any of the first three) answers
    was an accepted one."""
    check_set: str
    sentence: str
    answer: str
    right: bool
    right_top3: bool
    top1: float
    margin: float
    entropy: float


def measure(encoder, check_sets: dict[str, Path] = fx.CHECK_SETS) -> list[Checked]:
    """The first answer and signal of every check sentence (one gap each), with this encoder."""
    rows = []
    for name, path in check_sets.items():
        for masked, accepted in fx.answer_set(path):
            masked = masked.replace(fx.MASK, encoder.mask_token)
            result = fill_mask(encoder, masked, characters_only=True)
            runs = word_candidates(encoder, masked)
            proposed = proposals(result, runs)
            signal = signals(result, runs)[0]
            rows.append(Checked(name, masked, signal.answer, fx.answer_rank(proposed[:1], accepted) == 1,
                                fx.answer_rank(proposed[:3], accepted) is not None,
                                round(signal.top1, 6), round(signal.margin, 6), round(signal.entropy, 4)))
    return rows


def youden_threshold(rows: Sequence[Checked]) -> float:
    """The first-answer probability τ that maximises (right answers with top1 ≥ τ) / (right answers) minus
    (wrong answers with top1 ≥ τ) / (wrong answers); the lowest such τ."""
    right = sum(r.right for r in rows) or 1
    wrong = sum(not r.right for r in rows) or 1

    def j(tau: float) -> float:
        return (sum(r.right and r.top1 >= tau for r in rows) / right
                - sum(not r.right and r.top1 >= tau for r in rows) / wrong)
    return max(sorted({r.top1 for r in rows}), key=lambda tau: (j(tau), -tau))


def sure_threshold(rows: Sequence[Checked]) -> float:
    """The lowest first-answer probability above which at least ``SURE_PRECISION`` of (at least ``MIN_SURE``)
    answers were right; above every answer when there is none."""
    ranked = sorted(rows, key=lambda r: -r.top1)
    best = 1.0 + 1e-9
    for n in range(MIN_SURE, len(ranked) + 1):
        if sum(r.right for r in ranked[:n]) / n >= SURE_PRECISION:
            best = ranked[n - 1].top1
    return best


@dataclass(frozen=True)
class Calibration:
    model: str
    parameters: int
    layers: int
    rows: tuple[Checked, ...]

    # computed once per calibration: ``record`` asks ``level`` of every row, and recomputing both thresholds there
    # (each O(rows²)) took 0.55 s of the fill-mask page's 0.73-s run, on every run
    @cached_property
    def low(self) -> float:
        return youden_threshold(self.rows)

    @cached_property
    def high(self) -> float:
        return max(sure_threshold(self.rows), self.low)

    def level(self, signal: Signal) -> str:
        if signal.top1 >= self.high:
            return "sure"
        return "unsure" if signal.top1 >= self.low else "guess"

    def record(self, level: str) -> tuple[int, int]:
        """(right first answers, answers) among the check sentences at ``level``."""
        at = [r for r in self.rows if self.level(Signal(0, 1, r.answer, r.top1, r.margin, r.entropy)) == level]
        return sum(r.right for r in at), len(at)

    def on_set(self, check_set: str) -> tuple[int, int, int]:
        """(first answer right, an accepted answer among the first three, sentences) on one check set."""
        rows = [r for r in self.rows if r.check_set == check_set]
        return sum(r.right for r in rows), sum(r.right_top3 for r in rows), len(rows)


def calibrate(encoder) -> Calibration:
    parameters = sum(p.numel() for p in encoder.model.parameters())
    return Calibration(encoder.name, parameters, len(encoder.layer_names) - 1, tuple(measure(encoder)))


def to_json(calibration: Calibration) -> dict:
    return {"version": VERSION, "model": calibration.model, "parameters": calibration.parameters,
            "layers": calibration.layers, "rows": [vars(r) for r in calibration.rows]}


def load(path: Path | str = CONFIDENCE_FILE) -> Calibration | None:
    """The stored measurements, None when the file does not exist yet (LabError when it is unreadable)."""
    data = results_store.load(path, VERSION, lambda d: isinstance(d.get("rows"), list))
    if data is None:
        return None
    return Calibration(data["model"], int(data["parameters"]), int(data["layers"]),
                       tuple(Checked(**row) for row in data["rows"]))


def main(argv: Sequence[str] = ()) -> None:
    from .models.cache import load_encoder
    from .models.catalogue import DEFAULT_BERT

    name = argv[0] if argv else DEFAULT_BERT
    calibration = calibrate(load_encoder(name))
    results_store.save(to_json(calibration), CONFIDENCE_FILE)
    print(f"{CONFIDENCE_FILE}: {len(calibration.rows)} sentences, low={calibration.low:.4f} "
          f"high={calibration.high:.4f}")
    for level in LEVELS:
        right, n = calibration.record(level)
        print(f"  {level}: {right}/{n} first answers right")


if __name__ == "__main__":
    main(sys.argv[1:])
