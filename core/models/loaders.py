"""Loading a model from its files: the embedded ones from assets/models, any other BERT-family masked LM from a
local directory or the hub, with every check a model must pass before it is used (safetensors only, no remote
code, a size limit, a tokenizer that fits the embeddings, weights that cover the model).
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any, cast

# At import, under the module lock: transformers' lazy attribute imports, first made from several page
# threads loading models at once, can fail with ImportError (as BertTokenizerFast did in core.models.encoders).
from huggingface_hub.errors import StrictDataclassError
from safetensors import SafetensorError
from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer, BertForPreTraining
from transformers.utils import logging as hf_logging

from ..errors import LabError
from . import catalogue
from .encoders import BertEncoder, ElmoEncoder, Encoder, StaticEncoder
from .hub import env_number, from_hub, hub_reachable


# transformers logs a table of missing / unexpected weights ("LOAD REPORT") before any error; load_bert's own
# check of the loading info says what matters, in one line. A filter, not a level: at level ERROR
# transformers logs another table (its tensor-parallel plan check runs when the level is WARNING or above).
class _NoLoadReport(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "LOAD REPORT" not in record.getMessage()


hf_logging.get_logger("transformers.modeling_utils").addFilter(_NoLoadReport())

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")


def load(key: str) -> Encoder:
    """A new encoder of a cache ``key`` (``catalogue.model_key``'s answer): an embedded model from its folder,
    anything else by :func:`load_bert`."""
    if key in catalogue.EMBEDDED:
        kind = catalogue.EMBEDDED[key][0]
        info = next(i for i in catalogue.list_models() if i.name == key)
        if info.problem is not None:
            raise info.problem
        directory = catalogue.MODELS_DIR / key
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
    limit = int(env_number(MAX_PARAMS_ENV, MAX_MODEL_PARAMS))
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


def _with_info(loaded: object) -> tuple[Any, dict]:
    """``from_pretrained(..., output_loading_info=True)``'s ``(model, info)`` (annotated as the model alone)."""
    return cast(tuple[Any, dict], loaded)


def _masked_lm(source: str, kwargs: dict, name: str, *, bert: bool):
    """``(model, NSP head or None)``: BERT with its next-sentence head when the weights have it, else the
    checkpoint's masked LM; refused unless the weights cover the model."""
    kwargs = {**kwargs, "output_loading_info": True, "ignore_mismatched_sizes": True}  # reported, then refused
    if bert:
        model, info = _with_info(BertForPreTraining.from_pretrained(source, **kwargs))
        if not any(OPTIONAL_HEADS.search(key) for key in info["missing_keys"]):
            _check_weights(info, name)
            return model, model.cls.seq_relationship
    model, info = _with_info(AutoModelForMaskedLM.from_pretrained(source, **kwargs))
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
    local = catalogue.model_directory(name_or_path)  # a directory without config.json is not a model: hub id rules
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
            config = from_hub(display_name, lambda: AutoConfig.from_pretrained(source, **common))
            offline_ok = False
        fetch = (lambda call: call()) if offline_ok else (lambda call: from_hub(display_name, call))
        if config.model_type not in catalogue.MASKED_LM_TYPES:
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
