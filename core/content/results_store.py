"""The precomputed results files (``assets/experiments.json``, ``assets/transfer_results.json``): written
atomically, read back with one version and shape check, and tied to the weights they were computed on.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from ..guard.errors import LabError

_DIGESTS: dict[tuple, str] = {}  # (path, size, mtime_ns) -> digest: each file version is hashed once


def weights_digest(path: Path) -> str:
    """First 16 hex digits of the file's sha256: tells results computed on other weights."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[key] = digest.hexdigest()[:16]
    return _DIGESTS[key]


def save(results: dict, path: Path | str) -> Path:
    """Write ``results`` as JSON atomically: a page reading the file never sees half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def load(path: Path | str, version: int, shape_ok: Callable[[dict], bool] = lambda results: True) -> dict | None:
    """The stored results, ``None`` when the file does not exist yet, or LabError("results_unreadable")
    when it is not JSON, not of ``version`` or not the expected shape."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabError("results_unreadable", file=path.name) from exc
    if not isinstance(data, dict) or data.get("version") != version or not shape_ok(data):
        raise LabError("results_unreadable", file=path.name)
    return data
