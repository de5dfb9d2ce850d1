"""Read-only views of a results dict (``run_all``'s output) for the page and its figures.

Plain data out (lists, dicts): no streamlit, no plotly. Models are ordered ELMo → BERT → others.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from ..compute import stats
from ..compute.stats import Z_95, wilson_interval
from ..models.catalogue import DEFAULT_BERT, DEFAULT_ELMO

KIND_ORDER = {"elmo": 0, "bert": 1, "static": 2}


def ordered(models: dict) -> list[str]:
    """Model names of a ``"models"`` dict: the embedded ELMo, the embedded BERT, then the rest."""
    def key(name):
        fixed = {DEFAULT_ELMO: 0, DEFAULT_BERT: 1}.get(name)
        return (fixed if fixed is not None else 2 + KIND_ORDER.get(models[name].get("kind"), 3), name)
    return sorted(models, key=key)


def pos_series(results: dict, tagset: str = "fine") -> list[dict]:
    """``[{"name", "kind", "layer_names", "values", "low", "high"}]`` of the POS probe for ``tagset``
    fine|coarse, with 95 % intervals over the test words."""
    pos = results["pos"]
    n = pos["config"]["n_test_words"]
    return [{"name": name, "kind": pos["models"][name]["kind"], "layer_names": pos["models"][name]["layer_names"],
             "values": pos["models"][name][tagset], **_bounds(pos["models"][name][tagset], n)}
            for name in ordered(pos["models"])]


def _bounds(values, n: int) -> dict:
    low, high = intervals(values, n)
    return {"low": low, "high": high}


def pos_baselines(results: dict, tagset: str = "fine") -> dict[str, float | None]:
    """``{"static": …, "word_identity": …, "majority": …}`` accuracies (static None when absent)."""
    pos = results["pos"]
    static = pos.get("static")
    return {"static": static[tagset][0] if static else None,
            "word_identity": pos["baselines"]["word_identity"][tagset],
            "majority": pos["baselines"]["majority"][tagset]}


def _layers(section: dict) -> Iterator[tuple[str, dict, int, str]]:
    """(model name, its entry, layer index, layer name) of every contextual model in order, then the static one."""
    names = ordered(section["models"]) + ([section["static"]["model"]] if section.get("static") else [])
    for name in names:
        entry = section["models"].get(name) or section["static"]
        for j, layer in enumerate(entry["layer_names"]):
            yield name, entry, j, layer


def pos_table(results: dict) -> list[dict]:
    """One row per (model, layer): fine and coarse accuracy."""
    return [{"model": name, "layer": j, "layer_name": layer, "fine": entry["fine"][j], "coarse": entry["coarse"][j]}
            for name, entry, j, layer in _layers(results["pos"])]


def sense_words(results: dict) -> list[str]:
    return [w["word"] for w in results["senses"]["words"]]


def sense_n(results: dict, word: str | None = None) -> int:
    """Labelled sentences behind a sense accuracy: every word's (``word`` None) or one word's."""
    return sum(w["n"] for w in results["senses"]["words"] if word is None or w["word"] == word)


def sense_series(results: dict, word: str | None = None) -> list[dict]:
    """Per-layer sense accuracy of every contextual model on one word's sentences or (``word`` None) on all
    words' sentences pooled (:func:`sense_scores`), with 95 % intervals over those sentences."""
    senses = results["senses"]
    out = []
    for name in ordered(senses["models"]):
        entry = senses["models"][name]
        scores = sense_scores(results, name, word)
        out.append({"name": name, "kind": entry["kind"], "layer_names": entry["layer_names"],
                    "values": scores.values, **_bounds(scores.values, scores.n)})
    return out


def sense_chance(results: dict, word: str | None = None) -> float:
    """1 / number of senses (mean over words when ``word`` is None)."""
    words = results["senses"]["words"]
    chosen = [w for w in words if word is None or w["word"] == word]
    return sum(w["chance"] for w in chosen) / len(chosen)


def sense_static(results: dict, word: str | None = None) -> float | None:
    static = results["senses"].get("static")
    if not static:
        return None
    return sense_scores(results, static["model"], word).values[0]


def sense_table(results: dict) -> list[dict]:
    """One row per (model, layer): accuracy per word and on all words' sentences pooled."""
    pooled = {name: sense_scores(results, name).values for name in sense_models(results)}
    return [{"model": name, "layer": j, "layer_name": layer,
             **{w: r["accuracy"][j] for w, r in entry["per_word"].items()}, "all": pooled[name][j]}
            for name, entry, j, layer in _layers(results["senses"])]


def sense_models(results: dict) -> list[str]:
    senses = results["senses"]
    return ordered(senses["models"]) + ([senses["static"]["model"]] if senses.get("static") else [])


def learned_mix(results: dict | None) -> dict | None:
    """The learned-mix entry when it holds both tasks; None for results without it (an older file,
    no ELMo model, a task's data missing: ``results["learned_mix"]["skipped"]`` says why)."""
    entry = (results or {}).get("learned_mix") or {}
    return entry if set(entry.get("tasks") or ()) >= {"pos", "sentiment"} else None


def concat(results: dict | None) -> dict | None:
    """The [x; ELMo] entry when it holds every input; None for results without it (an older file, no ELMo
    or static model: ``results["concat"]["skipped"]`` says why)."""
    entry = (results or {}).get("concat") or {}
    return entry if set(entry.get("inputs") or ()) >= {"static", "elmo", "concat"} else None


CONTEXT_MEASURES = ("self_similarity", "intra_sentence", "anisotropy")


def context_series(results: dict, measure: str, adjusted: bool = False) -> list[dict]:
    """Per-layer values of one measure for every model (static model last, one layer), with 95 %
    intervals ``low`` / ``high`` from the stored standard errors (an adjusted value's error adds the
    anisotropy's, measured on other samples)."""
    ctx = results["context"]
    adjusted = adjusted and measure != "anisotropy"
    key = f"{measure}_adjusted" if adjusted else measure
    entries = [(n, ctx["models"][n]) for n in ordered(ctx["models"])]
    if ctx.get("static"):
        entries.append((ctx["static"]["model"], ctx["static"]))
    out = []
    for name, e in entries:
        se = [None if a is None or (adjusted and b is None) else math.hypot(a, b if adjusted else 0.0)
              for a, b in zip(e["se"][measure], e["se"]["anisotropy"])]
        bounds = [(None, None) if v is None or m is None else (v - Z_95 * m, v + Z_95 * m)
                  for v, m in zip(e[key], se)]
        out.append({"name": name, "kind": e["kind"], "layer_names": e["layer_names"], "values": e[key],
                    "low": [b[0] for b in bounds], "high": [b[1] for b in bounds]})
    return out


def change_trend(change: dict) -> tuple[str, float]:
    """``("up" | "down" | "flat", margin)`` for a stored change between two layers (``value``, ``se``):
    "flat" when it lies within its 95 % margin of zero."""
    margin = Z_95 * change["se"]
    return trend(0.0, change["value"], margin), margin


def context_models(results: dict) -> list[str]:
    ctx = results["context"]
    return ordered(ctx["models"]) + ([ctx["static"]["model"]] if ctx.get("static") else [])


def context_per_word(results: dict, model: str, adjusted: bool = False
                     ) -> tuple[list[str], list[str], list[list[float]]]:
    """``(words, layer_names, values[word][layer])`` self-similarity of one model (minus the layer's
    anisotropy when ``adjusted``), most context-specific word (lowest top-layer value) first."""
    ctx = results["context"]
    static = ctx.get("static") or {}
    entry = ctx["models"].get(model) or (static if static.get("model") == model else None)
    if entry is None:
        raise KeyError(model)
    aniso = [a or 0.0 for a in entry["anisotropy"]] if adjusted else [0.0] * len(entry["layer_names"])
    table = {w: [v - a for v, a in zip(values, aniso)] for w, values in entry["per_word"].items()}
    words = sorted(table, key=lambda w: (table[w][-1], w))
    return words, entry["layer_names"], [table[w] for w in words]


def context_table(results: dict) -> list[dict]:
    ctx = results["context"]
    rows = []
    for name in context_models(results):
        entry = ctx["models"].get(name) or ctx["static"]
        for j, layer in enumerate(entry["layer_names"]):
            rows.append({"model": name, "layer": j, "layer_name": layer,
                         **{m: entry[m][j] for m in ("self_similarity", "intra_sentence", "anisotropy",
                                                     "self_similarity_adjusted", "intra_sentence_adjusted")}})
    return rows


def best_layer(values) -> int | None:
    """Index of the highest non-None value (lowest index on ties)."""
    scored = [(v, -j) for j, v in enumerate(values) if v is not None]
    return -max(scored)[1] if scored else None


def skipped(results: dict) -> dict[str, dict]:
    """Models skipped by any experiment, with their bilingual reason."""
    out = {}
    for stage in ("pos", "senses", "context"):
        out.update(results.get(stage, {}).get("skipped", {}))
    return out


# ---- layer comparisons: every verdict of the evidence page goes through core.compute.stats --------------------
@dataclass(frozen=True)
class LayerScores:
    """One probe's per-layer accuracies on the same ``n`` items, with the per-item outcomes ("0"/"1" per item, one
    string per layer) when the results file stores them (older files do not: comparisons then fall back to
    independent samples, wider, and say so)."""
    values: list[float | None]
    n: int
    outcomes: list[str] | None = None

    @property
    def paired(self) -> bool:
        return self.outcomes is not None

    def accuracy(self, layer: int) -> stats.Accuracy:
        value = self.values[layer]
        if value is None:
            raise ValueError(f"layer {layer} has no accuracy")
        return stats.Accuracy(min(value * self.n, self.n), self.n)  # min: the stored value is rounded

    def outcome(self, layer: int) -> str | None:
        return None if self.outcomes is None else self.outcomes[layer]


def compare_layers(scores: LayerScores, a: int, b: int) -> stats.Paired:
    """Layer ``a`` − layer ``b`` on the same items: the exact McNemar comparison when the outcomes are stored,
    else the independent-samples fallback (``paired`` False)."""
    return stats.compare(scores.outcome(a), scores.outcome(b), scores.accuracy(a), scores.accuracy(b))


def pos_scores(results: dict, model: str, tagset: str = "fine") -> LayerScores:
    """``model``'s POS probe (contextual or the static one) on the test words."""
    pos = results["pos"]
    static = pos.get("static") or {}
    entry = pos["models"].get(model) or (static if static.get("model") == model else None)
    if entry is None:
        raise KeyError(model)
    return LayerScores(entry[tagset], pos["config"]["n_test_words"], (entry.get("outcomes") or {}).get(tagset))


def lookup_scores(results: dict, tagset: str = "fine") -> LayerScores:
    """The word-lookup baseline (each test word's most frequent training tag) as a one-layer probe."""
    lookup = results["pos"]["baselines"]["word_identity"]
    outcome = (lookup.get("outcomes") or {}).get(tagset)
    return LayerScores([lookup[tagset]], results["pos"]["config"]["n_test_words"],
                       None if outcome is None else [outcome])


def _sense_entry(results: dict, model: str) -> dict:
    senses = results["senses"]
    static = senses.get("static") or {}
    entry = senses["models"].get(model) or (static if static.get("model") == model else None)
    if entry is None:
        raise KeyError(model)
    return entry


def sense_scores(results: dict, model: str, word: str | None = None) -> LayerScores:
    """``model``'s word-sense probe on one word's sentences, or (``word`` None) on every word's sentences pooled,
    the accuracy over all of them. A file without outcomes gives the stored mean over words, unpaired."""
    entry = _sense_entry(results, model)
    if word is not None:
        row = entry["per_word"][word]
        return LayerScores(row["accuracy"], row["n"], row.get("outcomes"))  # n: the sentences the model read
    rows = [entry["per_word"][w] for w in sense_words(results)]
    if any(not row.get("outcomes") for row in rows):
        return LayerScores(entry["mean"], sense_n(results))
    pooled = ["".join(row["outcomes"][j] for row in rows) for j in range(len(rows[0]["outcomes"]))]
    return LayerScores([o.count("1") / len(o) for o in pooled], len(pooled[0]), pooled)


@dataclass(frozen=True)
class LayerTies:
    """The best layer and every layer that cannot be told from it (``tied``, the best included); ``paired``: the
    comparisons used the per-item outcomes."""
    best: int
    tied: list[int]
    paired: bool


def layer_ties(scores: LayerScores) -> LayerTies:
    """The layer with the highest accuracy and those whose gap to it lies within sampling error: the policy's
    comparison of the best − each layer on the same items is not "higher"."""
    best = best_layer(scores.values)
    if best is None:
        raise ValueError("no layer has an accuracy")
    tied = [j for j, v in enumerate(scores.values)
            if v is not None and (j == best or compare_layers(scores, best, j).verdict != "higher")]
    return LayerTies(best, tied, scores.paired)


def below_lookup(results: dict, tagset: str = "fine") -> list[str]:
    """Models none of whose layers beats the word-lookup baseline beyond sampling error (paired on the test
    words): their probe learned no more than looking the word up."""
    lookup = lookup_scores(results, tagset)

    def beats_lookup(scores: LayerScores, layer: int) -> bool:
        return stats.compare(scores.outcome(layer), lookup.outcome(0), scores.accuracy(layer),
                             lookup.accuracy(0)).verdict == "higher"

    below = []
    for name in ordered(results["pos"]["models"]):
        scores = pos_scores(results, name, tagset)
        if not any(beats_lookup(scores, j) for j, v in enumerate(scores.values) if v is not None):
            below.append(name)
    return below


# The papers' finding on ELMo as (the layer they find better, the other one): Peters et al. (2018) find layer 1
# better for POS (Table 6) and layer 2 better for word sense (Table 5).
PAPER_BETTER_LAYER = {"pos": (1, 2), "senses": (2, 1)}
AGREEMENT = {"higher": "same", "lower": "opposite", "tie": "tie"}
# Ethayarajh (2019) finds self-similarity falling with depth.
CONTEXT_AGREEMENT = {"down": "same", "up": "opposite", "flat": "flat"}


@dataclass(frozen=True)
class LayerFinding:
    """A paper's finding on ELMo's two biLSTM layers, on our scores: ``comparison`` is the paper's better layer −
    the other on the same items; ``agreement`` "same" | "opposite" | "tie" (the paper's direction, the opposite
    one beyond sampling error, neither)."""
    comparison: stats.Paired
    agreement: str


def layer_finding(scores: LayerScores, task: str) -> LayerFinding:
    better, other = PAPER_BETTER_LAYER[task]
    comparison = compare_layers(scores, better, other)
    return LayerFinding(comparison, AGREEMENT[comparison.verdict])


def paper_findings(results: dict) -> tuple[str | None, dict[str, str]]:
    """The three findings the page tests, as the results' ELMo shows them: ``(its name, {"pos" | "senses" |
    "context": "same" | "opposite" | "tie" | "flat"})``, by the sections' own computations on their default
    views (fine tags, all words' sentences pooled); a finding without ELMo is left out."""
    out = {}
    name = _elmo(results["pos"]["models"])
    if name is not None and len(results["pos"]["models"][name]["fine"]) >= 3:
        out["pos"] = layer_finding(pos_scores(results, name), "pos").agreement
    sense_model = _elmo(results["senses"]["models"])
    if sense_model is not None:
        scores = sense_scores(results, sense_model)
        if len(scores.values) >= 3 and None not in scores.values[1:3]:
            out["senses"] = layer_finding(scores, "senses").agreement
    models = results["context"]["models"]
    context = next((m for m in ordered(models) if models[m].get("kind") == "elmo"
                    and models[m]["change"]["self_similarity_adjusted"] is not None), None)
    if context is not None:
        out["context"] = CONTEXT_AGREEMENT[change_trend(models[context]["change"]["self_similarity_adjusted"])[0]]
    return name or sense_model or context, out


def _elmo(models: dict) -> str | None:
    return next((name for name in ordered(models) if models[name].get("kind") == "elmo"), None)


def intervals(values, n: int) -> tuple[list[float | None], list[float | None]]:
    """95 % Wilson intervals ``(low, high)`` of accuracies measured on ``n`` items each (None stays None)."""
    bounds = [None if v is None else wilson_interval(float(v), n) for v in values]
    return [None if b is None else b[0] for b in bounds], [None if b is None else b[1] for b in bounds]


# Ethayarajh (2019), section 4: in ELMo, words of one sentence grow more similar to each other in the
# upper layers; in BERT they grow less similar.
PAPER_INTRA_SENTENCE_TREND = {"elmo": "up", "bert": "down"}


def trend(first: float, last: float, flat: float) -> str:
    """"up", "down" or "flat" (a change of at most ``flat``) from ``first`` to ``last``."""
    if last - first > flat:
        return "up"
    if first - last > flat:
        return "down"
    return "flat"

