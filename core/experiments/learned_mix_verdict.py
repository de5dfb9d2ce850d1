"""What the learned mixes of ``core.experiments.learned_mix`` show, read from its stored results: where each
seed puts its weight (:func:`depth`, :func:`s_range`), learned against uniform s per task (:func:`task_verdict`),
the lecture's ordering of the tasks (:func:`ordering`) and the section's verdict (:func:`verdict`). Numbers in,
verdicts out: nothing is trained here."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..compute import stats
from .learned_mix import TASKS


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
UNUSED_S = 0.1  # a layer every seed of every task gives less than this is "almost unused"


@dataclass(frozen=True)
class TaskVerdict:
    """What one task's learned mix shows, each field computed from the stored numbers."""

    vs_uniform: str  # "better" | "worse" | "tie": learned s against uniform s beyond sampling error, or not
    comparison: stats.Paired  # learned − uniform held-out accuracy (paired when both outcome lists are stored)
    top_layer: int | None  # the layer every seed weights most; None when the seeds disagree
    top_votes: tuple[int, int]  # the layer most seeds weight most, and how many seeds do
    spread: float  # the largest change of one s_j between seeds
    seed_accuracy: tuple[float, float]  # lowest and highest held-out accuracy over the seeds


@dataclass(frozen=True)
class Ordering:
    """The two tasks' centres of gravity (:func:`depth`) over their seeds: ``verdict`` "same" (POS lower, the
    lecture's order), "opposite" or "unclear", by the policy's exact order test (``test``) of POS's seeds
    against sentiment's."""

    verdict: str
    test: stats.Order


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


def task_verdict(task: dict) -> TaskVerdict:
    """One task's entry (``learned_mix.run_task``'s output) read: learned against uniform s, its seeds' agreement."""
    learned, uniform, n = task["learned"], task["fixed"]["uniform"], task["n_test"]
    comparison = stats.compare(learned.get("outcomes"), uniform.get("outcomes"),
                               stats.Accuracy(learned["accuracy"] * n, n), stats.Accuracy(uniform["accuracy"] * n, n))
    tops = [int(np.argmax(r["s"])) for r in task["seeds"]]
    votes = max(((j, tops.count(j)) for j in sorted(set(tops))), key=lambda v: v[1])
    lo_s, hi_s = s_range(task)
    accuracies = [r["accuracy"] for r in task["seeds"]]
    return TaskVerdict({"higher": "better", "lower": "worse", "tie": "tie"}[comparison.verdict], comparison,
                       votes[0] if votes[1] == len(tops) else None, votes, max(h - l for l, h in zip(lo_s, hi_s)),
                       (min(accuracies), max(accuracies)))


def ordering(tasks: dict) -> Ordering:
    """The lecture's claim (syntax lower, semantics higher) against the learned mixes of every seed: the exact
    order test of the POS seeds' centres (:func:`depth`) against the sentiment seeds'; "same" when POS lies
    below beyond chance, "opposite" above, else "unclear" (with a few seeds a side, an order of every pair can
    still be chance)."""
    test = stats.order_test([depth(r["s"]) for r in tasks["pos"]["seeds"]],
                            [depth(r["s"]) for r in tasks["sentiment"]["seeds"]])
    return Ordering({"below": "same", "above": "opposite", "unclear": "unclear"}[test.verdict], test)


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
