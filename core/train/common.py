"""Small pieces every trainer shares: seeding, time-based LR schedule, progress lines, checkpoints."""
from __future__ import annotations

import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def lr_at(progress: float, step: int, base_lr: float, warmup_steps: int) -> float:
    """Linear warm-up, then cosine decay over the run's progress (0..1 of the time/step budget)."""
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    return base_lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


class Progress:
    """Prints one line every ``every_s`` seconds: step, loss, tokens per second."""

    def __init__(self, every_s: float = 30.0):
        self.every_s = every_s
        self.last = time.time()
        self.tokens = 0
        self.losses: list[float] = []

    def update(self, step: int, loss: float, tokens: int, extra: str = "") -> None:
        self.tokens += tokens
        self.losses.append(loss)
        now = time.time()
        if now - self.last >= self.every_s:
            rate = self.tokens / (now - self.last)
            print(f"step {step:7d}  loss {np.mean(self.losses):.4f}  {rate:8.0f} tok/s  {extra}", flush=True)
            sys.stdout.flush()
            self.last, self.tokens, self.losses = now, 0, []


def save_checkpoint(path: Path, model, optimizer, state: dict) -> None:
    """Training checkpoint (resume only; never shipped). Written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "state": state}, tmp)
    tmp.replace(path)


def load_checkpoint(path: Path, model, optimizer) -> dict:
    # Our own checkpoint file written by save_checkpoint: tensors and plain dicts only.
    data = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(data["model"])
    optimizer.load_state_dict(data["optimizer"])
    return data["state"]
