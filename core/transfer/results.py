"""The experiment's results kept and shown: the JSON file the page reads (``assets/transfer_results.json``,
format RESULTS_VERSION), weight fingerprints that tell results computed on older models, and the plain-text
summary the CLI prints.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..content import results_store
from ..runtime.paths import TRANSFER_RESULTS
from .features import POOLINGS

RESULTS_PATH = TRANSFER_RESULTS
RESULTS_VERSION = 1


def model_fingerprint(encoder_or_dir) -> str | None:
    """sha256 (first 16 hex digits) of a model directory's weights, to tell stale cached results."""
    is_path = isinstance(encoder_or_dir, (str, Path))
    directory = encoder_or_dir if is_path else getattr(encoder_or_dir, "directory", None)
    if directory is None:
        name = getattr(encoder_or_dir, "name", None)
        if name is None:
            return None
        from ..models.catalogue import MODELS_DIR
        directory = MODELS_DIR / name if (MODELS_DIR / name).is_dir() else Path(name)
    directory = Path(directory)
    path = directory / "model.safetensors"
    return results_store.weights_digest(path) if path.is_file() else None


def stale_models(results: dict, models: dict[str, str | None]) -> list[str]:
    """Of ``models`` (results key such as ``"feature_bert"`` → the model's name or directory now), those
    whose weights differ from the ones the results were computed on."""
    from ..models.catalogue import MODELS_DIR

    stale = []
    for key, name in models.items():
        saved = (results.get(key) or {}).get("fingerprint")
        now = model_fingerprint(MODELS_DIR / name) if name else None  # an absolute directory stays itself
        if name and saved and now and saved != now:
            stale.append(name)
    return stale


def load_results(path: Path | str = RESULTS_PATH) -> dict | None:
    """The cached results, or None when the file does not exist yet."""
    return results_store.load(path, RESULTS_VERSION, lambda results: isinstance(results.get("feature_bert"), dict)
                              and isinstance(results.get("fine_tune"), dict))


def save_results(results: dict, path: Path | str = RESULTS_PATH) -> Path:
    return results_store.save(results, path)


def curve_text(curve: Sequence[dict]) -> str:
    """Held-out accuracy by step, e.g. ``0:0.55 60:0.76``."""
    return " ".join(f"{p['step']}:{p['accuracy']:.2f}" for p in curve)


def _chosen(choice: dict | None) -> str:
    """e.g. ``lr 0.0001 (validation 3e-05:0.713 0.0001:0.773 …)``; "" for results without a choice."""
    if not choice:
        return ""
    tried = " ".join(f"{value}:{accuracy:.3f}" for value, accuracy in choice["val_accuracy"].items())
    return f"{choice['name']} {choice['chosen']:g} (validation {tried})"


def summary_lines(results: dict) -> list[str]:
    """A short plain-text summary (CLI output)."""
    lines = []
    elmo = results.get("feature_elmo")
    if elmo:
        layers = "standardised layers" if elmo.get("standardised") else "raw layers"  # older files: raw
        lines.append(f"feature-based  {elmo['model']:<14} {layers}, uniform mix, mean-pooled + LR   "
                     f"acc {elmo['accuracy']:.3f}  {_chosen(elmo.get('choice'))}  "
                     f"trained {elmo['trained_params']:,} / frozen {elmo['frozen_params']:,}")
    else:
        lines.append("feature-based  mini-elmo-zh   skipped (model not available)")
    bert = results["feature_bert"]
    for pooling in POOLINGS:
        choices = (bert.get("choice") or {}).get(pooling) or [None] * len(bert["accuracy"][pooling])
        accs = " ".join(f"{a:.3f}" + (f" (C {c['chosen']:g})" if c else "")
                        for a, c in zip(bert["accuracy"][pooling], choices))
        last_layer = len(bert["accuracy"][pooling]) - 1
        lines.append(f"feature-based  {bert['model']:<14} {pooling:<4} per layer (0..{last_layer}) + LR: {accs}")
    lines.append(f"               trained {bert['trained_params']:,} / frozen {bert['frozen_params']:,}")
    ft = results["fine_tune"]
    lines.append(f"fine-tuning    {ft['model']:<14} {results['config']['steps']} steps, "
                 f"lr {results['config']['lr']:g}, acc {ft['accuracy']:.3f} "
                 f"(held-out accuracy by step {curve_text(ft['curve'])})  "
                 f"trained {ft['trained_params']:,} / frozen {ft['frozen_params']:,}  {_chosen(ft.get('choice'))}")
    lora = results.get("lora")
    if lora:
        lines.append(f"LoRA           {lora['model']:<14} r {lora['settings']['r']}, lr {lora['settings']['lr']:g}, "
                     f"acc {lora['accuracy']:.3f} (by step {curve_text(lora['curve'])})  "
                     f"trained {lora['trained_params']:,} / frozen {lora['frozen_params']:,}  "
                     f"{_chosen(lora.get('choice'))}")
    lines.append(f"majority baseline {results['majority_baseline']:.3f}")
    lines.append("timings, wall (s): " + ", ".join(f"{k} {v}" for k, v in results["timings"].items()))
    lines.append("timings, CPU (s):  " + ", ".join(f"{k} {v}" for k, v in results.get("cpu_timings", {}).items()))
    return lines
