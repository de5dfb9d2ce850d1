"""The embedded models and whether each is on this machine: plain files, no torch or transformers, so that
``python -m core models`` answers at once. Loading them is ``core.registry``'s work."""
from __future__ import annotations

import json
from dataclasses import dataclass

from .errors import LabError
from .model_names import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC
from .paths import ASSETS

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
