"""Per-layer word-sense probe: nearest sense centroid (after Peters et al., 2018, §5.3 / Table 5, and
Coenen et al., 2019, §4.1).

Peters et al. represented each WordNet sense by the average biLM vector of its SemCor occurrences
and tagged a test word with the nearest sense (F1: layer 1 67.4, layer 2 69.0: word sense is best
read from the top layer). Coenen et al. ran the same nearest-centroid classifier on BERT-base:
F1 71.1, rising through the layers.

Here: hand-written labelled sentences for a few polysemous Chinese words (``assets/eval``),
the target word's vector = mean of its characters' vectors (first occurrence in the sentence),
**leave-one-out protocol**: each sentence in turn is classified by
``core.compute.geometry.centroid_accuracy`` against the sense centroids of all *other* sentences of the
same word; accuracy = share of sentences whose sense is recovered (equal to micro-F1, as every
sentence gets a prediction). A static model gives every occurrence the same vector: all centroids
tie, the alphabetically first sense wins, so it scores that sense's share (chance level).
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..compute.geometry import centroid_accuracy
from ..compute.occurrences import parse_labelled, word_vectors
from ..runtime.paths import ASSETS
from .vectors import Progress, each_model, no_progress, store_result

EVAL_DIR = ASSETS / "eval"
# (target word, file in assets/eval): hand-written by this project, not taken from any corpus.
SENSE_SETS: tuple[tuple[str, str], ...] = (
    ("苹果", "apple_senses.txt"),
    ("包袱", "baofu_senses.txt"),
    ("行", "hang_xing_senses.txt"),
    ("花", "hua_senses.txt"),
)
PROTOCOL = "leave-one-out nearest sense centroid (cosine), first occurrence of the word per sentence"


def read_sense_file(path: Path | str) -> tuple[list[str], list[str]]:
    """``label|sentence`` lines of a sense file; ``#`` comment lines and blank lines are skipped."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    sentences, labels = parse_labelled(lines)
    keep = [(sentence, label) for sentence, label in zip(sentences, labels) if label]
    return [sentence for sentence, _ in keep], [label for _, label in keep]


def load_sense_sets(eval_dir: Path | str = EVAL_DIR) -> list[dict]:
    """``[{"word", "file", "sentences", "labels"}]`` for every entry of :data:`SENSE_SETS`."""
    out = []
    for word, name in SENSE_SETS:
        sentences, labels = read_sense_file(Path(eval_dir) / name)
        out.append({"word": word, "file": name, "sentences": sentences, "labels": labels})
    return out


def loo_centroid_outcomes(vectors: np.ndarray, labels: Sequence[str | None]) -> list[int]:
    """Leave-one-out nearest-centroid outcome per item of ``vectors`` (n, dim) with ``labels`` (n): 1 when its
    sense is recovered from the other items' centroids, else 0. Kept per item so that two layers scored on the
    same sentences are compared paired (``core.compute.stats.paired``)."""
    labels = list(labels)
    n = len(labels)
    if n < 2:
        raise ValueError("need at least two labelled vectors")
    outcomes = []
    for i in range(n):
        rest = [j for j in range(n) if j != i]
        hit = centroid_accuracy(vectors[rest], [labels[j] for j in rest], vectors[i:i + 1], [labels[i]])
        outcomes.append(int(hit))  # one test item: its accuracy is 0 or 1
    return outcomes


def loo_centroid_accuracy(vectors: np.ndarray, labels: Sequence[str | None]) -> float:
    """Leave-one-out nearest-centroid accuracy: the mean of :func:`loo_centroid_outcomes`."""
    outcomes = loo_centroid_outcomes(vectors, labels)
    return sum(outcomes) / len(outcomes)


def probe_word(encoder, word: str, sentences: Sequence[str], labels: Sequence[str]) -> dict:
    """Per-layer LOO accuracy and per-sentence outcomes ("0"/"1" per sentence) for one target word (accuracy
    ``None`` per layer, no outcomes, when a static model lacks it)."""
    wv = word_vectors(encoder, list(sentences), word, labels=list(labels))
    seen, occurrences = set(), []
    for occ in wv.occurrences:  # first occurrence per sentence: one vector per labelled sentence
        if occ.sentence_index not in seen:
            seen.add(occ.sentence_index)
            occurrences.append(occ)
    result: dict[str, Any] = {"n": len(occurrences), "missing": len(wv.missing), "oov": bool(wv.oov)}
    if wv.oov or len(occurrences) < 2:
        result["accuracy"] = [None] * encoder.num_layers
        return result
    stacked = np.stack([o.layers for o in occurrences], axis=1)  # (layers, n, dim)
    occ_labels = [o.label for o in occurrences]
    outcomes = [loo_centroid_outcomes(stacked[layer], occ_labels) for layer in range(encoder.num_layers)]
    result["accuracy"] = [sum(o) / len(o) for o in outcomes]
    result["outcomes"] = ["".join(map(str, o)) for o in outcomes]  # per sentence, in the file's order
    return result


def _mean_over_words(per_word: dict[str, dict], num_layers: int) -> list[float | None]:
    out = []
    for layer in range(num_layers):
        values = [r["accuracy"][layer] for r in per_word.values() if r["accuracy"][layer] is not None]
        out.append(float(np.mean(values)) if values else None)
    return out


def run_sense_probe(models: Sequence, *, static=None, sense_sets: list[dict] | None = None,
                    progress: Progress = no_progress) -> dict:
    """The whole sense experiment for every model (contextual ``models`` plus an optional ``static``)."""
    t0 = time.time()
    sets = sense_sets if sense_sets is not None else load_sense_sets()
    words = []
    for s in sets:
        counts = Counter(s["labels"])
        words.append({"word": s["word"], "file": s.get("file"), "n": len(s["labels"]), "senses": dict(counts),
                      "chance": 1.0 / len(counts), "majority": max(counts.values()) / len(s["labels"])})
    out: dict[str, Any] = {"protocol": PROTOCOL, "words": words, "models": {}, "static": None, "skipped": {}}
    for encoder, name, sub, is_static in each_model(models, static, progress, out["skipped"]):
        t1 = time.time()
        per_word = {}
        for j, s in enumerate(sets):
            sub(j / len(sets), f"{name}: {s['word']}")
            per_word[s["word"]] = probe_word(encoder, s["word"], s["sentences"], s["labels"])
        result = {"layer_names": list(encoder.layer_names), "kind": encoder.kind, "per_word": per_word,
                  "mean": _mean_over_words(per_word, encoder.num_layers), "seconds": round(time.time() - t1, 1)}
        store_result(out, name, is_static, result)
        sub(1.0, f"{name}: done")
    out["seconds"] = round(time.time() - t0, 1)
    return out
