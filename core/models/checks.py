"""What a model must pass before it is used, whichever code loads it: safetensors only, a size within
``LAB_MAX_MODEL_PARAMS``, sizes and rates that make sense, a tokenizer that fits the embeddings, weights that cover the
model."""
from __future__ import annotations

import math
import re
from pathlib import Path

from ..guard.errors import LabError
from .hub import env_number

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")

# A model directory's config decides how much memory the model takes: refuse, before building it, one larger
# than a shared server or a laptop should hold unasked (bert-base-chinese: 102 million parameters, 0.4 GB as
# float32); LAB_MAX_MODEL_PARAMS raises the limit, for the library, the CLI and the app alike.
MAX_PARAMS_ENV = "LAB_MAX_MODEL_PARAMS"
MAX_MODEL_PARAMS = 150_000_000
# Heads a checkpoint may lack: a masked LM saved without next-sentence prediction has neither (then the
# model is loaded as a plain masked LM, without them). Any other weight missing would be random.
OPTIONAL_HEADS = re.compile(r"(^|\.)(pooler|seq_relationship)\.")
# The sizes a BERT-family config gives (BERT, RoBERTa, ELECTRA, ALBERT; DistilBERT's own names), each a whole
# number of at least 1: -1000 layers made the parameter estimate negative, under any limit, and the model was
# built anyway (gigabytes); -1 layers loaded a model of no layers without a word; zero heads divided by zero.
SIZE_FIELDS = ("vocab_size", "hidden_size", "dim", "num_hidden_layers", "n_layers", "num_attention_heads", "n_heads",
               "intermediate_size", "hidden_dim", "max_position_embeddings", "type_vocab_size", "embedding_size",
               "num_hidden_groups", "inner_group_num")


def refuse_pickle_only(directory: Path, name: str) -> None:
    files = [p.name for p in directory.iterdir() if p.is_file()]
    if not any(f.endswith(".safetensors") for f in files):
        pickles = [f for f in files if f.endswith(PICKLE_SUFFIXES)]
        if pickles:
            raise LabError("unsafe_weights", name=name, files=", ".join(sorted(pickles)))


def _shown(value: object) -> str:
    """A config value as the message shows it: short (a crafted config may hold a million-digit number)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_rate(value: object) -> bool:
    return (not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
            and 0 <= value < 1)


def check_config(config, name: str) -> None:
    """Every size in ``SIZE_FIELDS`` the config has a whole number of at least 1, every dropout rate (a field
    named ``*dropout*``; None is no dropout) a finite number in [0, 1), the attention heads dividing the hidden
    width: checked before the size is estimated and before anything is built (a NaN rate made every forward
    pass fail; a negative size passed the size limit)."""
    for field in SIZE_FIELDS:
        value = getattr(config, field, None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise LabError("config_not_size", name=name, field=field, value=_shown(value))
    for field, value in config.to_dict().items():
        if "dropout" in field and value is not None and not _is_rate(value):
            raise LabError("config_bad_rate", name=name, field=field, value=_shown(value))
    hidden, heads = getattr(config, "hidden_size", None), getattr(config, "num_attention_heads", None)
    if hidden is not None and heads is not None and hidden % heads:
        raise LabError("config_heads", name=name, heads=heads, hidden=hidden)


def estimated_parameters(config) -> int:
    """The parameters of a BERT-family masked LM with next-sentence head, from its config alone (BERT, RoBERTa,
    ELECTRA, ALBERT, DistilBERT attribute names): embeddings, layers, MLM head (output tied to the input
    embeddings unless the config says otherwise), pooler. ALBERT counts its shared layer groups once. The config
    must have passed :func:`check_config` (a negative size gives a negative count)."""
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


def check_size(config, name: str) -> None:
    """:func:`check_config`, then the estimated parameters within ``LAB_MAX_MODEL_PARAMS``."""
    check_config(config, name)
    limit = int(env_number(MAX_PARAMS_ENV, MAX_MODEL_PARAMS))
    params = estimated_parameters(config)
    if params > limit:
        raise LabError("model_too_large", name=name, params=f"{params / 1e6:,.0f}", gb=f"{4 * params / 1e9:.1f}",
                       limit=f"{limit / 1e6:,.0f}", env=MAX_PARAMS_ENV)


def check_vocabulary(tokenizer, config, name: str) -> None:
    """A token id beyond the embeddings crashes the forward pass: refused. Embedding rows beyond the tokenizer
    are allowed (a vocabulary padded to a multiple of 8 for speed, or resized for tokens added later): no
    input reaches them, and fill-mask leaves them out of its distribution (``BertEncoder.forward``)."""
    if len(tokenizer) > config.vocab_size:
        raise LabError("vocab_mismatch", name=name, tokens=len(tokenizer), vocab=config.vocab_size)


def split_missing(missing: list[str], base_prefix: str) -> tuple[list[str], list[str]]:
    """``(the encoder's missing weights, the task head's)``: a weight outside ``base_prefix`` (``bert.``,
    ``roberta.`` …) belongs to the head, which an encoder-only or fine-tuned checkpoint does not have; token
    vectors need only the encoder."""
    inside = [key for key in missing if key.startswith(base_prefix + ".")]
    return inside, [key for key in missing if key not in inside]


def check_weights(missing: list[str], mismatched: list[str], name: str) -> None:
    """Every weight of the model came from the checkpoint: none ``missing`` but the optional heads, none
    ``mismatched`` in shape (transformers initialises such weights at random, with a warning on the console
    only)."""
    bad = [key for key in missing if not OPTIONAL_HEADS.search(key)] + list(mismatched)
    if bad:
        raise LabError("weights_incomplete", name=name, count=len(bad), keys=", ".join(sorted(bad)[:3]))
