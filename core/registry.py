"""Which models exist, whether they can be loaded here, and loading each one once per process.

Embedded models live in ``assets/models/<name>/``. Any other name is taken as a local directory
or a Hugging Face hub id of a BERT-family masked LM, loaded with safetensors only and without
``trust_remote_code``.
"""
from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import urllib.parse
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

# At import, under the module lock: transformers' lazy attribute imports, first made from several page
# threads loading models at once, can fail with ImportError (as BertTokenizerFast did in core.encoders).
from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer, BertForPreTraining
from transformers.utils import logging as hf_logging

from .encoders import BertEncoder, ElmoEncoder, Encoder, StaticEncoder
from .errors import LabError
from .model_names import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC
from .safe_text import well_formed_model_name

MODELS_DIR = Path(__file__).resolve().parent.parent / "assets" / "models"
EMBEDDED = {
    DEFAULT_BERT: ("bert", "Mini BERT (4 layers, character level), trained by this project"),
    DEFAULT_ELMO: ("elmo", "Mini ELMo biLM (2 biLSTM layers, character level), trained by this project"),
    DEFAULT_STATIC: ("static", "Skip-gram word2vec on jieba words, trained by this project"),
}
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
        return self.problem.message("en", markdown=False) if self.problem else None


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


_HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?")
MAX_OTHER_MODELS = 2  # hub / directory models kept loaded (least recently used goes); embedded ones stay
FAILURE_TTL_S = 60.0  # a failed hub / directory load is answered from memory this long, not retried per rerun

_cache: OrderedDict[str, Encoder] = OrderedDict()  # key (see model_key) -> encoder, most recent last
_failures: dict[str, tuple[float, LabError]] = {}  # key -> (monotonic time, the error)
_load_locks: dict[str, threading.Lock] = {}  # one per key: a slow load blocks only its own model
_state_lock = threading.Lock()  # guards the dicts above, never held while loading
load_counts: dict[str, int] = {}  # how often each model was really loaded (tests assert once per process)


def _unknown(name: str) -> LabError:
    shown = name if len(name) <= 80 else name[:80] + "…"
    return LabError("unknown_model", name=shown)


def _model_directory(name: str) -> Path | None:
    """The resolved directory ``name`` points to if it holds a config.json. Anything else (missing, a
    file, a directory of something else, unreadable, an unknown ``~user``) gives the same "unknown
    model" answer, so a name cannot probe what exists on the server."""
    try:
        path = Path(name).expanduser()
        return path.resolve() if (path / "config.json").is_file() else None
    except (OSError, ValueError, RuntimeError):
        return None


def model_key(name: str) -> str:
    """The cache key of a model name: the embedded name, the resolved path of a model directory or
    the hub id. Different spellings of one directory (``a/``, ``a//``, ``./a``) share one key.
    Raises ``unknown_model`` for names that are none of these (same message whatever the reason)."""
    name = (name or "").strip()
    if name in EMBEDDED:
        return name
    if not well_formed_model_name(name):
        raise _unknown(name)
    directory = _model_directory(name)
    if directory is not None:  # an embedded model's directory by path is the embedded model
        return directory.name if directory == MODELS_DIR / directory.name and directory.name in EMBEDDED \
            else str(directory)
    if name.startswith((".", "/", "~")) or not _HUB_ID.fullmatch(name):  # org/name of letters, digits, ._-
        raise _unknown(name)
    return name


def load_encoder(name: str) -> Encoder:
    """Load a model by embedded name, local directory or hub id; cached for the whole process."""
    key = model_key(name)
    with _state_lock:
        encoder = _cached(key)
        if encoder is not None:
            return encoder
        lock = _load_locks.setdefault(key, threading.Lock())
    with lock:  # concurrent first visits of one model wait for a single load
        with _state_lock:
            encoder = _cached(key)
            if encoder is not None:
                return encoder
        try:
            encoder = _load(key)
        except LabError as err:
            if key not in EMBEDDED:  # embedded checks are instant and may pass after retraining
                with _state_lock:
                    _failures[key] = (time.monotonic(), err)
            raise
        with _state_lock:
            _cache[key] = encoder
            _failures.pop(key, None)
            load_counts[key] = load_counts.get(key, 0) + 1
            others = [k for k in _cache if k not in EMBEDDED]
            for old in others[:-MAX_OTHER_MODELS]:
                del _cache[old]
        return encoder


WARM_SENTENCE = "我吃了一个苹果。"


def warm_embedded() -> list[str]:
    """Load every available embedded model and run one sentence through it, so that the first visitor
    does not pay for loading the weights and for torch's first call. Returns the names warmed."""
    warmed = []
    for info in list_models():
        if info.available:
            load_encoder(info.name).encode([WARM_SENTENCE])
            warmed.append(info.name)
    return warmed


def _cached(key: str) -> Encoder | None:
    """The loaded encoder (marked as just used), or the recent failure raised again; caller holds _state_lock."""
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    failure = _failures.get(key)
    if failure is not None:
        if time.monotonic() - failure[0] < FAILURE_TTL_S:
            raise LabError(failure[1].code, **failure[1].params)
        del _failures[key]
    return None


def _load(key: str) -> Encoder:
    if key in EMBEDDED:
        kind = EMBEDDED[key][0]
        info = next(i for i in list_models() if i.name == key)
        if not info.available:
            raise info.problem
        directory = MODELS_DIR / key
        if kind == "elmo":
            return ElmoEncoder(key, directory)
        if kind == "static":
            return StaticEncoder(key, directory)
        return load_bert(str(directory), display_name=key)
    return load_bert(key)


def _refuse_pickle_only(directory: Path, name: str) -> None:
    files = [p.name for p in directory.iterdir() if p.is_file()]
    if not any(f.endswith(".safetensors") for f in files):
        pickles = [f for f in files if f.endswith(PICKLE_SUFFIXES)]
        if pickles:
            raise LabError("unsafe_weights", name=name, files=", ".join(sorted(pickles)))


HUB_PROBE_TIMEOUT_S = 3.0
_hub_probe: list[tuple[float, bool]] = []  # (monotonic time, result) of the last probe


def hub_reachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub endpoint (``HF_ENDPOINT``, default huggingface.co) opens
    within ``timeout_s``. Name resolution has no timeout of its own, so the probe runs in a daemon
    thread that is given up on. The answer is remembered for ``FAILURE_TTL_S``."""
    if _hub_probe and time.monotonic() - _hub_probe[0][0] < FAILURE_TTL_S:
        return _hub_probe[0][1]
    endpoint = urllib.parse.urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    result: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((endpoint.hostname or "", port), timeout=timeout_s).close()
            result.append(True)
        except (OSError, ValueError):
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True, name="hub-probe")
    thread.start()
    thread.join(timeout_s + 0.5)
    reachable = bool(result and result[0])
    _hub_probe[:] = [(time.monotonic(), reachable)]
    return reachable


def load_bert(name_or_path: str, display_name: str | None = None) -> BertEncoder:
    """A BERT-family masked LM from a local directory or the hub, with eager attention.

    Weights are read through safetensors only (``use_safetensors=True``); remote code is never
    trusted. A hub id that is not cached and cannot be downloaded raises ``hub_offline``.
    """
    hf_logging.disable_progress_bar()  # progress bars belong to downloads, not to a CLI's JSON stream

    display_name = display_name or name_or_path
    local = _model_directory(name_or_path)  # a directory without config.json is not a model: hub id rules
    if local is not None:
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
            if os.environ.get("HF_HUB_OFFLINE") == "1" or local is not None:
                raise
            if not hub_reachable():  # else huggingface_hub retries for half a minute before failing
                raise LabError("hub_offline", name=display_name) from None
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
        if "pytorch_model.bin" in text or "safetensors" in text and local is not None:
            raise LabError("unsafe_weights", name=display_name, files="pytorch_model.bin") from exc
        if local is not None:
            raise LabError("load_failed", name=display_name, detail=text.splitlines()[0][:300]) from exc
        raise LabError("hub_offline", name=display_name) from exc
    except (ValueError, KeyError, RuntimeError) as exc:
        raise LabError("load_failed", name=display_name, detail=str(exc).splitlines()[0][:300]) from exc
    model.float().eval()
    return BertEncoder(display_name, model, tokenizer, nsp_head)
