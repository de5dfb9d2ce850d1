"""How sure the fill-mask model is of its first answer, read from its own distribution, and how often answers
that sure were right on sentences the thresholds never saw.

Every gap of a sentence (one [MASK], or a run of adjacent masks answered as a whole word) gets a
:class:`Signal`: the first answer's probability (a word's left-to-right chain score), its margin over the second
answer and the entropy of the model's distribution at the gap's masks. ``python -m core.fillmask.confidence``
measures these with the shipped mini-bert-zh on the check sentences and on the held-out everyday sentences and
writes them, with whether the first answer was an accepted one, to ``assets/eval/fill_confidence.json``.

The calibration follows ``core.compute.stats`` (policy 4): thresholds are computed when the rows are read, never typed,
and only from ``FIT_SETS``: check sentences no training run was chosen on (the demo set steered training and is
not measured; the words and everyday sets were written before the runs they check and gated one that did not
ship). Characters and whole words get their own thresholds: a word's chain score multiplies its characters'
probabilities, so the same sureness is a smaller number. ``low`` is the first-answer probability that best
separates right from wrong answers (Youden's J), ``high`` the lowest one above which at least ``SURE_PRECISION``
of the answers were right. A band keeps its strong name only where the out-of-fold labels (``stats.cross_validated``
on ``FIT_SETS``) support it: "fairly sure" where the band was right more often than wrong and ``SURE_PRECISION``
lies within its Wilson interval, "probably wrong" where it was wrong more often than right beyond sampling error;
otherwise "not sure" and "a guess". The page's "N of M right" are counted on ``HELDOUT``, which nothing is fitted
on. Of the three signals the first-answer probability separated right from wrong first answers best when this
was written (on the 81 check sentences of the first calibration, demo set included: area under the ROC curve
0.81; margin 0.80, entropy 0.75–0.80), so it alone decides the level; margin
and entropy are shown beside it.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..compute import stats
from ..content import results_store
from . import examples as fx
from .prediction import FillMaskResult, fill_mask
from .words import MaskRun, proposals, word_candidates

CONFIDENCE_FILE = fx.EVAL_DIR / "fill_confidence.json"
VERSION = 2  # 2: no demo set, the held-out set, a gap's length; earlier files hold rows the thresholds chose on
FIT_SETS = {"words_check": fx.WORDS_CHECK_FILE, "everyday_check": fx.EVERYDAY_CHECK_FILE,
            "chars_check": fx.CHARS_CHECK_FILE}
HELDOUT = "heldout"
MEASURED_SETS = {**FIT_SETS, HELDOUT: fx.HELDOUT_FILE}
DIGITS = 6  # probabilities are stored and compared at this many decimals: a value equal to a threshold is at it
SURE_PRECISION = 0.75  # "fairly sure": at least three in four such answers right
MIN_SURE = 5  # ... counted over at least this many answers
FOLDS = 5
KINDS = ("character", "word")  # one [MASK]; a run of masks answered as a whole word
BANDS = ("high", "middle", "low")  # top1 ≥ high, low ≤ top1 < high, top1 < low
LEVELS = ("sure", "unsure", "guess", "wrong")  # what a band is called: see ``Calibration.level``


def kind_of(length: int) -> str:
    return "character" if length == 1 else "word"


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
    """One measured sentence's gap: its signal and whether the first (and any of the first three) answers was an
    accepted one."""
    check_set: str
    sentence: str
    length: int  # masks in the gap
    answer: str
    right: bool
    right_top3: bool
    top1: float
    margin: float
    entropy: float

    @property
    def kind(self) -> str:
        return kind_of(self.length)


def measure(encoder, check_sets: dict[str, Path] = MEASURED_SETS) -> list[Checked]:
    """The first answer and signal of every sentence of ``check_sets`` (one gap each), with this encoder."""
    rows = []
    for name, path in check_sets.items():
        for masked, accepted in fx.answer_set(path):
            masked = masked.replace(fx.MASK, encoder.mask_token)
            result = fill_mask(encoder, masked, characters_only=True)
            runs = word_candidates(encoder, masked)
            proposed = proposals(result, runs)
            signal = signals(result, runs)[0]
            rows.append(Checked(name, masked, signal.length, signal.answer,
                                fx.answer_rank(proposed[:1], accepted) == 1,
                                fx.answer_rank(proposed[:3], accepted) is not None,
                                round(signal.top1, DIGITS), round(signal.margin, DIGITS), round(signal.entropy, 4)))
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
class Thresholds:
    low: float
    high: float

    def band(self, top1: float) -> str:
        top1 = round(top1, DIGITS)  # as the rows the thresholds come from were stored
        if top1 >= self.high:
            return "high"
        return "middle" if top1 >= self.low else "low"


def fit(rows: Sequence[Checked]) -> Thresholds:
    low = youden_threshold(rows)
    return Thresholds(low, max(sure_threshold(rows), low))


def _banding(train: Sequence[Checked]) -> Callable[[Checked], str]:
    """The band of a row by thresholds fitted on ``train``."""
    limits = fit(train)
    return lambda row: limits.band(row.top1)


def _records(rows: Sequence[Checked], labels: Sequence[str]) -> dict[str, stats.Accuracy]:
    """Right first answers of ``rows`` per label (only labels that some row has)."""
    return {label: stats.accuracy([r.right for r, own in zip(rows, labels) if own == label])
            for label in dict.fromkeys(labels)}


def sure_supported(record: stats.Accuracy | None) -> bool:
    """Right more often than wrong beyond sampling error, and ``SURE_PRECISION`` within the interval."""
    return record is not None and record.interval[0] > 0.5 and record.interval[1] >= SURE_PRECISION


def wrong_supported(record: stats.Accuracy | None) -> bool:
    """Wrong more often than right beyond sampling error."""
    return record is not None and record.interval[1] < 0.5


@dataclass(frozen=True)
class Calibration:
    model: str
    parameters: int
    layers: int
    rows: tuple[Checked, ...]

    def fitting(self, kind: str) -> list[Checked]:
        return [r for r in self.rows if r.check_set in FIT_SETS and r.kind == kind]

    def heldout(self, kind: str) -> list[Checked]:
        return [r for r in self.rows if r.check_set == HELDOUT and r.kind == kind]

    # computed once per calibration: the page asks a level and a record at every gap of every run
    @cached_property
    def thresholds(self) -> dict[str, Thresholds]:
        return {kind: fit(self.fitting(kind)) for kind in KINDS}

    @cached_property
    def out_of_fold(self) -> dict[str, dict[str, stats.Accuracy]]:
        """Per kind and band: the fitting rows' right first answers, each row banded by thresholds fitted on the
        other folds (``stats.cross_validated``)."""
        out = {}
        for kind in KINDS:
            rows = self.fitting(kind)
            out[kind] = _records(rows, stats.cross_validated(rows, _banding, folds=FOLDS))
        return out

    @cached_property
    def names(self) -> dict[str, dict[str, str]]:
        """Per kind, what each band is called: the strong names only where the out-of-fold record supports them."""
        return {kind: {"high": "sure" if sure_supported(oof.get("high")) else "unsure", "middle": "unsure",
                       "low": "wrong" if wrong_supported(oof.get("low")) else "guess"}
                for kind, oof in self.out_of_fold.items()}

    def level(self, signal: Signal) -> str:
        kind = kind_of(signal.length)
        return self.names[kind][self.thresholds[kind].band(signal.top1)]

    @cached_property
    def _heldout_records(self) -> dict[tuple[str, str], stats.Accuracy]:
        records = {}
        for kind in KINDS:
            rows = self.heldout(kind)
            levels = [self.level(Signal(0, r.length, r.answer, r.top1, r.margin, r.entropy)) for r in rows]
            records.update({(kind, level): record for level, record in _records(rows, levels).items()})
        return records

    def record(self, kind: str, level: str) -> stats.Accuracy | None:
        """Right first answers of the held-out sentences of this kind at ``level``; None where there is none."""
        return self._heldout_records.get((kind, level))

    def ranges(self, kind: str) -> list[tuple[str, float]]:
        """The levels of ``kind`` from the surest down, each with the lowest first-answer probability it takes
        (0 for the last); a band no probability falls in, or named as the one above, adds none."""
        limits, names = self.thresholds[kind], self.names[kind]
        out: list[tuple[str, float]] = []
        for band, lowest in (("high", limits.high), ("middle", limits.low), ("low", 0.0)):
            if out and out[-1][0] == names[band]:
                out[-1] = (names[band], lowest)
            elif lowest <= 1 and (not out or lowest < out[-1][1]):
                out.append((names[band], lowest))
        return out

    def heldout_sentences(self) -> int:
        return sum(r.check_set == HELDOUT for r in self.rows)

    def fitting_sentences(self) -> int:
        return sum(r.check_set in FIT_SETS for r in self.rows)

    def on_set(self, check_set: str) -> tuple[int, int, int]:
        """(first answer right, an accepted answer among the first three, sentences) on one measured set."""
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
    from ..models.cache import load_encoder
    from ..models.catalogue import DEFAULT_BERT

    name = argv[0] if argv else DEFAULT_BERT
    calibration = calibrate(load_encoder(name))
    results_store.save(to_json(calibration), CONFIDENCE_FILE)
    print(f"{CONFIDENCE_FILE}: {calibration.fitting_sentences()} fitting sentences, "
          f"{calibration.heldout_sentences()} held-out")
    for kind in KINDS:
        limits = calibration.thresholds[kind]
        print(f"{kind}: low={limits.low:.6f} high={limits.high:.6f}")
        for band in BANDS:
            name = calibration.names[kind][band]
            oof = calibration.out_of_fold[kind].get(band)
            print(f"  {band} ({name}): out of fold {_figure(oof)}")
        for level in LEVELS:
            held = calibration.record(kind, level)
            if held:
                print(f"  held out, {level}: {_figure(held)}")


def _figure(record: stats.Accuracy | None) -> str:
    if record is None:
        return "none"
    low, high = record.interval
    return f"{record.right:g}/{record.n} right ({record.percent()}, 95% {low:.0%}–{high:.0%})"


if __name__ == "__main__":
    main(sys.argv[1:])
