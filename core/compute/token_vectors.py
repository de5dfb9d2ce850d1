"""Every token's vectors and pooled sentence vectors: what most analyses start from, for any model.

``token_vectors`` keeps every layer of every token with its text and character span;
``sentence_vectors`` pools each layer over a sentence's tokens:

- ``mean``: the average of the tokens that cover text (no [CLS]/[SEP]; for word2vec, the words it knows);
- ``max``: their element-wise maximum;
- ``cls``: BERT's [CLS] vector (only BERT-family models have one).

Both give numpy arrays and pandas DataFrames (one row per token or sentence and layer, the vector as
columns ``d0 … d{dim-1}``). ``sentence_index`` counts from 0, as everywhere in the Python API.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..guard.errors import LabError
from ..models.encoders import Encoder, Encoding

if TYPE_CHECKING:
    import pandas as pd

POOLINGS = ("mean", "max", "cls")
MAX_BATCH_SIZE = 1024


@dataclass
class SentenceTokens:
    """One sentence's tokens and their vectors."""

    sentence_index: int
    text: str
    tokens: list[str]
    offsets: list[tuple[int, int]]  # character span of each token in ``text``; (0, 0) for specials
    special: list[bool]  # [CLS]/[SEP]-like tokens that cover no text
    layers: np.ndarray  # (num_layers, num_tokens, dim), float32
    windows: int = 1  # overlapping windows the model read it in (1: whole; encoders.LONG_TEXT_POLICY)


@dataclass
class TokenVectors:
    """What :func:`core.interface.api.token_vectors` returns: ``sentences``, one :class:`SentenceTokens` per
    sentence (its
    tokens, character offsets, [CLS]/[SEP] flags and ``layers`` ``(num_layers, num_tokens, dim)``), and the
    model's ``layer_names``."""

    model: str
    layer_names: list[str]
    sentences: list[SentenceTokens]

    def to_frame(self, layers: Sequence[int] | None = None) -> pd.DataFrame:
        """One row per token and layer: ``model, layer_index, layer, sentence_index, token_index, token,
        start, end, special, d0 …``."""
        chosen = layer_indices(layers, len(self.layer_names))
        meta: dict[str, list] = {key: [] for key in ("layer_index", "layer", "sentence_index", "token_index",
                                                     "token", "start", "end", "special")}
        blocks = []
        for sentence in self.sentences:
            for j in chosen:
                count = len(sentence.tokens)
                meta["layer_index"] += [j] * count
                meta["layer"] += [self.layer_names[j]] * count
                meta["sentence_index"] += [sentence.sentence_index] * count
                meta["token_index"] += list(range(count))
                meta["token"] += sentence.tokens
                meta["start"] += [start for start, _ in sentence.offsets]
                meta["end"] += [end for _, end in sentence.offsets]
                meta["special"] += sentence.special
                blocks.append(sentence.layers[j])
        return _frame(self.model, meta, blocks)


@dataclass
class SentenceVectors:
    """What :func:`core.interface.api.sentence_vectors` returns: ``vectors`` ``(num_layers, num_sentences, dim)``
    pooled by ``pooling`` over each sentence's tokens; ``windowed``: the sentences read in overlapping windows."""

    model: str
    layer_names: list[str]
    pooling: str
    sentences: list[str]
    vectors: np.ndarray  # (num_layers, num_sentences, dim), float32
    windowed: list[int] = field(default_factory=list)  # sentences read in windows (encoders.LONG_TEXT_POLICY)

    def to_frame(self, layers: Sequence[int] | None = None) -> pd.DataFrame:
        """One row per sentence and layer: ``model, pooling, layer_index, layer, sentence_index, sentence, d0 …``."""
        chosen = layer_indices(layers, len(self.layer_names))
        count = len(self.sentences)
        meta: dict[str, list[Any]] = {"pooling": [self.pooling] * count * len(chosen),
                "layer_index": [j for j in chosen for _ in range(count)],
                "layer": [self.layer_names[j] for j in chosen for _ in range(count)],
                "sentence_index": list(range(count)) * len(chosen),
                "sentence": self.sentences * len(chosen)}
        return _frame(self.model, meta, [self.vectors[j] for j in chosen])


def layer_indices(layers: Sequence[int] | None, num_layers: int) -> list[int]:
    """The chosen layers (all when None), each checked against ``num_layers`` (``out_of_range``); negative ones
    count from the top, as in a Python list (``[-1]``: the last layer)."""
    if layers is None:
        return list(range(num_layers))
    chosen = [int(j) for j in layers]
    for j in chosen:
        if not -num_layers <= j < num_layers:
            raise LabError("out_of_range", name="layer", low=-num_layers, high=num_layers - 1)
    return [j % num_layers for j in chosen]


def _frame(model: str, meta: dict[str, list], blocks: list[np.ndarray]) -> pd.DataFrame:
    import pandas as pd  # only .to_frame() needs it: not imported with core.interface.api (start-up)

    matrix = np.concatenate(blocks).astype(np.float32) if blocks else np.zeros((0, 0), np.float32)
    vectors = pd.DataFrame(matrix, columns=[f"d{d}" for d in range(matrix.shape[1])])
    return pd.concat([pd.DataFrame({"model": model, **meta}), vectors], axis=1)


def check_batch_size(batch_size: int, high: int = MAX_BATCH_SIZE) -> int:
    """``batch_size`` if it is an int (not a bool) from 1 to ``high``, else ``out_of_range``."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= high:
        raise LabError("out_of_range", name="batch_size", low=1, high=high)
    return batch_size


def _encode(encoder: Encoder, sentences: Sequence[str], batch_size: int) -> list[Encoding]:
    if isinstance(sentences, str):  # a bare string would be read as one sentence per character
        raise LabError("bad_argument", name="sentences", expected="a list of str", given="str")
    return encoder.encode(list(sentences), batch_size=check_batch_size(batch_size))


def token_vectors(encoder: Encoder, sentences: Sequence[str], *, batch_size: int = 64) -> TokenVectors:
    """Every token of every sentence with every layer's vector (special tokens included and marked)."""
    encodings = _encode(encoder, sentences, batch_size)
    return TokenVectors(encoder.name, list(encoder.layer_names), [
        SentenceTokens(i, e.text, list(e.tokens), [(a, b) for a, b in e.offsets], list(e.special), e.layers,
                       e.windows)
        for i, e in enumerate(encodings)])


def _text_tokens(encoding: Encoding) -> list[int]:
    """The tokens that stand for text: not special, and (word2vec) with a vector."""
    known = encoding.in_vocab or [True] * len(encoding.tokens)
    return [i for i, (special, ok) in enumerate(zip(encoding.special, known)) if not special and ok]


def _pool(encoding: Encoding, pooling: str, *, sentence_index: int = 0) -> np.ndarray:
    """One sentence's ``(num_layers, dim)`` vector by ``pooling`` (see the module docstring)."""
    if pooling not in POOLINGS:
        raise LabError("bad_choice", name="pooling", choices=", ".join(POOLINGS))
    if pooling == "cls":
        return encoding.layers[:, 0]
    rows = _text_tokens(encoding)
    if not rows:
        raise LabError("no_pooled_tokens", index=sentence_index)
    picked = encoding.layers[:, rows]
    return picked.mean(axis=1) if pooling == "mean" else picked.max(axis=1)


def sentence_vectors(encoder: Encoder, sentences: Sequence[str], pooling: str = "mean", *,
                     batch_size: int = 64) -> SentenceVectors:
    """Each sentence pooled per layer: ``vectors`` is ``(num_layers, num_sentences, dim)``."""
    if pooling not in POOLINGS:
        raise LabError("bad_choice", name="pooling", choices=", ".join(POOLINGS))
    if pooling == "cls" and encoder.kind != "bert":
        raise LabError("no_cls_token")
    encodings = _encode(encoder, sentences, batch_size)
    pooled = [_pool(e, pooling, sentence_index=i) for i, e in enumerate(encodings)]
    return SentenceVectors(encoder.name, list(encoder.layer_names), pooling, [e.text for e in encodings],
                           np.stack(pooled, axis=1).astype(np.float32),
                           [i for i, e in enumerate(encodings) if e.windows > 1])
