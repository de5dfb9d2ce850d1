"""Hub models already in the local Hugging Face cache, which the sidebar offers beside the embedded ones.

A lecturer with internet downloads a model once (``hf download bert-base-chinese``); afterwards, offline
(``HF_HUB_OFFLINE=1``), ``core.models`` loads it from the cache like any hub id. This module only lists what is
there (``huggingface_hub.scan_cache_dir``): BERT-family masked LMs (``core.models.catalogue.MASKED_LM_TYPES``) whose
``main`` snapshot has a ``config.json`` and safetensors weights, under a well-formed hub id. Loading, and every
check that comes with it, stays ``core.models.cache.load_encoder``'s.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from huggingface_hub import constants, scan_cache_dir
from huggingface_hub.errors import CacheNotFound

from ..guard.safe_text import well_formed_model_name
from .catalogue import HUB_ID, MASKED_LM_TYPES, ModelInfo
from .hub import FAILURE_TTL_S

_scans: dict[str, tuple[float, list[ModelInfo]]] = {}  # cache dir -> (monotonic time, models): one scan a minute


def cached_masked_lms(cache_dir: str | Path | None = None) -> list[ModelInfo]:
    """The masked LMs in the hub cache (``cache_dir``, default ``HF_HUB_CACHE``), sorted by id; an empty list
    when there is no cache or it cannot be read. Scanned at most once per ``FAILURE_TTL_S`` (the sidebar asks
    on every rerun of every page)."""
    key = str(cache_dir or constants.HF_HUB_CACHE)  # read now: HF_HUB_CACHE as this process has it
    now = time.monotonic()
    if key in _scans and now - _scans[key][0] < FAILURE_TTL_S:
        return _scans[key][1]
    try:
        repos = scan_cache_dir(key).repos
    except (CacheNotFound, OSError, ValueError):  # no cache yet, an unreadable one, a file in its place
        repos = frozenset()
    models = sorted((info for repo in repos if repo.repo_type == "model" for info in [_masked_lm(repo)] if info),
                    key=lambda info: info.name)
    _scans[key] = (now, models)
    return models


def forget_scans() -> None:
    """Forget the remembered listings: the next :func:`cached_masked_lms` scans again."""
    _scans.clear()


def _masked_lm(repo) -> ModelInfo | None:
    name = repo.repo_id
    if not (well_formed_model_name(name) and HUB_ID.fullmatch(name)):
        return None
    snapshot = next((r for r in repo.revisions if "main" in r.refs), None)
    if snapshot is None:
        return None
    files = {f.file_name for f in snapshot.files}
    if "config.json" not in files or not any(f.endswith(".safetensors") for f in files):
        return None
    try:
        config = json.loads((snapshot.snapshot_path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict) or config.get("model_type") not in MASKED_LM_TYPES:
        return None
    layers = config.get("num_hidden_layers", config.get("n_layers"))
    return ModelInfo(name, "bert", True, None, layers + 1 if isinstance(layers, int) else None, "")
