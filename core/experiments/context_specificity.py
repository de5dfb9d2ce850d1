"""How contextual are the layers? Self-similarity, intra-sentence similarity and anisotropy per
layer (after Ethayarajh, 2019, "How Contextual are Contextualized Word Representations?", §3-4).

For a layer ℓ and cosine similarity cos:

* **self-similarity** of a word w seen in contexts s₁…sₙ: mean cos between its n vectors over all
  pairs i ≠ j; averaged over the sampled words. 1 = the same vector everywhere (a static model).
* **intra-sentence similarity** of a sentence with word vectors v₁…vₘ: mean of cos(vᵢ, v̄), v̄ the
  mean of the vᵢ; averaged over the sampled sentences.
* **anisotropy**: mean cos between random word pairs from *different* sentences (the same pairs in
  every layer). Contextual vectors share a common direction, so even unrelated words have a high
  cosine; Ethayarajh subtracts this baseline: adjusted = raw − anisotropy.

Sample: the ``n_words`` words that occur in the most sentences of the People's Daily text
(punctuation ``w`` and numerals ``m`` excluded, at least ``min_contexts`` sentences), each in up to
``max_contexts`` sentences drawn at random (seeded); the occurrence used is the first one in each
sentence. Word vectors = mean of their characters' vectors (gold segmentation).
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from .corpus import TaggedSentence, load_sentences
from .vectors import Progress, each_model, no_progress, scaled_progress, sentence_vectors, store_result

DEFAULTS = {"n_words": 30, "max_contexts": 20, "min_contexts": 5, "n_pairs": 2000, "seed": 0, "max_chars": 100}
QUICK = {"n_words": 10, "max_contexts": 8}
EXCLUDED_TAGS = frozenset({"w", "m"})


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 1e-12)


def self_similarity(vectors: np.ndarray) -> float:
    """Mean pairwise cosine (i ≠ j) of one word's vectors ``(n, dim)``, n ≥ 2."""
    n = vectors.shape[0]
    if n < 2:
        raise ValueError("self-similarity needs at least two occurrences")
    unit = _unit(np.asarray(vectors, np.float64))
    sims = unit @ unit.T
    return float(np.clip((sims.sum() - np.trace(sims)) / (n * (n - 1)), -1.0, 1.0))


def intra_sentence_similarity(vectors: np.ndarray) -> float:
    """Mean cosine between a sentence's word vectors ``(m, dim)`` and their mean vector."""
    x = np.asarray(vectors, np.float64)
    unit = _unit(x)
    centre = _unit(x.mean(axis=0))
    return float(np.mean(unit @ centre))


def random_pairs(sizes: Sequence[int] | np.ndarray, n_pairs: int, seed: int = 0) -> np.ndarray:
    """``(k, 2)`` indices into the concatenated sentences: pairs of words from different sentences."""
    sizes = np.asarray(sizes)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    if len(sizes) < 2 or owner.size < 2:
        return np.zeros((0, 2), dtype=np.int64)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, owner.size, size=n_pairs * 2)
    b = rng.integers(0, owner.size, size=n_pairs * 2)
    keep = owner[a] != owner[b]
    return np.stack([a[keep], b[keep]], axis=1)[:n_pairs]


def standard_error(samples) -> float | None:
    """Standard error of the mean of ``samples`` (None for fewer than two)."""
    x = np.asarray(samples, dtype=np.float64)
    return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) >= 2 else None


def specificity_measures(occurrences: dict[str, np.ndarray], sentences: Sequence[np.ndarray], *,
                         n_pairs: int = DEFAULTS["n_pairs"], seed: int = 0) -> dict:
    """The per-layer measures from raw vectors.

    ``occurrences``: word → ``(num_layers, n, dim)`` vectors of its n contexts (words with n < 2 are
    ignored); ``sentences``: one ``(num_layers, m, dim)`` array per sentence (all its words).
    Returns lists over layers: ``self_similarity``, ``intra_sentence``, ``anisotropy``, the two
    ``*_adjusted`` lists (raw − anisotropy), ``per_word`` self-similarity, ``se``: the standard error of
    each raw measure per layer (over words, sentences, pairs), and ``change``: each adjusted measure's
    change from layer 1 to the top layer with its standard error (paired over the same words, sentences
    and pairs; None with fewer than three layers).
    """
    words = {w: v for w, v in occurrences.items() if v.shape[1] >= 2}
    if not words:
        raise ValueError("no word with at least two occurrences")
    sentences = [s for s in sentences if s.shape[1] >= 1]
    num_layers = next(iter(words.values())).shape[0]
    pairs = random_pairs([s.shape[1] for s in sentences], n_pairs, seed)
    per_word = {w: [self_similarity(v[layer]) for layer in range(num_layers)] for w, v in words.items()}
    multi = [s for s in sentences if s.shape[1] >= 2]
    # one row per word / sentence / pair, one column per layer: the samples the means and their errors come from
    samples = {"self_similarity": np.array([per_word[w] for w in words]),
               "intra_sentence": np.array([[intra_sentence_similarity(s[layer]) for layer in range(num_layers)]
                                           for s in multi]).reshape(len(multi), num_layers)}
    if len(pairs):
        flat = [_unit(np.concatenate([s[layer] for s in sentences], axis=0).astype(np.float64))
                for layer in range(num_layers)]
        samples["anisotropy"] = np.stack([np.sum(f[pairs[:, 0]] * f[pairs[:, 1]], axis=1) for f in flat], axis=1)
    else:
        samples["anisotropy"] = np.zeros((0, num_layers))
    means = {k: [float(v) for v in x.mean(axis=0)] if len(x) else [None] * num_layers for k, x in samples.items()}
    adjust = lambda raw: [None if r is None or a is None else r - a for r, a in zip(raw, means["anisotropy"])]  # noqa: E731
    change: dict[str, Any] = {}
    for measure in ("self_similarity", "intra_sentence"):
        raw, aniso = samples[measure], samples["anisotropy"]
        if num_layers < 3 or len(raw) < 2 or len(aniso) < 2:
            change[f"{measure}_adjusted"] = None
            continue
        d_raw, d_aniso = raw[:, -1] - raw[:, 1], aniso[:, -1] - aniso[:, 1]
        se_raw, se_aniso = standard_error(d_raw), standard_error(d_aniso)
        assert se_raw is not None and se_aniso is not None  # two samples or more each, checked above
        change[f"{measure}_adjusted"] = {
            "from": 1, "to": num_layers - 1, "value": float(d_raw.mean() - d_aniso.mean()),
            "se": float(np.hypot(se_raw, se_aniso))}
    return {"self_similarity": means["self_similarity"], "intra_sentence": means["intra_sentence"],
            "anisotropy": means["anisotropy"], "self_similarity_adjusted": adjust(means["self_similarity"]),
            "intra_sentence_adjusted": adjust(means["intra_sentence"]), "per_word": per_word,
            "n_pairs": int(len(pairs)),
            "se": {k: [standard_error(x[:, j]) for j in range(num_layers)] for k, x in samples.items()},
            "change": change}


def select_words(pool: Sequence[TaggedSentence], n_words: int, min_contexts: int) -> list[str]:
    """The ``n_words`` words found in the most sentences (punctuation and numerals excluded)."""
    document_frequency: Counter = Counter()
    for sentence in pool:
        document_frequency.update({w for w, t in zip(sentence.words, sentence.tags) if t not in EXCLUDED_TAGS})
    ranked = sorted(document_frequency.items(), key=lambda item: (-item[1], item[0]))
    return [w for w, count in ranked if count >= min_contexts][:n_words]


def sample_contexts(pool: Sequence[TaggedSentence], words: Sequence[str], max_contexts: int, seed: int = 0):
    """Up to ``max_contexts`` random sentences per word.

    Returns ``(sentences, contexts)``: the distinct sentences used (pool order) and, per word, a list
    of ``(index into sentences, word position)`` for its first occurrence in each.
    """
    rng = np.random.default_rng(seed)
    chosen: dict[str, list[int]] = {}
    for word in words:
        having = [i for i, s in enumerate(pool) if word in s.words]
        picked = rng.choice(len(having), size=min(max_contexts, len(having)), replace=False)
        chosen[word] = sorted(having[k] for k in picked)
    used = sorted({i for ids in chosen.values() for i in ids})
    position = {pool_index: k for k, pool_index in enumerate(used)}
    sentences = [pool[i] for i in used]
    contexts = {w: [(position[i], pool[i].words.index(w)) for i in ids] for w, ids in chosen.items()}
    return sentences, contexts


def measure_model(encoder, sentences: Sequence[TaggedSentence], contexts: dict[str, list[tuple[int, int]]], *,
                  n_pairs: int, seed: int, progress: Progress = no_progress) -> dict:
    """Encode the sampled sentences once and compute the measures (words without a vector dropped)."""
    t0 = time.time()
    vectors = sentence_vectors(encoder, [s.words for s in sentences], progress=scaled_progress(progress, 0, 0.9))
    occurrences = {}
    for word, places in contexts.items():
        found = [(k, p) for k, p in places if vectors[k].found[p]]
        if len(found) >= 2:
            occurrences[word] = np.stack([vectors[k].layers[:, p] for k, p in found], axis=1)
    sentence_arrays = [v.layers[:, v.found] for v in vectors]
    result = specificity_measures(occurrences, sentence_arrays, n_pairs=n_pairs, seed=seed)
    result.update(layer_names=list(encoder.layer_names), kind=encoder.kind, n_words=len(occurrences),
                  n_occurrences=int(sum(v.shape[1] for v in occurrences.values())),
                  dropped_words=sorted(set(contexts) - set(occurrences)), seconds=round(time.time() - t0, 1))
    progress(1.0, f"{encoder.name}: done")
    return result


def run_context_specificity(models: Sequence, *, static=None, sentences: Sequence[TaggedSentence] | None = None,
                            n_words: int = DEFAULTS["n_words"], max_contexts: int = DEFAULTS["max_contexts"],
                            min_contexts: int = DEFAULTS["min_contexts"], n_pairs: int = DEFAULTS["n_pairs"],
                            seed: int = DEFAULTS["seed"], max_chars: int = DEFAULTS["max_chars"],
                            corpus: str | None = None, progress: Progress = no_progress) -> dict:
    """The whole experiment for every model; ``sentences`` replaces the corpus (tests)."""
    t0 = time.time()
    pool = list(sentences) if sentences is not None else list(load_sentences(corpus, max_chars=max_chars))
    words = select_words(pool, n_words, min_contexts)
    if not words:
        from ..guard.errors import LabError

        raise LabError("too_few_contexts", count=min_contexts)
    used, contexts = sample_contexts(pool, words, max_contexts, seed)
    out: dict[str, Any] = {
        "config": {"n_words": len(words), "max_contexts": max_contexts, "min_contexts": min_contexts,
                   "n_sentences": len(used), "n_occurrences": int(sum(len(c) for c in contexts.values())),
                   "n_pairs": n_pairs, "seed": seed, "words": words,
                   "contexts_per_word": {w: len(c) for w, c in contexts.items()},
                   "selection": "most frequent words by number of sentences, "
                                "punctuation (w) and numerals (m) excluded"},
        "models": {}, "static": None, "skipped": {},
    }
    for encoder, name, sub, is_static in each_model(models, static, progress, out["skipped"]):
        try:
            result = measure_model(encoder, used, contexts, n_pairs=n_pairs, seed=seed, progress=sub)
        except ValueError as exc:  # e.g. a static model that lacks every sampled word
            out["skipped"][name] = {"zh": f"无法计算：{exc}", "en": f"cannot be measured: {exc}"}
            continue
        store_result(out, name, is_static, result)
    out["seconds"] = round(time.time() - t0, 1)
    return out
