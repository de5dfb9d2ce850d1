"""One encoder interface for every model: BERT-family transformers, the mini ELMo biLM, word2vec.

``encoder.encode(sentences)`` returns one :class:`Encoding` per sentence with the tokens, their
character offsets into the sentence, every layer's vectors (layer 0 is the input layer, before any other
token is mixed in: ELMo's token layer, context-independent; BERT's embedding output, which adds position and
segment embeddings, so one character's occurrences already differ by position; or the only layer of a static
model) and,
for transformers, every layer's and head's attention.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import cast

import numpy as np
import torch

# At import, under the module lock: transformers' lazy attribute imports, first made from several page
# threads at once (a classroom's first visits), could fail with an ImportError
from transformers import BertTokenizer  # the fast tokenizer: BertTokenizerFast is its alias in transformers 5

from ..guard.errors import LabError
from ..guard.validation import check_length
from ..runtime.concurrency import ModelGate

MAX_SENTENCE_CHARS = 2000
# Long texts, the same for every model: a sentence longer than a BERT takes (``max_tokens``, its position
# embeddings) is read in overlapping windows of ``max_tokens - 2`` text tokens (plus [CLS] and [SEP]), each
# starting half a window after the previous one (the last one ends at the sentence's end); every token's vectors
# come from the window where it has the most context on both sides, [CLS] from the first, [SEP] from the last.
# ELMo's biLSTM and word2vec have no position limit and read every sentence (up to MAX_SENTENCE_CHARS) whole, so
# two models compared on one corpus cover the same occurrences. Nothing is cut: ``Encoding.windows`` says how a
# sentence was read. Attention maps are of one window: a sentence too long for it is refused (too_many_tokens).
LONG_TEXT_POLICY = ("sliding window: max_tokens - 2 text tokens, stride half a window; each token from the window "
                    "where it has the most context")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def resolve_device(device: str) -> torch.device:
    """``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"mps"`` (each refused with ``device_unavailable`` where torch does
    not see it) or ``"auto"`` (the GPU when there is one)."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        target = torch.device(device)
    except (RuntimeError, TypeError):
        raise LabError("bad_choice", name="device", choices="cpu, cuda, cuda:N, mps, auto") from None
    if target.type not in ("cpu", "cuda", "mps"):
        raise LabError("bad_choice", name="device", choices="cpu, cuda, cuda:N, mps, auto")
    if target.type == "cuda" and not (torch.cuda.is_available()
                                      and (target.index or 0) < torch.cuda.device_count()):
        raise LabError("device_unavailable", device=str(device))
    if target.type == "mps" and not torch.backends.mps.is_available():
        raise LabError("device_unavailable", device=str(device))
    return target


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """A name of ``DTYPES`` or one of its torch dtypes (``torch.float16``)."""
    if isinstance(dtype, torch.dtype) and dtype in DTYPES.values():
        return dtype
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise LabError("bad_choice", name="dtype", choices=", ".join(DTYPES))
    return DTYPES[dtype]


def _on_cpu(outputs):
    """A model's outputs as float32 CPU tensors, whatever device and dtype computed them."""
    for key, value in outputs.items():
        if isinstance(value, torch.Tensor):
            outputs[key] = value.float().cpu()
        elif isinstance(value, tuple):
            outputs[key] = tuple(t.float().cpu() for t in value)
    return outputs


@dataclass
class Encoding:
    text: str
    tokens: list[str]
    offsets: list[tuple[int, int]]  # character span of each token in ``text``; (0, 0) for specials
    special: list[bool]  # [CLS]/[SEP]/<S>-like tokens that cover no text
    layers: np.ndarray  # (num_layers, num_tokens, dim), float32
    attentions: np.ndarray | None = None  # (layers, heads, num_tokens, num_tokens) for transformers
    in_vocab: list[bool] | None = None  # static models: whether each token has a vector
    windows: int = 1  # how many overlapping windows the model read the sentence in (1: whole; LONG_TEXT_POLICY)


class Encoder:
    """Base class: subclasses set the attributes below and implement ``encode``."""

    name: str
    kind: str  # "bert" | "elmo" | "static"
    layer_names: list[str]
    max_tokens: int

    @property
    def num_layers(self) -> int:
        return len(self.layer_names)

    def encode(self, sentences: list[str], *, attentions: bool = False, batch_size: int = 32) -> list[Encoding]:
        raise NotImplementedError

    def to(self, device: str = "auto", dtype: str | torch.dtype = "float32") -> Encoder:
        """A copy of this encoder computing on ``device`` in ``dtype``; vectors still come back as float32
        numpy. The loaded encoder is shared by the process (the app's pages too), so it is never moved."""
        raise NotImplementedError


def _moved_torch_copy(encoder, device: str, dtype: str | torch.dtype):
    """A shallow copy of ``encoder`` with its own copy of ``encoder.model`` on ``device`` in ``dtype``."""
    target, kind = resolve_device(device), resolve_dtype(dtype)
    moved = copy.copy(encoder)
    moved.model = copy.deepcopy(encoder.model).to(device=target, dtype=kind).eval()
    moved.gate = ModelGate()
    return moved


def _without_padded_rows(outputs, tokens: int) -> None:
    """The masked-LM logits cut to the tokenizer's ``tokens``: rows of a padded vocabulary have no token to show,
    so fill-mask's distribution is over the tokens there are (softmax renormalises over them)."""
    for key in ("prediction_logits", "logits"):
        logits = outputs.get(key)
        if logits is not None and logits.shape[-1] > tokens:
            outputs[key] = logits[..., :tokens]


def _check_sentences(sentences: list[str]) -> None:
    if not sentences or not any(s.strip() for s in sentences):
        raise LabError("empty_input")
    for sentence in sentences:
        check_length(sentence, MAX_SENTENCE_CHARS)


def _length_batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices grouped by similar length so padding stays small; callers restore the order."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


class BertEncoder(Encoder):
    """Any BERT-family checkpoint loaded through transformers (eager attention, safetensors only). ``mlm_head``:
    whether the masked-LM head came from the weights; without it (an encoder saved alone, a fine-tune) the model
    gives vectors and attention, and a forward pass through the heads (fill-mask) raises ``no_mlm_head``."""

    kind = "bert"

    def __init__(self, name: str, model, tokenizer, nsp_head=None, *, mlm_head: bool = True):
        self.name = name
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.nsp_head = nsp_head
        self.mlm_head = mlm_head
        self.max_tokens = min(int(getattr(model.config, "max_position_embeddings", 512)), 512)
        self.layer_names = ["embeddings"] + [f"layer {i}" for i in range(1, model.config.num_hidden_layers + 1)]
        self.mask_token = tokenizer.mask_token
        self.gate = ModelGate()

    @property
    def has_nsp(self) -> bool:
        return self.nsp_head is not None

    def _tokenize(self, texts, pairs=None):
        with self.gate.tokenize():
            return self.tokenizer(texts, pairs, return_offsets_mapping=True, padding=True,
                                  return_special_tokens_mask=True, return_tensors="pt")

    @cached_property
    def vocab(self) -> dict[str, int]:
        """Token → id (the tokenizer's ``get_vocab()`` builds a new dict on every call)."""
        return self.tokenizer.get_vocab()

    def tokens(self, text: str) -> list[str]:
        """The tokenizer's tokens of ``text`` (no special tokens)."""
        with self.gate.tokenize():
            return self.tokenizer.tokenize(text)

    def token_counts(self, texts: list[str]) -> list[int]:
        with self.gate.tokenize():
            return [len(ids) for ids in self.tokenizer(texts)["input_ids"]]

    def check_length(self, text: str, pair: str | None = None) -> None:
        with self.gate.tokenize():
            count = len(self.tokenizer(text, pair)["input_ids"])
        self._check_token_count(count)

    def _check_token_count(self, count: int) -> None:
        if count > self.max_tokens:
            raise LabError("too_many_tokens", count=count, limit=self.max_tokens)

    @torch.inference_mode()
    def forward(self, texts: list[str], pairs: list[str] | None = None, *, attentions: bool = False,
                heads: bool = True):
        """One batched forward pass: (tokenized batch, model outputs with hidden states).

        ``heads=False`` runs the encoder only: embeddings never need the MLM output layer, which
        over a character vocabulary is a large share of a small model's compute.
        """
        if heads and not self.mlm_head:  # its head would be random numbers
            raise LabError("no_mlm_head", name=self.name)
        batch = self._tokenize(texts, pairs)
        inputs = {k: v for k, v in batch.items() if k not in ("offset_mapping", "special_tokens_mask")}
        model = self.model if heads else self.model.base_model
        on_cpu = self.model.device.type == "cpu" and self.model.dtype == torch.float32
        if not on_cpu:
            inputs = {k: v.to(self.model.device) for k, v in inputs.items()}
        with self.gate.forward():
            outputs = model(**inputs, output_hidden_states=True, output_attentions=attentions)
        if heads:
            _without_padded_rows(outputs, len(self.tokenizer))
        return batch, outputs if on_cpu else _on_cpu(outputs)

    def to(self, device: str = "auto", dtype: str | torch.dtype = "float32") -> BertEncoder:
        moved = _moved_torch_copy(self, device, dtype)
        if self.nsp_head is not None:  # the head is part of the model: follow it into the copy
            moved.nsp_head = moved.model.cls.seq_relationship
        return moved

    def encode(self, sentences, *, attentions=False, batch_size=64):
        # 64 rather than 32: measured ≈ 20% faster on 2 CPU cores for short sentences
        _check_sentences(sentences)
        token_counts = self.token_counts(list(sentences))
        results: list[Encoding | None] = [None] * len(sentences)
        whole = []
        for index, count in enumerate(token_counts):
            if count <= self.max_tokens:
                whole.append(index)
            elif attentions:  # one attention map needs one window
                self._check_token_count(count)
            else:
                results[index] = self._windowed(sentences[index])
        for group in _length_batches([token_counts[i] for i in whole], batch_size):
            group = [whole[i] for i in group]
            texts = [sentences[i] for i in group]
            batch, outputs = self.forward(texts, attentions=attentions, heads=False)
            hidden = torch.stack(outputs.hidden_states).float()  # (layers, batch, time, dim)
            atts = torch.stack(outputs.attentions).float() if attentions else None
            for row, index in enumerate(group):
                n = int(batch["attention_mask"][row].sum())
                ids = batch["input_ids"][row, :n].tolist()
                results[index] = Encoding(
                    text=sentences[index],
                    tokens=self.tokenizer.convert_ids_to_tokens(ids),
                    offsets=[tuple(o) for o in batch["offset_mapping"][row, :n].tolist()],
                    special=[bool(s) for s in batch["special_tokens_mask"][row, :n].tolist()],
                    layers=hidden[:, row, :n].numpy(),
                    attentions=atts[:, row, :, :n, :n].numpy() if atts is not None else None,
                )
        return results

    @torch.inference_mode()
    def _windowed(self, sentence: str) -> Encoding:
        """``sentence``, longer than ``max_tokens``, read in overlapping windows (``LONG_TEXT_POLICY``)."""
        with self.gate.tokenize():
            text = self.tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = list(text["input_ids"]), [tuple(o) for o in text["offset_mapping"]]
        width = self.max_tokens - 2
        starts = list(range(0, len(ids) - width, max(1, width // 2))) + [len(ids) - width]
        cls, sep = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        input_ids = torch.tensor([[cls] + ids[start:start + width] + [sep] for start in starts])
        inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
        if "token_type_ids" in self.tokenizer.model_input_names:
            inputs["token_type_ids"] = torch.zeros_like(input_ids)
        inputs = {k: v.to(self.model.device) for k, v in inputs.items()}
        with self.gate.forward():
            outputs = self.model.base_model(**inputs, output_hidden_states=True)
        hidden = torch.stack(outputs.hidden_states).float().cpu()  # (layers, windows, width + 2, dim)
        # token t's window: the one where its nearer edge is farthest (the most context on both sides)
        best = [max(range(len(starts)), key=lambda w: min(t - starts[w], starts[w] + width - 1 - t)
                    if starts[w] <= t < starts[w] + width else -1) for t in range(len(ids))]
        columns = [hidden[:, 0, 0]] + [hidden[:, w, 1 + t - starts[w]] for t, w in enumerate(best)] \
            + [hidden[:, -1, -1]]
        all_ids = [cls] + ids + [sep]
        return Encoding(text=sentence, tokens=self.tokenizer.convert_ids_to_tokens(all_ids),
                        offsets=[(0, 0)] + offsets + [(0, 0)], special=[True] + [False] * len(ids) + [True],
                        layers=torch.stack(columns, dim=1).numpy(), windows=len(starts))

    @torch.inference_mode()
    def next_sentence_probability(self, first: str, second: str) -> float:
        """P(IsNext) from the NSP head (label 0 = the second sentence follows the first)."""
        if self.nsp_head is None:
            raise LabError("no_nsp_head", name=self.name)
        self.check_length(first, second)
        with self.gate.tokenize():
            batch = self.tokenizer(first, second, return_tensors="pt")
        with self.gate.forward():
            outputs = self.model.base_model(**batch.to(self.model.device))
        logits = self.nsp_head(outputs.pooler_output)
        return float(torch.softmax(logits.float().cpu(), -1)[0, 0])


class ElmoEncoder(Encoder):
    """The mini ELMo biLM: layer 0 = [x; x], layer j = [forward_j; backward_j]."""

    kind = "elmo"

    def __init__(self, name: str, directory: Path):
        from .elmo import BiLM

        self.name = name
        self.model = BiLM.load(directory)
        self.tokenizer = BertTokenizer(vocab=str(directory / "vocab.txt"), do_lower_case=True)
        self.max_tokens = MAX_SENTENCE_CHARS + 2  # no position limit: every sentence whole (LONG_TEXT_POLICY)
        self.layer_names = ["token layer"] + [f"biLSTM {j}" for j in range(1, self.model.config.num_layers + 1)]
        self.gate = ModelGate()

    def _tokenize(self, texts: list[str]):
        """The padded batch of ``texts`` (with offsets and the special-token mask) and each row's length."""
        with self.gate.tokenize():
            batch = self.tokenizer(texts, return_offsets_mapping=True, padding=True,
                                   return_special_tokens_mask=True, return_tensors="pt")
        lengths = batch["attention_mask"].sum(1)
        if int(lengths.max()) > self.max_tokens:
            raise LabError("too_many_tokens", count=int(lengths.max()), limit=self.max_tokens)
        return batch, lengths

    @property
    def _device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: str = "auto", dtype: str | torch.dtype = "float32") -> ElmoEncoder:
        return _moved_torch_copy(self, device, dtype)

    @torch.inference_mode()
    def encode(self, sentences, *, attentions=False, batch_size=32):
        _check_sentences(sentences)
        results: list[Encoding | None] = [None] * len(sentences)
        for group in _length_batches([len(s) for s in sentences], batch_size):
            batch, lengths = self._tokenize([sentences[i] for i in group])
            with self.gate.forward():
                layers = self.model.layer_vectors(batch["input_ids"].to(self._device), lengths).float().cpu()
            for row, index in enumerate(group):
                n = int(lengths[row])
                results[index] = Encoding(
                    text=sentences[index],
                    tokens=cast(list[str], self.tokenizer.convert_ids_to_tokens(batch["input_ids"][row, :n].tolist())),
                    offsets=[tuple(o) for o in batch["offset_mapping"][row, :n].tolist()],
                    special=[bool(s) for s in batch["special_tokens_mask"][row, :n].tolist()],
                    layers=layers[:, row, :n].numpy(),
                )
        return results

    @torch.inference_mode()
    def language_model(self, text: str) -> tuple[list[int], list[tuple[int, int]], np.ndarray, np.ndarray]:
        """The biLM's own predictions for one sentence: (token ids, offsets, following, preceding).

        The ids are [CLS] tokens [SEP] (the biLM's <S> and </S>), as in training. ``following[t]`` is the
        forward LM's distribution over the token at t+1 given the tokens 0..t, ``preceding[t]`` the backward
        LM's over the token at t-1 given the tokens t..end: the top layer of each direction through the
        shared softmax, exactly the predictions ``BiLM.lm_losses`` trains. Both are (tokens, vocabulary).
        """
        _check_sentences([text])
        batch, lengths = self._tokenize([text])
        with self.gate.forward():
            _, forward, backward = self.model.representations(batch["input_ids"].to(self._device), lengths)
            following = torch.softmax(self.model.logits(forward[-1][0]).float(), dim=-1).cpu()
            preceding = torch.softmax(self.model.logits(backward[-1][0]).float(), dim=-1).cpu()
        return (batch["input_ids"][0].tolist(), [tuple(o) for o in batch["offset_mapping"][0].tolist()],
                following.numpy(), preceding.numpy())


class StaticEncoder(Encoder):
    """word2vec: one vector per word type, whatever the sentence (jieba segmentation)."""

    kind = "static"

    def __init__(self, name: str, directory: Path):
        from safetensors.numpy import load_file

        from .segmenter import segmenter

        self.name = name
        self.config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        self.vectors = load_file(str(directory / "vectors.safetensors"))["vectors"].astype(np.float32)
        rows = [line.split("\t") for line in (directory / "vocab.txt").read_text(encoding="utf-8").splitlines()]
        self.words = [row[0] for row in rows]
        self.counts = [int(row[1]) for row in rows]
        self.index = {word: i for i, word in enumerate(self.words)}
        self.max_tokens = 100_000
        self.layer_names = ["word2vec"]
        self._jieba = segmenter(directory, self.words)

    def to(self, device: str = "auto", dtype: str | torch.dtype = "float32") -> StaticEncoder:
        """Static vectors are a numpy lookup: only the CPU and float32."""
        if resolve_device(device).type != "cpu" or resolve_dtype(dtype) != torch.float32:
            raise LabError("bad_choice", name="device/dtype", choices="cpu/auto, float32 (a numpy lookup)")
        return self

    def word_vector(self, word: str) -> np.ndarray | None:
        """The single vector of a word type, or None when it is out of vocabulary (OOV)."""
        row = self.index.get(word.lower())
        return None if row is None else self.vectors[row]

    def most_similar(self, word: str, k: int = 10) -> list[tuple[str, float]]:
        vector = self.word_vector(word)
        if vector is None:
            return []
        sims = self.vectors @ vector / (self._row_norms * np.linalg.norm(vector) + 1e-12)
        nearest = np.argpartition(-sims, min(k, len(sims) - 1))[:k + 1]  # k + 1: the word itself may be among them
        order = [int(i) for i in nearest[np.argsort(-sims[nearest])] if self.words[i] != word.lower()][:k]
        return [(self.words[i], float(sims[i])) for i in order]

    @cached_property
    def _row_norms(self) -> np.ndarray:
        return np.linalg.norm(self.vectors, axis=1)

    def encode(self, sentences, *, attentions=False, batch_size=32):
        _check_sentences(sentences)
        results = []
        for sentence in sentences:
            tokens, offsets, vectors, known = [], [], [], []
            for word, start, end in self._jieba.tokenize(sentence):
                if not word.strip():
                    continue
                vector = self.word_vector(word)
                tokens.append(word)
                offsets.append((start, end))
                known.append(vector is not None)
                vectors.append(vector if vector is not None else np.zeros(self.vectors.shape[1], np.float32))
            layers = np.stack(vectors)[None] if vectors else np.zeros((1, 0, self.vectors.shape[1]), np.float32)
            results.append(Encoding(text=sentence, tokens=tokens, offsets=offsets, special=[False] * len(tokens),
                                    layers=layers, in_vocab=known))
        return results
