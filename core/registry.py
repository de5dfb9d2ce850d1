"""Which models exist, whether they can be loaded here, and loading each one once per process.

Embedded models live in ``assets/models/<name>/``. Any other name is taken as a local directory
or a Hugging Face hub id of a BERT-family masked LM, loaded with safetensors only and without
``trust_remote_code``.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from .encoders import BertEncoder, ElmoEncoder, Encoder, StaticEncoder
from .errors import LabError

MODELS_DIR = Path(__file__).resolve().parent.parent / "assets" / "models"
EMBEDDED = {
    "mini-bert-zh": ("bert", "Mini BERT (4 layers, character level), trained by this project"),
    "mini-elmo-zh": ("elmo", "Mini ELMo biLM (2 biLSTM layers, character level), trained by this project"),
    "word2vec-zh": ("static", "Skip-gram word2vec on jieba words, trained by this project"),
}
DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC = "mini-bert-zh", "mini-elmo-zh", "word2vec-zh"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
MASKED_LM_TYPES = {"bert", "roberta", "xlm-roberta", "electra", "albert", "distilbert", "camembert", "ernie"}


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
        return self.problem.message("en") if self.problem else None


def _embedded_files(kind: str) -> tuple[str, ...]:
    return {"bert": ("config.json", "model.safetensors", "vocab.txt"),
            "elmo": ("config.json", "model.safetensors", "vocab.txt"),
            "static": ("config.json", "vectors.safetensors", "vocab.txt")}[kind]


def _embedded_layers(kind: str, config: dict) -> int:
    return {"bert": lambda: config["num_hidden_layers"] + 1,
            "elmo": lambda: config["num_layers"] + 1,
            "static": lambda: 1}[kind]()


def list_models() -> list[ModelInfo]:
    """The embedded models with their availability (a missing model says why)."""
    infos = []
    for name, (kind, description) in EMBEDDED.items():
        directory = MODELS_DIR / name
        missing = [f for f in _embedded_files(kind) if not (directory / f).exists()]
        if missing:
            problem = LabError("model_not_trained", name=name, directory=str(directory), files=", ".join(missing))
            infos.append(ModelInfo(name, kind, False, problem, None, description))
            continue
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        infos.append(ModelInfo(name, kind, True, None, _embedded_layers(kind, config), description))
    return infos


_cache: dict[str, Encoder] = {}
_cache_lock = threading.Lock()
load_counts: dict[str, int] = {}  # how often each model was really loaded (tests assert once per process)


def load_encoder(name: str) -> Encoder:
    """Load a model by embedded name, local directory or hub id; cached for the whole process."""
    name = (name or "").strip()
    if not name:
        raise LabError("unknown_model", name=name)
    with _cache_lock:
        if name not in _cache:
            _cache[name] = _load(name)
            load_counts[name] = load_counts.get(name, 0) + 1
        return _cache[name]


def _load(name: str) -> Encoder:
    if name in EMBEDDED:
        kind = EMBEDDED[name][0]
        info = next(i for i in list_models() if i.name == name)
        if not info.available:
            raise info.problem
        directory = MODELS_DIR / name
        if kind == "elmo":
            return ElmoEncoder(name, directory)
        if kind == "static":
            return StaticEncoder(name, directory)
        return load_bert(str(directory), display_name=name)
    return load_bert(name)


def _refuse_pickle_only(directory: Path, name: str) -> None:
    files = [p.name for p in directory.iterdir() if p.is_file()]
    if not any(f.endswith(".safetensors") for f in files):
        pickles = [f for f in files if f.endswith(PICKLE_SUFFIXES)]
        if pickles:
            raise LabError("unsafe_weights", name=name, files=", ".join(sorted(pickles)))


def load_bert(name_or_path: str, display_name: str | None = None) -> BertEncoder:
    """A BERT-family masked LM from a local directory or the hub, with eager attention.

    Weights are read through safetensors only (``use_safetensors=True``); remote code is never
    trusted. A hub id that is not cached and cannot be downloaded raises ``hub_offline``.
    """
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer, BertForPreTraining
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # progress bars belong to downloads, not to a CLI's JSON stream

    display_name = display_name or name_or_path
    local = Path(name_or_path).expanduser()
    if local.is_dir():
        _refuse_pickle_only(local, display_name)
        source = str(local)
    elif name_or_path.startswith((".", "/", "~")) or name_or_path.count("/") > 1:
        raise LabError("unknown_model", name=display_name)
    else:
        source = name_or_path
    common = {"trust_remote_code": False}
    try:
        try:
            config = AutoConfig.from_pretrained(source, local_files_only=True, **common)
            offline_ok = True
        except OSError:
            if os.environ.get("HF_HUB_OFFLINE") == "1" or local.is_dir():
                raise
            config = AutoConfig.from_pretrained(source, **common)
            offline_ok = False
        if config.model_type not in MASKED_LM_TYPES:
            raise LabError("not_masked_lm", name=display_name, model_type=config.model_type)
        kwargs = {**common, "use_safetensors": True, "attn_implementation": "eager", "local_files_only": offline_ok}
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=offline_ok, trust_remote_code=False)
        nsp_head = None
        if config.model_type == "bert":
            model, info = BertForPreTraining.from_pretrained(source, output_loading_info=True, **kwargs)
            if any(k.startswith("cls.seq_relationship") for k in info["missing_keys"]):
                model = AutoModelForMaskedLM.from_pretrained(source, **kwargs)
            else:
                nsp_head = model.cls.seq_relationship
        else:
            model = AutoModelForMaskedLM.from_pretrained(source, **kwargs)
    except LabError:
        raise
    except OSError as exc:
        text = str(exc)
        if "pytorch_model.bin" in text or "safetensors" in text and local.is_dir():
            raise LabError("unsafe_weights", name=display_name, files="pytorch_model.bin") from exc
        if local.is_dir():
            raise LabError("load_failed", name=display_name, detail=text.splitlines()[0][:300]) from exc
        raise LabError("hub_offline", name=display_name) from exc
    except (ValueError, KeyError, RuntimeError) as exc:
        raise LabError("load_failed", name=display_name, detail=str(exc).splitlines()[0][:300]) from exc
    model.float().eval()
    return BertEncoder(display_name, model, tokenizer, nsp_head)
