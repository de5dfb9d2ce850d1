"""Where the lab's data files are: ``assets/`` beside ``core/`` in a clone, or the copy a wheel carries
inside the installed package (``elmo_bert_lab/assets``, see ``pyproject.toml``)."""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
ASSETS = _HERE / "assets" if (_HERE / "assets").is_dir() else _HERE.parent / "assets"
TRANSFER_RESULTS = ASSETS / "transfer_results.json"  # core.transfer's; a path of its own for the home page (no torch)
