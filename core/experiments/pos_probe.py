"""Per-layer part-of-speech probe (after Peters et al., 2018, §5.3 and Table 6).

Peters et al. trained a linear classifier on each biLM layer's frozen vectors to tag the Penn
Treebank: layer 1 reached 97.3 % accuracy, layer 2 96.8 %: syntax (POS) is best read from the
lower biLSTM layer. Here the same protocol runs on our own models and on Chinese:

* data: People's Daily, January 1998, PKU tag set (``corpus.py``); a deterministic random split
  *by sentence* into train / test sentences (default 1500 / 500, ≤ 100 characters each);
* a word's vector in a layer = mean of its characters' vectors (``vectors.py``);
* probe: ``StandardScaler`` + scikit-learn ``LogisticRegression`` (multinomial, L2, C = 1), one per
  layer, trained on the train words, accuracy on the test words;
* fine tags = the PKU tags as given (~40); coarse tags = first letter (``nr``→``n``, ``Vg``→``v``),
  scored by collapsing the fine probe's prediction (no second classifier is trained);
* baselines: majority tag; word identity (each test word gets its most frequent train tag, unseen
  words the majority tag); a static word2vec probe (OOV words: zero vector + an OOV flag feature).
"""
from __future__ import annotations

import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from .corpus import TaggedSentence, coarse_tag, load_sentences, sample_split
from .vectors import Progress, each_model, no_progress, scaled_progress, sentence_vectors, store_result

DEFAULTS = {"n_train": 1500, "n_test": 500, "max_chars": 100, "seed": 0}
QUICK = {"n_train": 300, "n_test": 100}
MAX_ITER = 100
CLASSIFIER = "StandardScaler + LogisticRegression(lbfgs, multinomial, C=1.0, max_iter=100)"


def probe_accuracy(train_x: np.ndarray, train_y: Sequence[str] | np.ndarray, test_x: np.ndarray,
                   test_y: Sequence[str] | np.ndarray, *,
                   max_iter: int = MAX_ITER, c: float = 1.0) -> tuple[float, np.ndarray]:
    """Fit a linear probe on (train_x, train_y); return (test accuracy in [0, 1], predicted labels).

    With a single training class the probe predicts that class (scikit-learn refuses to fit it).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    train_y, test_y = np.asarray(train_y), np.asarray(test_y)
    if len(test_y) == 0:
        raise ValueError("no test items")
    classes = np.unique(train_y)
    if len(classes) < 2:
        predicted = np.full(len(test_y), classes[0] if len(classes) else "", dtype=object)
    else:
        from threadpoolctl import threadpool_limits

        scaler = StandardScaler().fit(train_x)
        # One BLAS thread: on a CPU shared with training jobs, spinning BLAS threads cost far more
        # than they gain for matrices this small.
        with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
            warnings.simplefilter("ignore", ConvergenceWarning)  # a probe, not a tuned tagger
            clf = LogisticRegression(max_iter=max_iter, C=c).fit(scaler.transform(train_x), train_y)
        predicted = clf.predict(scaler.transform(test_x))
    return float(np.mean(predicted == test_y)), predicted


def coarse_accuracy(predicted: Sequence[str] | np.ndarray, gold: Sequence[str]) -> float:
    return float(np.mean([coarse_tag(p) == coarse_tag(g) for p, g in zip(predicted, gold)]))


def outcome_strings(predicted: Sequence[str] | np.ndarray, gold: Sequence[str]) -> dict[str, str]:
    """``{"fine": "0110…", "coarse": …}``: right (1) or wrong (0) per test word, in the test words' order, so that
    two layers (or a layer and a baseline) tagging the same words are compared paired
    (``core.compute.stats.paired``)."""
    return {"fine": "".join("1" if p == g else "0" for p, g in zip(predicted, gold)),
            "coarse": "".join("1" if coarse_tag(p) == coarse_tag(g) else "0" for p, g in zip(predicted, gold))}


def _flat(sentences: Sequence[TaggedSentence]) -> tuple[list[str], list[str]]:
    words = [w for s in sentences for w in s.words]
    tags = [t for s in sentences for t in s.tags]
    return words, tags


def baselines(train: Sequence[TaggedSentence], test: Sequence[TaggedSentence]) -> dict:
    """Majority-tag and word-identity baselines (fine and coarse accuracy on the test words)."""
    train_words, train_tags = _flat(train)
    test_words, test_tags = _flat(test)
    majority = Counter(train_tags).most_common(1)[0][0]
    per_word: dict[str, Counter] = defaultdict(Counter)
    for word, tag in zip(train_words, train_tags):
        per_word[word][tag] += 1
    lookup = [per_word[w].most_common(1)[0][0] if w in per_word else majority for w in test_words]
    unseen = sum(w not in per_word for w in test_words) / len(test_words)
    return {
        "majority": {"tag": majority, "fine": float(np.mean([t == majority for t in test_tags])),
                     "coarse": coarse_accuracy([majority] * len(test_tags), test_tags)},
        "word_identity": {"fine": float(np.mean([p == t for p, t in zip(lookup, test_tags)])),
                          "coarse": coarse_accuracy(lookup, test_tags), "unseen_rate": unseen,
                          "outcomes": outcome_strings(lookup, test_tags)},
    }


def layer_features(vectors, layer: int, with_flag: bool) -> np.ndarray:
    """One layer of a list of :class:`~.vectors.SentenceVectors` as rows ``(words, dim)``."""
    x = np.concatenate([v.layers[layer] for v in vectors], axis=0)
    if with_flag:  # static model: tell the probe which rows are OOV zeros
        oov = np.concatenate([~v.found for v in vectors]).astype(np.float32)[:, None]
        x = np.concatenate([x, oov], axis=1)
    return x


def probe_model(encoder, train: Sequence[TaggedSentence], test: Sequence[TaggedSentence], *,
                progress: Progress = no_progress) -> dict:
    """Per-layer fine/coarse accuracy of one encoder, its per-word outcomes (``{"fine": [one string per layer],
    "coarse": …}``), plus OOV rates for a static model."""
    t0 = time.time()
    _, train_tags = _flat(train)
    _, test_tags = _flat(test)
    static = encoder.kind == "static"
    encode_share = 0.1 if static else 0.4
    n_train = len(train)
    vectors = sentence_vectors(encoder, [s.words for s in train] + [s.words for s in test],
                               progress=scaled_progress(progress, 0.0, encode_share))
    train_vectors, test_vectors = vectors[:n_train], vectors[n_train:]
    encode_seconds = time.time() - t0
    fine, coarse, outcomes = [], [], []
    for layer in range(encoder.num_layers):
        progress(encode_share + (1 - encode_share) * layer / encoder.num_layers,
                 f"{encoder.name}: probe {encoder.layer_names[layer]}")
        accuracy, predicted = probe_accuracy(layer_features(train_vectors, layer, static), train_tags,
                                             layer_features(test_vectors, layer, static), test_tags)
        fine.append(accuracy)
        coarse.append(coarse_accuracy(predicted, test_tags))
        outcomes.append(outcome_strings(predicted, test_tags))
    result = {"layer_names": list(encoder.layer_names), "kind": encoder.kind, "fine": fine, "coarse": coarse,
              "outcomes": {tagset: [o[tagset] for o in outcomes] for tagset in ("fine", "coarse")},
              "encode_seconds": round(encode_seconds, 1), "seconds": round(time.time() - t0, 1)}
    missing_train = float(np.mean(np.concatenate([~v.found for v in train_vectors])))
    missing_test = float(np.mean(np.concatenate([~v.found for v in test_vectors])))
    if static:
        result.update(oov_rate_train=missing_train, oov_rate_test=missing_test)
    else:
        result.update(uncovered_rate_test=missing_test)
    progress(1.0, f"{encoder.name}: done")
    return result


def run_pos_probe(models: Sequence, *, static=None, sentences: Sequence[TaggedSentence] | None = None,
                  n_train: int = DEFAULTS["n_train"], n_test: int = DEFAULTS["n_test"],
                  max_chars: int = DEFAULTS["max_chars"], seed: int = DEFAULTS["seed"], corpus: str | None = None,
                  progress: Progress = no_progress) -> dict:
    """The whole POS experiment: split, baselines, one probe per layer of every model.

    ``models``: contextual models (names or Encoders); ``static``: the static baseline model or
    None. Models that cannot be loaded are listed under ``"skipped"`` with the reason.
    ``sentences`` replaces the corpus (tests pass tiny synthetic data).
    """
    t0 = time.time()
    pool = list(sentences) if sentences is not None else list(load_sentences(corpus, max_chars=max_chars))
    train, test = sample_split(pool, n_train, n_test, seed)
    _, train_tags = _flat(train)
    _, test_tags = _flat(test)
    out: dict[str, Any] = {
        "config": {"n_train_sentences": len(train), "n_test_sentences": len(test),
                   "n_train_words": len(train_tags), "n_test_words": len(test_tags),
                   "n_tags_fine": len(set(train_tags) | set(test_tags)),
                   "n_tags_coarse": len({coarse_tag(t) for t in train_tags + test_tags}),
                   "max_chars": max_chars, "seed": seed, "classifier": CLASSIFIER,
                   "pool_sentences": len(pool)},
        "baselines": baselines(train, test),
        "models": {}, "static": None, "skipped": {},
    }
    for encoder, name, sub, is_static in each_model(models, static, progress, out["skipped"]):
        result = probe_model(encoder, train, test, progress=sub)
        store_result(out, name, is_static, result)
    out["seconds"] = round(time.time() - t0, 1)
    progress(1.0, "POS probe done")
    return out
