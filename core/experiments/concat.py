"""ELMo as the lecture uses it: ELMo vectors concatenated with static word vectors, [x_k; ELMo_k], feeding a
task model (Peters et al., 2018, §3.3: "concatenate the ELMo vector ELMo_k^task with x_k").

The POS task of :mod:`.pos_probe` (People's Daily, fine PKU tags, the same sentence split and seed), with
three inputs to the same classifier under the same protocol:

* ``static``: x_k = the word's word2vec vector (zero vector + an OOV flag for unknown words, as in the probe);
* ``elmo``: ELMo_k = γ Σ_j s_j h_{k,j} (``core.compute.mixing.scalar_mix``) over mini-elmo-zh's layers, each first
  standardised with the training words' statistics; s uniform (softmax(0), where ELMo's training of s
  starts: on this task the learned s was no better, :mod:`.learned_mix`), γ = 1 (the classifier
  standardises its input, so γ changes nothing);
* ``concat``: [x_k; ELMo_k].

Classifier: ``pos_probe.probe_accuracy`` (StandardScaler + LogisticRegression). For each input, C is chosen
from :data:`C_GRID` on the last ``n_dev`` training sentences (trained on the others), then the classifier is
refit on all training sentences and scored once on the test words (95 % Wilson interval). The task model is
linear and sees one word at a time, where Peters et al. feed [x_k; ELMo_k] to a task biLSTM: what is compared
is what the inputs carry, not a tagger.

    python -m core.experiments --only concat     # this stage alone, merged into assets/experiments.json
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compute import stats
from ..compute.mixing import normalise_weights, scalar_mix
from ..compute.stats import wilson_interval
from .corpus import TaggedSentence, load_sentences, sample_split
from .learned_mix import standardise
from .pos_probe import DEFAULTS as POS_PROBE
from .pos_probe import baselines, layer_features, probe_accuracy
from .vectors import Progress, first_of_kind, no_progress, scaled_progress, sentence_vectors

INPUTS = ("static", "elmo", "concat")
DEFAULTS = {"n_train": POS_PROBE["n_train"], "n_test": POS_PROBE["n_test"], "n_dev": 300}
QUICK = {"n_train": 300, "n_test": 100, "n_dev": 60}
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)  # up to 100: with (0.01, 0.1, 1) word2vec chose the top edge, dev still rising


def elmo_vectors(layers: Sequence[np.ndarray]) -> list[np.ndarray]:
    """ELMo_k with uniform s and γ = 1 for each split's ``(L+1, words, dim)`` layers (training split
    first; every split standardised with its statistics)."""
    scaled = standardise(*layers)
    s = normalise_weights([0.0] * scaled[0].shape[0], pre_softmax=True)
    return [scalar_mix(x, s).astype(np.float32) for x in scaled]


def choose_and_score(train_x: np.ndarray, train_y: Sequence[str] | np.ndarray, n_fit: int, test_x: np.ndarray,
                     test_y: Sequence[str]) -> dict:
    """C chosen on the training rows after ``n_fit`` (fit on the rows before), then all training rows
    refit with that C and scored on the test rows."""
    train_y = np.asarray(train_y)
    by_c = {c: probe_accuracy(train_x[:n_fit], train_y[:n_fit], train_x[n_fit:], train_y[n_fit:], c=c)[0]
            for c in C_GRID}
    c = max(C_GRID, key=lambda c: (by_c[c], -c))  # a tie: the stronger regularisation
    accuracy, _ = probe_accuracy(train_x, train_y, test_x, test_y, c=c)
    return {"accuracy": accuracy, "interval": list(wilson_interval(accuracy, len(test_y))), "c": c,
            "dev_accuracy_by_c": {str(k): v for k, v in by_c.items()}, "dim": int(train_x.shape[1])}


def run_concat(models: Sequence, *, static=None, sentences: Sequence[TaggedSentence] | None = None,
               corpus: str | None = None, progress: Progress = no_progress, **sizes) -> dict:
    """The three inputs on the first ELMo-kind model of ``models`` and the ``static`` model; a JSON-ready dict.

    ``sentences`` replaces the corpus (tests); ``sizes`` overrides :data:`DEFAULTS`. A model that cannot be
    loaded, or a missing ELMo or static model, is listed under ``"skipped"`` and nothing is trained.
    """
    t0 = time.time()
    cfg = {**DEFAULTS, **sizes}
    out: dict[str, Any] = {"model": None, "static_model": None, "inputs": {}, "skipped": {},
           "config": {**cfg, "seed": POS_PROBE["seed"], "max_chars": POS_PROBE["max_chars"], "c_grid": list(C_GRID),
                      "pos_tags": "fine", "mix": "uniform s, gamma = 1, layers standardised"}}
    elmo = first_of_kind(models, "elmo", out["skipped"])
    encoder_static = first_of_kind([] if static is None else [static], "static", out["skipped"])
    if elmo is None or encoder_static is None:
        progress(1.0, "concat: needs an ELMo and a static model")
        return out
    out.update(model=elmo.name, static_model=encoder_static.name)
    pool = list(sentences) if sentences is not None else list(load_sentences(corpus, max_chars=POS_PROBE["max_chars"]))
    train, test = sample_split(pool, cfg["n_train"], cfg["n_test"], POS_PROBE["seed"])
    words = [s.words for s in train + test]
    train_y = [t for s in train for t in s.tags]
    test_y = [t for s in test for t in s.tags]
    n_fit = sum(len(s.words) for s in train[:len(train) - cfg["n_dev"]])
    contextual = sentence_vectors(elmo, words, progress=scaled_progress(progress, 0.0, 0.3))
    plain = sentence_vectors(encoder_static, words, progress=scaled_progress(progress, 0.3, 0.35))
    n = len(train)

    def rows(vectors, layer, flag):
        return layer_features(vectors[:n], layer, flag), layer_features(vectors[n:], layer, flag)

    layers = [np.stack(part) for part in zip(*(rows(contextual, j, False) for j in range(elmo.num_layers)))]
    features = {"static": rows(plain, 0, True), "elmo": tuple(elmo_vectors(layers))}
    features["concat"] = tuple(np.concatenate([x, e], axis=1) for x, e in zip(features["static"], features["elmo"]))
    for i, name in enumerate(INPUTS):
        progress(0.35 + 0.65 * i / len(INPUTS), f"concat: {name}")
        train_x, test_x = features[name]
        out["inputs"][name] = choose_and_score(train_x, train_y, n_fit, test_x, test_y)
    out.update(n_train_words=len(train_y), n_fit_words=n_fit, n_test_words=len(test_y),
               word_identity=baselines(train, test)["word_identity"]["fine"], seconds=round(time.time() - t0, 1))
    progress(1.0, "concat done")
    return out


# The embedded models trained on the People's Daily text the POS data comes from (their cards, "Training data"):
# word2vec-zh on peoples_daily_1998_01.txt (all but the held-out 1% of lines), mini-elmo-zh on zh_mixed_v1 only.
SAW_POS_TEXT = {"word2vec-zh": True, "mini-elmo-zh": False}


def uneven_training(entry: dict) -> bool:
    """True when the static model was trained on the POS data's text (test sentences included) and the ELMo
    model was not: x starts ahead of ELMo."""
    return SAW_POS_TEXT.get(entry["static_model"]) is True and SAW_POS_TEXT.get(entry["model"]) is False


def grid_edges(entry: dict) -> list[str]:
    """The inputs whose chosen C is the largest of the grid while the dev accuracy still rose up to it: a
    larger C might do better, so the choice is not settled (a tie at the top edge is a plateau, settled)."""
    grid = [float(c) for c in entry["config"]["c_grid"]]
    out = []
    for name in INPUTS:
        r = entry["inputs"][name]
        by_c = {float(c): acc for c, acc in r["dev_accuracy_by_c"].items()}
        if float(r["c"]) == grid[-1] and len(grid) > 1 and by_c[grid[-1]] > by_c[grid[-2]]:
            out.append(name)
    return out


@dataclass(frozen=True)
class Comparison:
    """[x; ELMo] against one other input on the same test words: ``direction`` "better" | "worse" | "tie"
    (the 95 % interval of the difference excludes 0 or not)."""

    other: str
    direction: str
    diff: float
    low: float
    high: float


def compare(entry: dict, other: str) -> Comparison:
    """[x; ELMo] against ``other``: an input of :data:`INPUTS` or ``"word_identity"`` (the lookup baseline)."""
    n = entry["n_test_words"]
    theirs = entry["word_identity"] if other == "word_identity" else entry["inputs"][other]["accuracy"]
    result = stats.unpaired(stats.Accuracy(entry["inputs"]["concat"]["accuracy"] * n, n), stats.Accuracy(theirs * n, n))
    return Comparison(other, {"higher": "better", "lower": "worse", "tie": "tie"}[result.verdict], result.diff,
                      result.low, result.high)


def verdict(entry: dict) -> tuple[str, list[Comparison]]:
    """``("both" | "one" | "none", comparisons)``: does [x; ELMo] beat both single inputs beyond sampling
    error, only one of them, or neither."""
    comparisons = [compare(entry, other) for other in ("static", "elmo")]
    better = sum(c.direction == "better" for c in comparisons)
    return ("both" if better == 2 else "one" if better else "none"), comparisons
