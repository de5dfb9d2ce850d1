"""Classroom readiness checks for the home page: is a hub model in the local cache, are the transfer
results precomputed. Pure, never touches the network."""
from __future__ import annotations

import json
from pathlib import Path

SUGGESTED_HUB_MODEL = "bert-base-chinese"


def hub_model_cached(repo_id: str) -> bool:
    """True when ``repo_id``'s config.json is in the local Hugging Face cache (no network access)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an id the hub library rejects (bad characters, too long, …)
        return False
    return isinstance(found, str) and Path(found).is_file()


def looks_like_hub_id(name: str | None) -> bool:
    """``org/name`` or ``name``: not a local path, not one of the embedded models' directories."""
    if not name:
        return False
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or Path(name).expanduser().is_dir():
        return False
    return True


def transfer_results_summary(path: Path) -> dict | None:
    """``{"created", "steps", "accuracy"}`` of the cached transfer results, or None if there are none."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {"created": data.get("created"), "steps": data["config"]["steps"],
                "accuracy": data["fine_tune"]["accuracy"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
