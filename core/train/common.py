"""Small pieces every trainer shares: seeding, the run's arguments and setup, time-based LR schedule,
progress lines, checkpoints."""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def trainer_parser(doc: str | None, unit: str) -> argparse.ArgumentParser:
    """The neural trainers' command line with the arguments they share: the corpus (``unit``: what one mix
    weight repeats, e.g. "paragraphs"), the vocabulary, the output directory and the resume checkpoint."""
    from .corpus import DEFAULT_CORPUS

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=[str(DEFAULT_CORPUS)], metavar="PATH[:N]",
                        help=f"corpus files; PATH:N puts a file's {unit} N times into the mix (oversampling)")
    parser.add_argument("--vocab", required=True, help="vocab.txt built by core.train.vocab")
    parser.add_argument("--out", required=True)
    parser.add_argument("--checkpoint", default=None, help="resume file (default: OUT/../.ckpt/<model>.pt)")
    return parser


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of the neural trainers (BERT, ELMo) beyond their model and data: the time and step
    budget, precision, threads, device, seed, export-only."""
    parser.add_argument("--max-minutes", type=float, default=90.0, help="training time budget")
    parser.add_argument("--end-at", default=None,
                        help="wall-clock end, e.g. 2026-12-02T15:25 (overrides --max-minutes; resumable sessions)")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = time only)")
    parser.add_argument("--limit-lines", type=int, default=None)
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast (CPU or CUDA)")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--export-only", action="store_true", help="export the checkpoint as it is, no training")


def start_run(args: argparse.Namespace, model_name: str):
    """Seed and threads set; returns the output directory, the resume checkpoint (``--checkpoint``, else
    OUT/../.ckpt/<model_name>.pt) and the character tokenizer of ``--vocab``."""
    from transformers import BertTokenizer  # the fast tokenizer (BertTokenizerFast is its alias)

    seed_everything(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    out = Path(args.out)
    ckpt = Path(args.checkpoint) if args.checkpoint else out.parent / ".ckpt" / f"{model_name}.pt"
    return out, ckpt, BertTokenizer(vocab=args.vocab, do_lower_case=True, tokenize_chinese_chars=True)


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


class TrainingRun:
    """A run's budget and checkpoints. Resumes ``state`` (step, elapsed seconds) from ``ckpt`` when it
    exists; the budget is ``--max-minutes`` of training, or until ``--end-at`` (counting the time already
    spent), or ``--max-steps``; saves the checkpoint every ``save_every_s`` seconds and at the end."""

    def __init__(self, args: argparse.Namespace, ckpt: Path, model, optimizer, save_every_s: float = 600.0):
        self.args, self.ckpt, self.model, self.optimizer, self.save_every_s = args, ckpt, model, optimizer, save_every_s
        self.state = {"step": 0, "elapsed": 0.0}
        self.resumed = ckpt.exists()
        if self.resumed:
            self.state = load_checkpoint(ckpt, model, optimizer)
            print(f"resumed from {ckpt} at step {self.state['step']}", flush=True)
        self.budget = args.max_minutes * 60
        if args.end_at:
            self.budget = self.state["elapsed"] + (datetime.fromisoformat(args.end_at).timestamp() - time.time())
        self.start, self.last_save = time.time() - self.state["elapsed"], time.time()

    @property
    def step(self) -> int:
        return int(self.state["step"])

    def progress(self) -> float | None:
        """How far through the budget (0..1, for the LR schedule), or ``None`` once it is spent."""
        elapsed = time.time() - self.start
        if elapsed >= self.budget or (self.args.max_steps and self.step >= self.args.max_steps):
            return None
        return self.step / self.args.max_steps if self.args.max_steps else elapsed / self.budget

    def stepped(self) -> None:
        """One optimizer step done: count it, and save the checkpoint when ``save_every_s`` has passed."""
        self.state["step"] += 1
        if time.time() - self.last_save > self.save_every_s:
            self.save()

    def save(self) -> None:
        self.state["elapsed"] = time.time() - self.start
        save_checkpoint(self.ckpt, self.model, self.optimizer, self.state)
        self.last_save = time.time()


class LearningCurve:
    """Every ``every_minutes`` of training, one JSON line appended to ``path``: the step, tokens seen,
    minutes and learning rate, and what ``snapshot(model)`` measures (each trainer exports the model and
    evaluates the export as the app would load it); ``summary(point)`` is printed."""

    def __init__(self, path: Path, every_minutes: float, run: TrainingRun,
                 snapshot: Callable[[torch.nn.Module], dict], summary: Callable[[dict], str]):
        self.path, self.every_s, self.run = path, every_minutes * 60, run
        self.snapshot, self.summary = snapshot, summary
        self.last = time.time()

    def due(self) -> bool:
        return time.time() - self.last >= self.every_s

    def record(self, model) -> None:
        started = time.time()
        point = {"step": self.run.step, "tokens": self.run.state.get("tokens", 0),
                 "minutes": round((time.time() - self.run.start) / 60, 1),
                 "lr": self.run.optimizer.param_groups[0]["lr"], **self.snapshot(model)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(point, ensure_ascii=False) + "\n")
        print(f"curve point at step {self.run.step}: {self.summary(point)} ({time.time() - started:.0f}s)", flush=True)
        self.last = time.time()
        model.train()
