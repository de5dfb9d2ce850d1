"""core.train.common.TrainingRun: the step and time budget, the LR schedule's progress, checkpoints, resume."""
from __future__ import annotations

import argparse

import pytest
import torch

from core.train.common import TrainingRun


def _args(max_steps: int = 0, end_at: str | None = None, max_minutes: float = 90.0) -> argparse.Namespace:
    return argparse.Namespace(max_minutes=max_minutes, end_at=end_at, max_steps=max_steps)


@pytest.fixture
def model_and_optimizer():
    model = torch.nn.Linear(2, 2)
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def test_step_budget_progress_and_resume(tmp_path, model_and_optimizer):
    ckpt = tmp_path / "run.pt"
    run = TrainingRun(_args(max_steps=3), ckpt, *model_and_optimizer, save_every_s=3600)
    assert not run.resumed
    fractions = []
    while (fraction := run.progress()) is not None:
        fractions.append(fraction)
        run.stepped()
    assert fractions == pytest.approx([0, 1 / 3, 2 / 3]) and run.step == 3
    assert not ckpt.exists()  # an hour between saves: only the end of a run saves
    run.save()
    resumed = TrainingRun(_args(max_steps=5), ckpt, *model_and_optimizer)
    assert resumed.resumed and resumed.step == 3 and resumed.progress() == pytest.approx(3 / 5)
    assert resumed.state["elapsed"] >= 0


def test_time_budget_and_periodic_saves(tmp_path, model_and_optimizer):
    spent = TrainingRun(_args(end_at="2000-01-01T00:00"), tmp_path / "a.pt", *model_and_optimizer)
    assert spent.progress() is None  # --end-at in the past: nothing left
    fresh = TrainingRun(_args(max_minutes=90.0), tmp_path / "b.pt", *model_and_optimizer, save_every_s=0)
    assert 0 <= fresh.progress() < 0.01  # a fraction of the time budget
    fresh.stepped()
    assert (tmp_path / "b.pt").is_file()  # save_every_s passed: the step saved the checkpoint
