"""Any BERT-family checkpoint through transformers (a masked LM, an encoder saved alone, a fine-tune with a task
head), from a local directory or the hub, with every check of :mod:`core.models.checks` (safetensors only, no
remote code, a size limit, a tokenizer that fits the embeddings, weights that cover the encoder).
"""
from __future__ import annotations

import logging
import os
from typing import Any, cast

# At import, under the module lock: transformers' lazy attribute imports, first made from several page
# threads loading models at once, can fail with ImportError (as BertTokenizerFast did in core.models.encoders).
from huggingface_hub.errors import StrictDataclassError
from safetensors import SafetensorError
from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer, BertForPreTraining
from transformers.utils import logging as hf_logging

from ..guard.errors import LabError
from . import catalogue
from .checks import check_size, check_vocabulary, check_weights, refuse_pickle_only, split_missing
from .encoders import BertEncoder
from .hub import from_hub, hub_reachable


# transformers logs a table of missing / unexpected weights ("LOAD REPORT") before any error; load_bert's own
# check of the loading info says what matters, in one line. A filter, not a level: at level ERROR
# transformers logs another table (its tensor-parallel plan check runs when the level is WARNING or above).
class _NoLoadReport(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "LOAD REPORT" not in record.getMessage()


hf_logging.get_logger("transformers.modeling_utils").addFilter(_NoLoadReport())


def _with_info(loaded: object) -> tuple[Any, dict]:
    """``from_pretrained(..., output_loading_info=True)``'s ``(model, info)`` (annotated as the model alone)."""
    return cast(tuple[Any, dict], loaded)


def _masked_lm(source: str, kwargs: dict, name: str, *, bert: bool):
    """``(model, NSP head or None, whether the MLM head came from the weights)``: BERT with its next-sentence
    head when the weights have it, else the checkpoint's masked LM. A checkpoint without the MLM head (an
    encoder saved alone, a fine-tune with a task head) loads for its vectors: the head's random weights are
    never run (``BertEncoder.forward`` refuses fill-mask). Refused unless the weights cover the encoder."""
    kwargs = {**kwargs, "output_loading_info": True, "ignore_mismatched_sizes": True}  # reported, then refused
    if bert:
        model, info = _with_info(BertForPreTraining.from_pretrained(source, **kwargs))
        if not info["missing_keys"]:  # else the masked LM alone, or the encoder alone, below
            check_weights([], [entry[0] for entry in info["mismatched_keys"]], name)
            return model, model.cls.seq_relationship, True
    model, info = _with_info(AutoModelForMaskedLM.from_pretrained(source, **kwargs))
    missing, head = split_missing(list(info["missing_keys"]), model.base_model_prefix)
    mismatched, head_mismatched = split_missing([entry[0] for entry in info["mismatched_keys"]],
                                                model.base_model_prefix)
    check_weights(missing, mismatched, name)
    return model, None, not (head or head_mismatched)


def load_bert(name_or_path: str, display_name: str | None = None) -> BertEncoder:
    """A BERT-family checkpoint from a local directory or the hub, with eager attention: a masked LM, or an
    encoder without its MLM head (vectors and attention only; fill-mask raises ``no_mlm_head``).

    Weights are read through safetensors only (``use_safetensors=True``); remote code is never
    trusted. Refused before the weights are read: a config with a size or dropout rate out of range
    (``checks.check_config``) or larger than ``LAB_MAX_MODEL_PARAMS`` allows, a tokenizer with more tokens than
    the config's ``vocab_size`` (fewer is a padded vocabulary: allowed); after: weights that do not cover the
    encoder. A
    hub id that is not cached and cannot be downloaded raises ``hub_offline``, a hub that does not answer
    within ``LAB_HUB_TIMEOUT_S`` ``hub_timeout``.
    """
    hf_logging.disable_progress_bar()  # progress bars belong to downloads, not to a CLI's JSON stream

    display_name = display_name or name_or_path
    local = catalogue.model_directory(name_or_path)  # a directory without config.json is not a model: hub id rules
    if local is not None:
        refuse_pickle_only(local, display_name)
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
        check_size(config, display_name)
        tokenizer = fetch(lambda: AutoTokenizer.from_pretrained(source, local_files_only=offline_ok,
                                                                trust_remote_code=False))
        check_vocabulary(tokenizer, config, display_name)
        kwargs = {**common, "use_safetensors": True, "attn_implementation": "eager", "local_files_only": offline_ok}
        model, nsp_head, mlm_head = fetch(lambda: _masked_lm(source, kwargs, display_name,
                                                             bert=config.model_type == "bert"))
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
    return BertEncoder(display_name, model, tokenizer, nsp_head, mlm_head=mlm_head)
