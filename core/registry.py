"""Which models exist, whether they can be loaded here, and loading each one once per process.

Embedded models live in ``assets/models/<name>/``. Any other name is taken as a local directory
or a Hugging Face hub id of a BERT-family masked LM, loaded with safetensors only and without
``trust_remote_code``.
"""
from __future__ import annotations

import os
import re
import socket
import threading
import time
import urllib.parse
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

# At import, under the module lock: transformers' lazy attribute imports, first made from several page
# threads loading models at once, can fail with ImportError (as BertTokenizerFast did in core.encoders).
from huggingface_hub.errors import StrictDataclassError
from safetensors import SafetensorError
from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer, BertForPreTraining
from transformers.utils import logging as hf_logging

from .catalogue import EMBEDDED, MODELS_DIR, ModelInfo, list_models  # noqa: F401 (re-exported)
from .encoders import BertEncoder, ElmoEncoder, Encoder, StaticEncoder
from .errors import LabError
from .model_names import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC  # noqa: F401 (re-exported)
from .safe_text import well_formed_model_name

# transformers logs a table of missing / unexpected weights ("LOAD REPORT") before any error; load_bert's own
# check of the loading info says what matters, in one line. A filter, not a level: at level ERROR
# transformers logs another table (its tensor-parallel plan check runs when the level is WARNING or above).
hf_logging.get_logger("transformers.modeling_utils").addFilter(lambda record: "LOAD REPORT" not in record.getMessage())

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
MASKED_LM_TYPES = {"bert", "roberta", "xlm-roberta", "electra", "albert", "distilbert", "camembert", "ernie"}

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?")
MAX_OTHER_MODELS = 2  # hub / directory models kept loaded (least recently used goes); embedded ones stay
FAILURE_TTL_S = 60.0  # a failed hub / directory load is answered from memory this long, not retried per rerun

MAX_FAILURES = 256  # failed loads remembered at once (a class typing many wrong names); the oldest go first

_cache: OrderedDict[str, Encoder] = OrderedDict()  # key (see model_key) -> encoder, most recent last
_failures: OrderedDict[str, tuple[float, LabError]] = OrderedDict()  # key -> (monotonic time, the error), oldest first
_load_locks: dict[str, tuple[threading.Lock, int]] = {}  # key -> (its lock, loads waiting on it); gone when 0
_state_lock = threading.Lock()  # guards the dicts above, never held while loading


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
    return load_by_key(model_key(name))


def load_by_key(key: str) -> Encoder:
    """The encoder of a registry ``key`` (:func:`model_key`'s answer), loaded at most once at a time."""
    with _state_lock:
        encoder = _cached(key)
        if encoder is not None:
            return encoder
        lock, waiting = _load_locks.get(key) or (threading.Lock(), 0)
        _load_locks[key] = (lock, waiting + 1)
    try:
        with lock:  # concurrent first visits of one model wait for a single load
            return _load_once(key)
    finally:
        with _state_lock:  # the last one out removes it: one lock per model being loaded, not per name ever tried
            lock, waiting = _load_locks[key]
            if waiting > 1:
                _load_locks[key] = (lock, waiting - 1)
            else:
                del _load_locks[key]


def _load_once(key: str) -> Encoder:
    """The cached encoder, or ``_load(key)`` cached; the caller holds the key's load lock."""
    with _state_lock:
        encoder = _cached(key)
        if encoder is not None:
            return encoder
    try:
        encoder = _load(key)
    except LabError as err:
        if key not in EMBEDDED:  # embedded checks are instant and may pass after retraining
            _remember_failure(key, err)
        raise
    with _state_lock:
        _cache[key] = encoder
        _failures.pop(key, None)
        others = [k for k in _cache if k not in EMBEDDED]
        for old in others[:-MAX_OTHER_MODELS]:
            del _cache[old]
    return encoder


def _remember_failure(key: str, err: LabError) -> None:
    """Cache a failed load for FAILURE_TTL_S; expired entries, and the oldest beyond MAX_FAILURES, go."""
    now = time.monotonic()
    with _state_lock:
        _failures.pop(key, None)
        _failures[key] = (now, err)
        while _failures:
            oldest, (when, _) = next(iter(_failures.items()))
            if now - when < FAILURE_TTL_S and len(_failures) <= MAX_FAILURES:
                break
            del _failures[oldest]


def load_private(name: str) -> Encoder:
    """A new encoder of ``name``, outside the cache: for a job that runs for minutes (training from the page)
    and would otherwise hold the shared model's lock between every other session's forward passes."""
    return _load(model_key(name))


class ModelRef:
    """A loaded model as a page holds it: its ``name`` as the user gave it (for messages), its registry
    ``key`` (what caches key on: hashable, equal for every spelling of one model) and the encoder.

    The encoder is held weakly, because a page's globals outlive its run (the page's widget callbacks reach
    them), so every open session would keep the model of its last run alive after the cache dropped it.
    Each attribute comes from the live encoder, loaded again by its key if the cache dropped it meanwhile; a
    method call in progress keeps its encoder until it returns. A type check needs ``ref.encoder()``."""

    __slots__ = ("name", "key", "_ref")

    def __init__(self, name: str, key: str, encoder: Encoder):
        self.name, self.key = name, key
        self._ref = weakref.ref(encoder)

    def encoder(self) -> Encoder:
        encoder = self._ref()
        if encoder is None:
            encoder = load_by_key(self.key)
            self._ref = weakref.ref(encoder)
        return encoder

    def __getattr__(self, attribute: str):
        return getattr(self.encoder(), attribute)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelRef) and other.key == self.key

    def __repr__(self) -> str:
        return f"ModelRef({self.name!r}, key={self.key!r})"


def load_ref(name: str) -> ModelRef:
    """:func:`load_encoder` as a :class:`ModelRef`: the name is normalised once, here."""
    key = model_key(name)
    return ModelRef(name, key, load_by_key(key))


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


def _env_number(name: str, default: float) -> float:
    """A positive number from the environment (``1e9`` and ``1000000000`` alike); unset or unusable: ``default``."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


Result = TypeVar("Result")


def _within(seconds: float, call: Callable[[], Result]) -> tuple[bool, Result | None]:
    """``(True, call())``, or ``(False, None)`` when it has not returned after ``seconds``: it runs in a daemon
    thread that is then given up on (a socket read without a timeout cannot be interrupted). Its exception
    is raised here."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, daemon=True, name="hub-call")
    thread.start()
    thread.join(seconds)
    if not outcome:
        return False, None
    ok, value = outcome[0]
    if not ok:
        raise value
    return True, value


HUB_PROBE_TIMEOUT_S = 3.0
_hub_probe: list[tuple[float, bool]] = []  # (monotonic time, result) of the last probe


def hub_reachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub endpoint (``HF_ENDPOINT``, default huggingface.co) opens
    within ``timeout_s`` (name resolution has no timeout of its own, hence the deadline around the
    whole probe). The answer is remembered for ``FAILURE_TTL_S``."""
    if _hub_probe and time.monotonic() - _hub_probe[0][0] < FAILURE_TTL_S:
        return _hub_probe[0][1]
    endpoint = urllib.parse.urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)

    def probe() -> bool:
        try:
            socket.create_connection((endpoint.hostname or "", port), timeout=timeout_s).close()
            return True
        except (OSError, ValueError):
            return False

    done, reachable = _within(timeout_s + 0.5, probe)
    _hub_probe[:] = [(time.monotonic(), bool(done and reachable))]
    return bool(done and reachable)


# Every call that may reach the hub gets a wall-clock deadline: huggingface_hub's metadata requests have no
# timeout, so a hub that accepts the connection and never answers would hang the load, and every later
# visitor of that model would wait on its lock. The failure is then cached like any other (FAILURE_TTL_S).
HUB_TIMEOUT_ENV = "LAB_HUB_TIMEOUT_S"
HUB_TIMEOUT_S = 60.0


def _from_hub(name: str, call: Callable[[], Result]) -> Result:
    seconds = _env_number(HUB_TIMEOUT_ENV, HUB_TIMEOUT_S)
    done, value = _within(seconds, call)
    if not done:
        raise LabError("hub_timeout", name=name, seconds=f"{seconds:g}")
    return value


# A model directory's config decides how much memory the model takes: refuse, before building it, one larger
# than a presenter's server should hold (bert-base-chinese: 102 million parameters, 0.4 GB as float32).
MAX_PARAMS_ENV = "LAB_MAX_MODEL_PARAMS"
MAX_MODEL_PARAMS = 150_000_000
# Heads a checkpoint may lack: a masked LM saved without next-sentence prediction has neither (then the
# model is loaded as a plain masked LM, without them). Any other weight missing would be random.
OPTIONAL_HEADS = re.compile(r"(^|\.)(pooler|seq_relationship)\.")


def estimated_parameters(config) -> int:
    """The parameters of a BERT-family masked LM with next-sentence head, from its config alone (BERT, RoBERTa,
    ELECTRA, ALBERT, DistilBERT attribute names): embeddings, layers, MLM head (output tied to the input
    embeddings unless the config says otherwise), pooler. ALBERT counts its shared layer groups once."""
    def size(*names: str, default: int = 0) -> int:
        return next((int(getattr(config, n)) for n in names if getattr(config, n, None) is not None), default)

    hidden = size("hidden_size", "dim")
    embed = size("embedding_size", default=hidden)
    inner = size("intermediate_size", "hidden_dim", default=4 * hidden)
    vocab, positions, types = size("vocab_size"), size("max_position_embeddings"), size("type_vocab_size")
    layers = size("num_hidden_layers", "n_layers")
    if config.model_type == "albert":
        layers = size("num_hidden_groups", default=1) * size("inner_group_num", default=1)
    embeddings = (vocab + positions + types) * embed + 2 * embed + (embed * hidden + hidden if embed != hidden else 0)
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * inner + inner + hidden + 4 * hidden
    head = hidden * embed + 3 * embed + vocab + (0 if getattr(config, "tie_word_embeddings", True) else vocab * embed)
    return embeddings + layers * layer + head + hidden * hidden + 3 * hidden + 2


def _check_size(config, name: str) -> None:
    limit = int(_env_number(MAX_PARAMS_ENV, MAX_MODEL_PARAMS))
    params = estimated_parameters(config)
    if params > limit:
        raise LabError("model_too_large", name=name, params=f"{params / 1e6:,.0f}", gb=f"{4 * params / 1e9:.1f}",
                       limit=f"{limit / 1e6:,.0f}", env=MAX_PARAMS_ENV)


def _check_vocabulary(tokenizer, config, name: str) -> None:
    """A token id beyond the embeddings crashes the forward pass; an embedding row without a token is a
    prediction nothing can show."""
    if len(tokenizer) != config.vocab_size:
        raise LabError("vocab_mismatch", name=name, tokens=len(tokenizer), vocab=config.vocab_size)


def _check_weights(info: dict, name: str) -> None:
    """Every weight of the model came from the checkpoint (transformers initialises missing or mis-sized ones
    at random, with a warning on the console only)."""
    bad = [key for key in info["missing_keys"] if not OPTIONAL_HEADS.search(key)]
    bad += [entry[0] for entry in info["mismatched_keys"]]
    if bad:
        raise LabError("weights_incomplete", name=name, count=len(bad), keys=", ".join(sorted(bad)[:3]))


def _masked_lm(source: str, kwargs: dict, name: str, *, bert: bool):
    """``(model, NSP head or None)``: BERT with its next-sentence head when the weights have it, else the
    checkpoint's masked LM; refused unless the weights cover the model."""
    kwargs = {**kwargs, "output_loading_info": True, "ignore_mismatched_sizes": True}  # reported, then refused
    if bert:
        model, info = BertForPreTraining.from_pretrained(source, **kwargs)
        if not any(OPTIONAL_HEADS.search(key) for key in info["missing_keys"]):
            _check_weights(info, name)
            return model, model.cls.seq_relationship
    model, info = AutoModelForMaskedLM.from_pretrained(source, **kwargs)
    _check_weights(info, name)
    return model, None


def load_bert(name_or_path: str, display_name: str | None = None) -> BertEncoder:
    """A BERT-family masked LM from a local directory or the hub, with eager attention.

    Weights are read through safetensors only (``use_safetensors=True``); remote code is never
    trusted. Refused before the weights are read: a config larger than ``LAB_MAX_MODEL_PARAMS`` allows, a
    tokenizer whose size is not the config's ``vocab_size``; after: weights that do not cover the model. A
    hub id that is not cached and cannot be downloaded raises ``hub_offline``, a hub that does not answer
    within ``LAB_HUB_TIMEOUT_S`` ``hub_timeout``.
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
            config = _from_hub(display_name, lambda: AutoConfig.from_pretrained(source, **common))
            offline_ok = False
        fetch = (lambda call: call()) if offline_ok else (lambda call: _from_hub(display_name, call))
        if config.model_type not in MASKED_LM_TYPES:
            raise LabError("not_masked_lm", name=display_name, model_type=config.model_type)
        _check_size(config, display_name)
        tokenizer = fetch(lambda: AutoTokenizer.from_pretrained(source, local_files_only=offline_ok,
                                                                trust_remote_code=False))
        _check_vocabulary(tokenizer, config, display_name)
        kwargs = {**common, "use_safetensors": True, "attn_implementation": "eager", "local_files_only": offline_ok}
        model, nsp_head = fetch(lambda: _masked_lm(source, kwargs, display_name, bert=config.model_type == "bert"))
    except LabError:
        raise
    except OSError as exc:
        text = str(exc)
        if "pytorch_model.bin" in text or "safetensors" in text and local is not None:
            raise LabError("unsafe_weights", name=display_name, files="pytorch_model.bin") from exc
        if local is not None:
            raise LabError("load_failed", name=display_name, detail=text.splitlines()[0][:300]) from exc
        raise LabError("hub_offline", name=display_name) from exc
    except (ValueError, KeyError, RuntimeError, TypeError, ArithmeticError, SafetensorError,
            StrictDataclassError) as exc:  # a bad header; a config field of the wrong type (huggingface_hub)
        raise LabError("load_failed", name=display_name, detail=" ".join(str(exc).split())[:300]) from exc
    model.float().eval()
    return BertEncoder(display_name, model, tokenizer, nsp_head)
