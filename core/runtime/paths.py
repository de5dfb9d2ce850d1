"""Where the lab's data files are: ``assets/`` beside ``core/`` in a clone, or the copy a wheel carries
inside the installed package (``elmo_bert_lab/assets``, see ``pyproject.toml``)."""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # core/ (elmo_bert_lab/ when installed), above core/runtime/
ASSETS = _PACKAGE / "assets" if (_PACKAGE / "assets").is_dir() else _PACKAGE.parent / "assets"
TRANSFER_RESULTS = ASSETS / "transfer_results.json"  # core.transfer's; a path of its own for the home page (no torch)
