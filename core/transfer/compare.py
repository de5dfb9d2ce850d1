"""Verdicts computed from the numbers, through the statistics policy (``core.compute.stats``): whether two held-out
accuracies differ beyond sampling error, what the per-layer curve of the frozen BERT features says, and how the
ELMo row relates to the ELMo page's uniform-s figure. The page picks its sentences from these, never the other
way round.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..compute import stats
from .view import Approach, BertFeatures, TransferView

Comparison = stats.Paired  # a − b on the test reviews: paired (exact McNemar) when both outcome lists are stored


def compare(a: Approach, b: Approach) -> Comparison:
    return stats.compare(a.correct, b.correct, stats.Accuracy(a.accuracy * a.n_test, a.n_test),
                         stats.Accuracy(b.accuracy * b.n_test, b.n_test))


def validation_pick(bert: BertFeatures, pooling: str | None = None) -> tuple[str, int] | None:
    """The (pooling, layer) probe whose chosen C scored best on the validation reviews (only ``pooling``'s layers
    when given), the one a verdict may be read from: the test reviews take no part. A tie: the lower layer, then
    the pooling listed first. None for results files without validation accuracies."""
    table = bert.per_layer_choice
    if not table:
        return None
    scores = {(p, j): max(choice.val_accuracy.values()) for p, choices in table.items()
              for j, choice in enumerate(choices) if pooling in (None, p)}
    order = sorted(scores, key=lambda key: (key[1], list(table).index(key[0])))
    return stats.choose(scores, "validation", order).key


@dataclass(frozen=True)
class LayerTies:
    """One pooling's curve: the reference layer, the layers below it beyond sampling error and those that cannot
    be told apart from it. ``chosen_on``: "validation" (the layer whose probe scored best on the validation
    reviews) or, for results files without validation accuracies, "test" (the best on the test reviews, which
    the policy gives no verdict: ``curve_verdict`` is then "unjudged")."""
    pooling: str
    best: int
    below: list[int]
    tied: list[int]
    chosen_on: str = "validation"


def layer_ties(bert: BertFeatures, pooling: str) -> LayerTies:
    probes = [bert.probe(pooling, j) for j in range(len(bert.layers))]
    picked = validation_pick(bert, pooling)
    choice = (stats.Choice(picked[1], "validation") if picked else
              stats.choose({j: probe.accuracy for j, probe in enumerate(probes)}, "test"))
    best = choice.key
    others = [j for j in range(len(probes)) if j != best]
    below = [j for j in others if compare(probes[best], probes[j]).verdict == "higher"]
    return LayerTies(pooling, best, below, [j for j in others if j not in below], choice.on)


def curve_verdict(ties: Sequence[LayerTies]) -> str:
    """"unjudged": a reference layer was picked on the test reviews (no verdict); "tie": no layer falls behind the
    reference beyond sampling error, in any pooling; "embeddings": only
    layer 0 does (the embeddings, before any context); "cls": contextual layers do only under [CLS] pooling
    (expected: only the top layer's [CLS] is trained, by next-sentence prediction); "differ": contextual
    layers do under another pooling too."""
    if any(t.chosen_on != "validation" for t in ties):
        return "unjudged"
    below = {j for t in ties for j in t.below}
    if not below:
        return "tie"
    if below == {0}:
        return "embeddings"
    return "cls" if all(set(t.below) <= {0} for t in ties if t.pooling != "cls") else "differ"


@dataclass(frozen=True)
class ElmoPageGap:
    """The ELMo row here next to the ELMo page's uniform s on the same test reviews (``assets/experiments.json``,
    ``core.experiments.learned_mix``): the facts that differ and the difference with its interval."""
    page_accuracy: float
    page_c: float
    page_n_fit: int  # reviews its head was trained on
    page_n_val: int  # reviews its C was chosen on
    comparison: Comparison  # here − page; paired when the experiments file stores the page's per-review outcomes


def elmo_page_gap(view: TransferView, experiments: dict | None) -> ElmoPageGap | None:
    """None when either side is missing or the two were not measured on the same model and test reviews."""
    mix = (experiments or {}).get("learned_mix") or {}
    task = (mix.get("tasks") or {}).get("sentiment") or {}
    uniform = (task.get("fixed") or {}).get("uniform")
    config = mix.get("config") or {}
    if (view.elmo is None or not uniform or mix.get("model") != view.elmo.model or task.get("n_test") != view.n_test
            or config.get("sentiment_train") != view.config.get("n_train")
            or config.get("sentiment_split_seed") != view.config.get("seed")):  # not the same sample of reviews
        return None
    page = Approach(model=mix["model"], accuracy=float(uniform["accuracy"]), n_test=int(task["n_test"]),
                    trained_params=0, frozen_params=0, correct=uniform.get("outcomes"))
    return ElmoPageGap(page.accuracy, float(task["c"]), int(task["n_train"]), int(task["n_dev"]),
                       compare(view.elmo, page))
