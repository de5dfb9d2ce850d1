"""Which models there are: the embedded ones and whether each is on this machine, and what other names may
name a model (a local directory, a hub id) and the cache key each name has. Plain files, no torch or
transformers, so that ``python -m core models`` answers at once. Loading them is ``core.models.loaders``'s work,
keeping them loaded ``core.models.cache``'s."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..guard.errors import LabError
from ..guard.safe_text import well_formed_model_name
from ..runtime.paths import ASSETS

# The defaults every page, CLI command and experiment starts from.
DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC = "mini-bert-zh", "mini-elmo-zh", "word2vec-zh"

MODELS_DIR = ASSETS / "models"
EMBEDDED = {
    DEFAULT_BERT: ("bert", "Mini BERT (4 layers, character level), trained by this project"),
    DEFAULT_ELMO: ("elmo", "Mini ELMo biLM (2 biLSTM layers, character level), trained by this project"),
    DEFAULT_STATIC: ("static", "Skip-gram word2vec on jieba words, trained by this project"),
}


@dataclass
class ModelInfo:
    name: str
    kind: str
    available: bool
    problem: LabError | None  # why it is not available (``problem.message(lang)``), None when it is
    num_layers: int | None
    description: str

    @property
    def reason(self) -> str | None:
        """``problem`` in English (CLI, logs)."""
        return self.problem.message("en", markdown=False) if self.problem else None


def embedded_files(kind: str) -> tuple[str, ...]:
    return {"bert": ("config.json", "model.safetensors", "vocab.txt"),
            "elmo": ("config.json", "model.safetensors", "vocab.txt"),
            "static": ("config.json", "vectors.safetensors", "vocab.txt")}[kind]


def embedded_layers(kind: str, config: dict) -> int:
    return {"bert": lambda: config["num_hidden_layers"] + 1,
            "elmo": lambda: config["num_layers"] + 1,
            "static": lambda: 1}[kind]()


def list_models() -> list[ModelInfo]:
    """The embedded models with their availability (a missing model says why)."""
    infos = []
    for name, (kind, description) in EMBEDDED.items():
        directory = MODELS_DIR / name
        missing = [f for f in embedded_files(kind) if not (directory / f).exists()]
        if missing:
            problem = LabError("model_not_trained", name=name, directory=str(directory), files=", ".join(missing))
            infos.append(ModelInfo(name, kind, False, problem, None, description))
            continue
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        infos.append(ModelInfo(name, kind, True, None, embedded_layers(kind, config), description))
    return infos


MASKED_LM_TYPES = {"bert", "roberta", "xlm-roberta", "electra", "albert", "distilbert", "camembert", "ernie"}
HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?")  # org/name of letters, digits, ._-


def _unknown(name: str) -> LabError:
    shown = name if len(name) <= 80 else name[:80] + "…"
    return LabError("unknown_model", name=shown)


def model_directory(name: str) -> Path | None:
    """The resolved directory ``name`` points to if it holds a config.json. Anything else (missing, a
    file, a directory of something else, unreadable, an unknown ``~user``) gives the same "unknown
    model" answer, so a name cannot probe what exists on the server."""
    try:
        path = Path(name).expanduser()
        return path.resolve() if (path / "config.json").is_file() else None
    except (OSError, ValueError, RuntimeError):
        return None


FilesIdentity = tuple[tuple[str, int, int], ...]


def files_identity(key: str) -> FilesIdentity | None:
    """What is on disk under a cache ``key``: ``(file name, size, mtime_ns)`` of every file in the model's
    directory, sorted; None for a hub id (its snapshot folder is named by the revision). Saving another
    checkpoint into the folder changes it, so the cache loads the new weights instead of answering with the old
    (issue #55: a re-saved folder gave the first weights until the process ended). A directory that cannot be
    listed has the identity ``()``."""
    directory = MODELS_DIR / key if key in EMBEDDED else Path(key)
    if not directory.is_absolute():
        return None
    try:
        with os.scandir(directory) as entries:
            stats = [(entry.name, entry.stat()) for entry in entries if entry.is_file()]
    except OSError:
        return ()
    return tuple(sorted((name, stat.st_size, stat.st_mtime_ns) for name, stat in stats))


def model_key(name: str) -> str:
    """The cache key of a model name: the embedded name, the resolved path of a model directory or
    the hub id. Different spellings of one directory (``a/``, ``a//``, ``./a``) share one key.
    Raises ``unknown_model`` for names that are none of these (same message whatever the reason)."""
    name = (name or "").strip()
    if name in EMBEDDED:
        return name
    if not well_formed_model_name(name):
        raise _unknown(name)
    directory = model_directory(name)
    if directory is not None:  # an embedded model's directory by path is the embedded model
        return directory.name if directory == MODELS_DIR / directory.name and directory.name in EMBEDDED \
            else str(directory)
    if name.startswith((".", "/", "~")) or not HUB_ID.fullmatch(name):
        raise _unknown(name)
    return name
