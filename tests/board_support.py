"""The class board's database as the store and rules tests use it: a SQLite file of its own, one lecturer secret."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.board import rules as board
from core.board.store import Store

SECRET = "test-lecturer-secret"


def sqlite_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    return Store(f"sqlite:///{tmp_path / 'board.sqlite3'}")
