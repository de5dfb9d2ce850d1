"""The training budgets of the embedded models, read from ``assets/models/training.json`` (``budgets``).

Wherever ELMo and BERT are compared, the class should know that the two were not trained alike: the
record lists, per model, the tokens seen and each training stage's hardware and minutes (and the share
of whole-word-masked examples). The pages and the model cards compute their budget lines from it, so
a new training session is one new stage in the file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..runtime.paths import ASSETS

TRAINING_FILE = ASSETS / "models" / "training.json"


@dataclass(frozen=True)
class Budget:
    model: str
    tokens: float  # tokens seen in training, all stages of the shipped weights
    cpu_minutes: float
    cpu_cores: int | None  # None when no stage ran on CPU
    gpu_minutes: float
    gpu: str | None  # the GPU's name, None when no stage ran on a GPU
    whole_word: float  # the largest share of whole-word-masked examples in any stage (0: none)


def _budget(model: str, record: dict) -> Budget:
    stages = record["stages"]
    cpu = [s for s in stages if s["device"] == "cpu"]
    gpu = [s for s in stages if s["device"] == "gpu"]
    return Budget(model=model, tokens=float(record["tokens"]),
                  cpu_minutes=float(sum(s["minutes"] for s in cpu)),
                  cpu_cores=max((int(s["cores"]) for s in cpu), default=None),
                  gpu_minutes=float(sum(s["minutes"] for s in gpu)),
                  gpu=gpu[0]["gpu"] if gpu else None,
                  whole_word=max((float(s.get("whole_word", 0)) for s in stages), default=0.0))


def budgets_from(training: dict) -> dict[str, Budget]:
    """model name → :class:`Budget` from the parsed training record (its ``budgets`` entry; none: empty)."""
    return {model: _budget(model, entry) for model, entry in training.get("budgets", {}).items()}


def load_budgets(path: Path | str = TRAINING_FILE) -> dict[str, Budget]:
    """:func:`budgets_from` the training record at ``path``; empty when the file is missing."""
    path = Path(path)
    return budgets_from(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else {}


def token_ratio(budgets: dict[str, Budget], larger: str, smaller: str) -> float | None:
    """How many times as many tokens ``larger`` saw as ``smaller``; None when either is not recorded."""
    if larger not in budgets or smaller not in budgets or budgets[smaller].tokens <= 0:
        return None
    return budgets[larger].tokens / budgets[smaller].tokens


def format_tokens(n: float, lang: str = "en") -> str:
    """1.2e9 → "1.2 B" (en) / "12 亿" (zh); 1.24e8 → "124 M" / "1.24 亿"."""
    if lang == "zh":
        return f"{n / 1e8:.3g} 亿"
    return f"{n / 1e9:.2g} B" if n >= 1e9 else f"{n / 1e6:.3g} M"


def format_minutes(m: float) -> str:
    """Whole minutes from 100 up (469.9 → "470"), one decimal below (21.6)."""
    return f"{m:.0f}" if m >= 100 else f"{m:.1f}"
