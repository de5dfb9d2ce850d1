"""Classroom readiness checks for the home page: its table of models (the embedded ones and the hub models a
class may use), is a hub model in the local cache, are the transfer results precomputed. Pure, never touches
the network."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..models.catalogue import ModelInfo

SUGGESTED_HUB_MODEL = "bert-base-chinese"


@dataclass(frozen=True)
class ModelRow:
    """One row of the home page's model table."""
    name: str
    kind: str  # the registry's kind ("bert", "elmo", "static"), or "hub" for a hub id
    ready: bool  # an embedded model loads / a hub model is in the local cache
    num_layers: int | None
    info: ModelInfo | None  # the registry's entry (its description, or why it is missing); None for a hub id


def model_rows(models: Sequence[ModelInfo], chosen: str | None) -> list[ModelRow]:
    """The registry's models, then the suggested hub model and the ``chosen`` one when it is a hub id not listed
    yet (a directory or an embedded name has its row already or none), each with whether it is cached here."""
    rows = [ModelRow(m.name, m.kind, m.available, m.num_layers, m) for m in models]
    hub_ids = [SUGGESTED_HUB_MODEL]
    if chosen and chosen not in {m.name for m in models} | set(hub_ids) and looks_like_hub_id(chosen):
        hub_ids.append(chosen)
    return rows + [ModelRow(hub_id, "hub", hub_model_cached(hub_id), None, None) for hub_id in hub_ids]


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
