"""Loading a model by its cache key (``catalogue.model_key``'s answer): the embedded models from assets/models,
any other BERT-family masked LM through transformers (:mod:`core.models.transformers_loading`).

The embedded BERT runs on :mod:`core.models.plain_bert`, the same numbers without transformers' modelling
imports, so a CLI call or the app's first BERT page does not wait for them.
"""
from __future__ import annotations

from pathlib import Path

from safetensors import SafetensorError
from transformers import BertTokenizer  # the tokenizer only: no modelling module

from ..guard.errors import LabError
from . import catalogue, plain_bert
from .checks import check_vocabulary, check_weights
from .encoders import BertEncoder, ElmoEncoder, Encoder, StaticEncoder


def load(key: str) -> Encoder:
    """A new encoder of a cache ``key``: an embedded model from its folder, anything else by
    :func:`~core.models.transformers_loading.load_bert`."""
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
        if plain_bert.supported(directory):
            return load_plain_bert(directory, key)
        return _through_transformers(str(directory), display_name=key)
    return _through_transformers(key)


def _through_transformers(name_or_path: str, display_name: str | None = None) -> BertEncoder:
    # imported where a model needs it; its own import of transformers' model classes runs under its module lock
    from .transformers_loading import load_bert

    return load_bert(name_or_path, display_name)


def load_plain_bert(directory: Path, name: str) -> BertEncoder:
    """The BERT checkpoint in ``directory`` (``config.json``, ``model.safetensors``, a BERT tokenizer) on
    :mod:`core.models.plain_bert`, with the checks transformers' path makes: a tokenizer that fits the embeddings,
    weights that cover the model."""
    try:
        tokenizer = BertTokenizer.from_pretrained(str(directory))
        model, missing = plain_bert.read_checkpoint(directory)
    except (OSError, ValueError, KeyError, RuntimeError, SafetensorError) as exc:
        raise LabError("load_failed", name=name, detail=" ".join(str(exc).split())[:300]) from exc
    check_vocabulary(tokenizer, model.config, name)
    check_weights(missing, [], name)
    return BertEncoder(name, model, tokenizer, model.cls.seq_relationship)
