"""Read-only views of a results dict (``run_all``'s output) for the page and its figures.

Plain data out (lists, dicts): no streamlit, no plotly. Models are ordered ELMo → BERT → others.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

from ..models.catalogue import DEFAULT_BERT, DEFAULT_ELMO
from ..stats import Z_95, wilson_interval

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
    """Per-layer sense accuracy of every contextual model: mean over words (``word`` None) or one word,
    with 95 % intervals over the labelled sentences (:func:`sense_n`)."""
    senses = results["senses"]
    n = sense_n(results, word)
    out = []
    for name in ordered(senses["models"]):
        entry = senses["models"][name]
        values = entry["mean"] if word is None else entry["per_word"][word]["accuracy"]
        out.append({"name": name, "kind": entry["kind"], "layer_names": entry["layer_names"], "values": values,
                    **_bounds(values, n)})
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
    return static["mean"][0] if word is None else static["per_word"][word]["accuracy"][0]


def sense_table(results: dict) -> list[dict]:
    """One row per (model, layer): accuracy per word and the mean."""
    return [{"model": name, "layer": j, "layer_name": layer,
             **{w: r["accuracy"][j] for w, r in entry["per_word"].items()}, "mean": entry["mean"][j]}
            for name, entry, j, layer in _layers(results["senses"])]


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


def direction(low: float, high: float, n: int) -> tuple[str, float]:
    """Compare two accuracies measured on the same ``n`` items: ``("higher" | "lower" | "tie", margin)``.

    "higher" means ``high`` exceeds ``low`` by more than the margin, about two standard errors of a
    difference of two proportions, 1.96·sqrt(2·p(1−p)/n) with p their mean (a rough, slightly
    conservative rule that ignores the pairing of the items; it keeps the page from reading noise
    as a finding).
    """
    p = (low + high) / 2
    margin = 1.96 * (2 * p * (1 - p) / max(n, 1)) ** 0.5
    if high - low > margin:
        return "higher", margin
    if low - high > margin:
        return "lower", margin
    return "tie", margin


# How our direction agrees with the papers' finding on ELMo: Peters et al. (2018) find layer 1 better for POS
# (Table 6) and layer 2 better for word sense (Table 5); Ethayarajh (2019) finds self-similarity falling with depth.
POS_AGREEMENT = {"lower": "same", "higher": "opposite", "tie": "tie"}
SENSE_AGREEMENT = {"higher": "same", "lower": "opposite", "tie": "tie"}
CONTEXT_AGREEMENT = {"down": "same", "up": "opposite", "flat": "flat"}


def paper_findings(results: dict) -> tuple[str | None, dict[str, str]]:
    """The three findings the page tests, as the results' ELMo shows them: ``(its name, {"pos" | "senses" |
    "context": "same" | "opposite" | "tie" | "flat"})`` (the papers' direction, the opposite one, layers within
    sampling error, no change beyond it), by the sections' own comparisons; a finding without ELMo is left out."""
    out = {}
    pos = next((r for r in pos_series(results) if r["kind"] == "elmo"), None)
    if pos is not None and len(pos["values"]) >= 3:
        n = results["pos"]["config"]["n_test_words"]
        out["pos"] = POS_AGREEMENT[direction(pos["values"][1], pos["values"][2], n)[0]]
    senses = next((r for r in sense_series(results) if r["kind"] == "elmo"), None)
    if senses is not None and len(senses["values"]) >= 3 and None not in senses["values"][1:3]:
        out["senses"] = SENSE_AGREEMENT[direction(senses["values"][1], senses["values"][2], sense_n(results))[0]]
    models = results["context"]["models"]
    context = next((name for name in ordered(models) if models[name].get("kind") == "elmo"
                    and models[name]["change"]["self_similarity_adjusted"] is not None), None)
    if context is not None:
        out["context"] = CONTEXT_AGREEMENT[change_trend(models[context]["change"]["self_similarity_adjusted"])[0]]
    return next((r["name"] for r in (pos, senses) if r is not None), context), out


def tied_with_best(values, n: int) -> tuple[int, list[int], float]:
    """``(best, tied, margin)`` for accuracies measured on the same ``n`` items: the best layer, every
    layer that :func:`direction` cannot tell apart from it (the best included), and the largest
    margin of those comparisons (the margin of the best with itself when it stands alone)."""
    best = best_layer(values)
    if best is None:
        raise ValueError("no layer has an accuracy")
    tied, margin = [], direction(values[best], values[best], n)[1]
    for j, v in enumerate(values):
        change, m = direction(v, values[best], n)
        if change == "tie":
            tied.append(j)
            margin = max(margin, m)
    return best, tied, margin


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

