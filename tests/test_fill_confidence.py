"""``core.fill_confidence``: the sureness signal at every gap, its thresholds computed from the stored check-set
measurements, and those measurements agreeing with the shipped mini-bert-zh."""
from __future__ import annotations

import pytest

from core import fill_confidence as fc
from core import fill_examples as fx
from core.fillmask.prediction import fill_mask
from core.fillmask.tokens import is_punctuation
from core.fillmask.words import word_candidates


@pytest.fixture(scope="module")
def stored():
    calibration = fc.load()
    assert calibration is not None, "run python -m core.fill_confidence"
    return calibration


def _row(top1: float, right: bool) -> fc.Checked:
    return fc.Checked("s", "x[MASK]", "a", right, right, top1, top1 / 2, 1.0)


def test_thresholds_are_computed_from_the_rows():
    rows = [_row(p, ok) for p, ok in ((0.9, True), (0.8, True), (0.7, True), (0.5, True), (0.45, False),
                                      (0.3, False), (0.2, True), (0.1, False), (0.05, False))]
    calibration = fc.Calibration("m", 1, 1, tuple(rows))
    # τ = 0.5 keeps 4 of 5 right answers and lets no wrong one through: J = 0.8, the best (0.2: 1 − 2/4)
    assert calibration.low == 0.5
    # at least 3 in 4 right above 0.45 (4 of 5), not above 0.2 (5 of 7): "sure" starts at the higher of the two
    assert fc.sure_threshold(rows) == 0.45 and calibration.high == 0.5
    assert calibration.level(fc.Signal(0, 1, "a", 0.55, 0.1, 1.0)) == "sure"
    assert calibration.level(fc.Signal(0, 1, "a", 0.2, 0.1, 1.0)) == "guess"
    assert calibration.record("sure") == (4, 4) and calibration.record("guess") == (1, 5)
    never = fc.Calibration("m", 1, 1, tuple(_row(p, False) for p in (0.9, 0.5, 0.2, 0.1, 0.05)))
    assert never.level(fc.Signal(0, 1, "a", 0.99, 0.5, 0.1)) != "sure"  # no level earns "fairly sure"


def test_stored_levels_mean_what_the_page_says(stored):
    assert 0 < stored.low <= stored.high < 1
    right, n = stored.record("sure")
    assert n >= fc.MIN_SURE and right / n >= fc.SURE_PRECISION
    guess_right, guess_n = stored.record("guess")
    assert guess_right / guess_n < 0.25  # below `low` the first answer is mostly wrong
    assert sum(stored.record(level)[1] for level in fc.LEVELS) == len(stored.rows)
    everyday_right, everyday_top3, everyday_n = stored.on_set("everyday_check")
    assert everyday_n == len(fx.answer_set(fx.EVERYDAY_CHECK_FILE)) and everyday_right <= everyday_top3 <= everyday_n


def test_stored_measurements_are_the_shipped_models(bert, stored, tmp_path):
    """Every fifth check sentence measured again gives the stored answer and signal (the whole file:
    ``python -m core.fill_confidence``, about two minutes)."""
    sample = stored.rows[::5]
    path = tmp_path / "sample.tsv"
    accepted = {}
    for name, file in fx.CHECK_SETS.items():
        accepted.update({(name, s): a for s, a in fx.answer_set(file)})
    path.write_text("".join(f"{r.sentence}\t{'|'.join(accepted[r.check_set, r.sentence])}\n" for r in sample),
                    encoding="utf-8")
    again = fc.measure(bert, {"sample": path})
    assert stored.model == bert.name and stored.parameters == sum(p.numel() for p in bert.model.parameters())
    for old, new in zip(sample, again):
        assert (new.answer, new.right, new.right_top3) == (old.answer, old.right, old.right_top3), old.sentence
        assert new.top1 == pytest.approx(old.top1, abs=1e-4) and new.entropy == pytest.approx(old.entropy, abs=1e-3)


def test_everyday_sentences_of_a_student(bert, stored):
    """Sentences of the issue's student (none in the check sets): no punctuation as an answer, and the wrong
    first answers are not called sure."""
    for sentence in ("今天三十八度，太[MASK]了。", "妈妈做了一盘红烧[MASK]。", "他在网上发了一条[MASK][MASK]。"):
        result = fill_mask(bert, sentence, characters_only=True)
        signals = fc.signals(result, word_candidates(bert, sentence))
        assert len(signals) == 1 and not is_punctuation(signals[0].answer)
        assert stored.level(signals[0]) != "sure", (sentence, signals[0])
    sure = fc.signals(fill_mask(bert, "我吃了一个苹[MASK]。", characters_only=True), [])
    assert sure[0].answer == "果" and stored.level(sure[0]) == "sure"
    # a sentence with a run and a single mask: two gaps, in sentence order
    two = "我吃了一个[MASK][MASK]，他喝了一杯牛[MASK]。"
    gaps = fc.signals(fill_mask(bert, two, characters_only=True), word_candidates(bert, two))
    assert [(g.first, g.length) for g in gaps] == [(0, 2), (2, 1)]


def test_thresholds_are_computed_once_per_calibration(stored, monkeypatch):
    """The page asks every gap's level and its record (the level of every check row): the thresholds, each a
    search over all rows, are computed once (recomputed per row they were 0.55 s of a 0.73-s fill-mask run)."""
    calibration = fc.Calibration(stored.model, stored.parameters, stored.layers, stored.rows)
    calls = []
    youden = fc.youden_threshold
    monkeypatch.setattr(fc, "youden_threshold", lambda rows: calls.append(1) or youden(rows))
    records = {level: calibration.record(level) for level in fc.LEVELS}
    assert len(calls) == 1
    assert records == {level: stored.record(level) for level in fc.LEVELS}  # the same records as before
