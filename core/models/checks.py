"""What a model must pass before it is used, whichever code loads it: safetensors only, a size a presenter's
server can hold, a tokenizer that fits the embeddings, weights that cover the model."""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import LabError
from .hub import env_number

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")

# A model directory's config decides how much memory the model takes: refuse, before building it, one larger
# than a presenter's server should hold (bert-base-chinese: 102 million parameters, 0.4 GB as float32).
MAX_PARAMS_ENV = "LAB_MAX_MODEL_PARAMS"
MAX_MODEL_PARAMS = 150_000_000
# Heads a checkpoint may lack: a masked LM saved without next-sentence prediction has neither (then the
# model is loaded as a plain masked LM, without them). Any other weight missing would be random.
OPTIONAL_HEADS = re.compile(r"(^|\.)(pooler|seq_relationship)\.")


def refuse_pickle_only(directory: Path, name: str) -> None:
    files = [p.name for p in directory.iterdir() if p.is_file()]
    if not any(f.endswith(".safetensors") for f in files):
        pickles = [f for f in files if f.endswith(PICKLE_SUFFIXES)]
        if pickles:
            raise LabError("unsafe_weights", name=name, files=", ".join(sorted(pickles)))


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


def check_size(config, name: str) -> None:
    limit = int(env_number(MAX_PARAMS_ENV, MAX_MODEL_PARAMS))
    params = estimated_parameters(config)
    if params > limit:
        raise LabError("model_too_large", name=name, params=f"{params / 1e6:,.0f}", gb=f"{4 * params / 1e9:.1f}",
                       limit=f"{limit / 1e6:,.0f}", env=MAX_PARAMS_ENV)


def check_vocabulary(tokenizer, config, name: str) -> None:
    """A token id beyond the embeddings crashes the forward pass; an embedding row without a token is a
    prediction nothing can show."""
    if len(tokenizer) != config.vocab_size:
        raise LabError("vocab_mismatch", name=name, tokens=len(tokenizer), vocab=config.vocab_size)


def check_weights(missing: list[str], mismatched: list[str], name: str) -> None:
    """Every weight of the model came from the checkpoint: none ``missing`` but the optional heads, none
    ``mismatched`` in shape (transformers initialises such weights at random, with a warning on the console
    only)."""
    bad = [key for key in missing if not OPTIONAL_HEADS.search(key)] + list(mismatched)
    if bad:
        raise LabError("weights_incomplete", name=name, count=len(bad), keys=", ".join(sorted(bad)[:3]))
