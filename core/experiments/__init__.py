"""Layer-wise experiments that reproduce published findings on the project's own small models.

    python -m core.experiments [--models mini-elmo-zh mini-bert-zh] [--out assets/experiments.json] [--quick]
                               [--only STAGE ...]

* :mod:`.pos_probe`: per-layer linear POS probe (Peters et al., 2018, Table 6);
* :mod:`.sense_probe`: per-layer nearest-sense-centroid word-sense probe (Peters et al., 2018,
  Table 5; Coenen et al., 2019);
* :mod:`.context_specificity`: self-similarity, intra-sentence similarity, anisotropy
  (Ethayarajh, 2019);
* :mod:`.learned_mix`: ELMo's s and γ learned on two tasks (POS tagging, review sentiment) on frozen
  mini-elmo-zh features (Peters et al., 2018, §3.2), for the ELMo page;
* :mod:`.concat`: the lecture's use of ELMo, [x; ELMo] (static word vectors and ELMo vectors
  concatenated) on the POS task, against each alone (Peters et al., 2018, §3.3), for the ELMo page.

:func:`run_all` runs them (or some of them, the rest kept from earlier results) and returns one
JSON-ready dict; the pages read it from ``assets/experiments.json`` (:func:`load_results`) so that
they open instantly. :func:`probe_presets` turns mini-elmo-zh's probe accuracies into ELMo
layer-weight presets that keep only the differences beyond sampling error.
Every ``run_*`` function takes ``progress(fraction, text)``, a callback for progress bars.
"""
from __future__ import annotations

import datetime as _dt
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..content import results_store
from ..models.catalogue import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC, EMBEDDED, MODELS_DIR
from ..runtime.concurrency import heavy
from ..runtime.paths import ASSETS
from . import concat, context_specificity, learned_mix, pos_probe, sense_probe, view
from .vectors import Progress, no_progress, scaled_progress

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ASSETS / "experiments.json"
DEFAULT_MODELS = (DEFAULT_ELMO, DEFAULT_BERT)
FORMAT_VERSION = 1

# The published numbers the page compares against (percent). Sources:
#   Peters et al. (2018) "Deep contextualized word representations", NAACL, §5.3, Tables 5 and 6;
#   Coenen et al. (2019) "Visualizing and Measuring the Geometry of BERT", NeurIPS, §4.1;
#   Ethayarajh (2019) "How Contextual are Contextualized Word Representations?", EMNLP.
PUBLISHED = {
    "pos": {"source": "Peters et al. 2018, Table 6", "metric": "accuracy", "data": "Penn Treebank POS",
            "layers": {"biLM layer 1": 97.3, "biLM layer 2": 96.8}},
    "wsd": {"source": "Peters et al. 2018, Table 5", "metric": "F1", "data": "all-words WSD (SemCor senses)",
            "layers": {"biLM layer 1": 67.4, "biLM layer 2": 69.0}},
    "coenen": {"source": "Coenen et al. 2019, §4.1", "metric": "F1", "model": "BERT-base", "f1": 71.1},
    "ethayarajh": {"source": "Ethayarajh 2019", "static_variance_explained_below": 5},
}

STAGE_SHARE = {"pos": 0.40, "senses": 0.03, "context": 0.10, "learned_mix": 0.27, "concat": 0.20}
STAGES = tuple(STAGE_SHARE)


def _round(value, digits: int = 4):
    """Floats rounded for a compact JSON file (recursively); NaN/inf become None."""
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, digits)
    if isinstance(value, (np.floating, np.integer)):
        return _round(value.item(), digits)
    if isinstance(value, dict):
        return {k: _round(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v, digits) for v in value]
    return value


def checkpoint_fingerprint(name: str) -> dict | None:
    """File name, size and content hash of an embedded model's weights (None for other models)."""
    if name not in EMBEDDED:
        return None
    directory = MODELS_DIR / name
    for filename in ("model.safetensors", "vectors.safetensors"):
        path = directory / filename
        if path.exists():
            return {"file": filename, "bytes": path.stat().st_size, "sha256": results_store.weights_digest(path)}
    return None


def stale_models(results: dict) -> list[str]:
    """Embedded models whose weights changed (or appeared) since ``results`` were computed."""
    used = results.get("checkpoints", {})
    stale = []
    for name in results.get("requested_models", []):
        now = checkpoint_fingerprint(name)
        if now is None:
            continue
        before = used.get(name) or {}
        if "sha256" not in before and "mtime" in before:  # results written before hashes were stored
            stat = (MODELS_DIR / name / now["file"]).stat()
            now = {"file": now["file"], "bytes": stat.st_size,
                   "mtime": _dt.datetime.fromtimestamp(stat.st_mtime, _dt.UTC).isoformat(timespec="seconds")}
        if before != now:
            stale.append(name)
    return stale


@heavy
def run_all(models=DEFAULT_MODELS, *, static=DEFAULT_STATIC, quick: bool = False, corpus: str | None = None,
            progress: Progress = no_progress, log=None, only: Sequence[str] | None = None,
            previous: dict | None = None) -> dict:
    """Every experiment (:data:`STAGES`) on ``models`` (+ the ``static`` baseline); a JSON-ready dict.

    ``quick`` shrinks the samples (POS 300/100 sentences, 10 words × 8 contexts, smaller learned-mix
    and concatenation tasks) for development.
    ``only``: run these stages and take every other one, with its timing, from ``previous`` (results of
    the same models and mode on the same weights: ``__main__`` checks that).
    ``log(text)`` receives one line per finished stage (the CLI prints timings with it).
    """
    log = log or (lambda text: None)
    models = list(models)
    pos_kw: dict[str, Any] = dict(pos_probe.QUICK) if quick else {}
    ctx_kw: dict[str, Any] = dict(context_specificity.QUICK) if quick else {}
    mix_kw: dict[str, Any] = dict(learned_mix.QUICK) if quick else {}
    concat_kw: dict[str, Any] = dict(concat.QUICK) if quick else {}
    only = STAGES if only is None else tuple(only)
    requested = [m if isinstance(m, str) else m.name for m in models + ([static] if static is not None else [])]
    results: dict = {
        "version": FORMAT_VERSION, "quick": bool(quick),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "requested_models": requested,
        "checkpoints": {name: checkpoint_fingerprint(name) for name in requested if checkpoint_fingerprint(name)},
        "published": PUBLISHED,
    }
    if set(only) != set(STAGES):
        results["stages_rerun"] = [key for key in STAGES if key in only]
    lo = 0.0
    stages = (("pos", lambda p: pos_probe.run_pos_probe(models, static=static, corpus=corpus, progress=p, **pos_kw)),
              ("senses", lambda p: sense_probe.run_sense_probe(models, static=static, progress=p)),
              ("context", lambda p: context_specificity.run_context_specificity(
                  models, static=static, corpus=corpus, progress=p, **ctx_kw)),
              ("learned_mix", lambda p: learned_mix.run_learned_mix(models, corpus=corpus, progress=p, **mix_kw)),
              ("concat", lambda p: concat.run_concat(models, static=static, corpus=corpus, progress=p, **concat_kw)))
    timing = {}
    for key, run in stages:
        hi = lo + STAGE_SHARE[key]
        if key not in only:
            assert previous is not None, "only= some stages needs previous= for the others"
            results[key] = previous[key]
            timing[key] = previous["timing_seconds"][key]
            lo = hi
            continue
        t1 = time.time()
        results[key] = run(scaled_progress(progress, lo, hi))
        timing[key] = round(time.time() - t1, 1)
        log(f"{key}: {timing[key]:.1f} s")
        lo = hi
    timing["total"] = round(sum(timing.values()), 1)  # every stage's own time, kept or rerun
    results["timing_seconds"] = timing
    try:
        results["presets"] = probe_presets(results)
    except ValueError:
        results["presets"] = None
    progress(1.0, "done")
    return _round(results)


def save_results(results: dict, path: Path | str = DEFAULT_OUT) -> Path:
    return results_store.save(results, path)


def load_results(path: Path | str = DEFAULT_OUT) -> dict | None:
    """The cached results, or None when the file does not exist yet."""
    return results_store.load(path, FORMAT_VERSION)


def probe_presets(results: dict, *, model: str = DEFAULT_ELMO) -> dict:
    """ELMo layer-weight presets from ``model``'s per-layer probe accuracies that keep only differences
    beyond sampling error.

    ``{"syntax": preset, "semantics": preset}``, from the POS probe (fine tags, on the test words) and the
    word-sense probe (every word's labelled sentences pooled). A preset is ``{"s", "accuracy", "n", "best",
    "tied", "paired"}``: ``best`` is the layer with the highest accuracy, ``tied`` every layer that the
    statistics policy cannot tell apart from it on the same items (``view.layer_ties``: exact McNemar when the
    per-item outcomes are stored, ``paired`` True; ``best`` included); s is uniform over ``tied`` and 0
    elsewhere, so a layer loses weight only where the probe tells it apart from the best one.
    (Peters et al. *learn* s per task; these presets only say which layers our probes can tell apart.)

    Raises ValueError when ``results`` lacks ``model``'s probes (e.g. it was not trained yet).
    """
    try:
        probes = {"syntax": view.pos_scores(results, model), "semantics": view.sense_scores(results, model)}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"no probe results for {model}") from exc
    if any(v is None for scores in probes.values() for v in scores.values):
        raise ValueError(f"incomplete probe results for {model}")
    out = {}
    for name, scores in probes.items():
        ties = view.layer_ties(scores)
        out[name] = {"s": [1 / len(ties.tied) if j in ties.tied else 0.0 for j in range(len(scores.values))],
                     "accuracy": list(scores.values), "n": scores.n, "best": ties.best, "tied": ties.tied,
                     "paired": ties.paired}
    return out


__all__ = ["DEFAULT_MODELS", "DEFAULT_OUT", "PUBLISHED", "STAGES", "load_results", "probe_presets", "run_all",
           "save_results", "stale_models", "checkpoint_fingerprint"]
