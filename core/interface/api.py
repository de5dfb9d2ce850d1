"""The lab's engine for exploratory analysis in Python (a notebook, a script): the same functions the pages
and ``python -m core`` call, behind one small interface.

    from core.interface import api
    bert = api.load("mini-bert-zh")                 # embedded name, local directory or hub id
    vectors = api.embed(bert, ["我吃了一个苹果。", "苹果昨天发布了新手机。"], "苹果")
    vectors.stacked().shape                         # (num_layers, num_occurrences, dim)
    api.mix(vectors, [0.2, 0.2, 0.2, 0.2, 0.2], gamma=2).shape   # (num_occurrences, dim)
    api.fill_mask(bert, "他每天早上都喝一杯牛[MASK]。").masks[0].candidates[0].token   # 奶
    api.token_vectors(bert, ["我吃了一个苹果。"]).to_frame()     # every token, every layer, as a DataFrame
    api.sentence_vectors(bert, ["我吃了一个苹果。"], "mean").vectors.shape   # (num_layers, num_sentences, dim)

Every function takes a model as a name (loaded once per process through ``core.models.cache``, with the
same checks and messages as the app and the CLI; loaded again when its files change; :func:`clear_cache` forgets
them all) or as an encoder ``load`` returned. Bad input raises
``core.guard.errors.LabError``; ``err.message("zh")`` / ``err.message("en")`` say why, in plain text.
Shapes are written as in AllenNLP's docstrings: ``(num_layers, num_occurrences, dim)``.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from ..attention.view import AttentionView, attention_view, encode_text
from ..compute.mixing import scalar_mix
from ..compute.occurrences import MAX_SENTENCES, WordVectors, find_spans, parse_labelled, word_vectors
from ..compute.scalar_mix import ScalarMix
from ..compute.token_vectors import SentenceVectors, TokenVectors, check_batch_size
from ..compute.token_vectors import sentence_vectors as _sentence_vectors
from ..compute.token_vectors import token_vectors as _token_vectors
from ..fillmask.prediction import FillMaskResult, MaskSlot
from ..fillmask.prediction import fill_mask as _fill_mask
from ..fillmask.words import MaskRun, word_candidates
from ..guard.errors import LabError, type_name
from ..guard.validation import BAD_SENTENCE_POLICIES
from ..models import cache as _cache
from ..models.cache import ModelRef, load_encoder
from ..models.encoders import MAX_SENTENCE_CHARS, BertEncoder, Encoder, Encoding, StaticEncoder
from ..vectors.projection import joint_projection, project_layers

Model = str | Encoder | ModelRef
MISSING_PER_BATCH = 10_000  # sentences without the word held (as indices) before a batch goes out anyway
MAX_EMBED_SENTENCES = 10_000  # what embed holds at once, as ``python -m core embed``; stream_word_vectors has none


def _text(value, name: str) -> str:
    """``value`` if it is text a tokenizer and a file can take, else LabError ``bad_argument`` / ``not_unicode``."""
    if not isinstance(value, str):
        raise LabError("bad_argument", name=name, expected="str", given=type_name(value))
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate ("\ud800"): the tokenizer would raise TypeError
        raise LabError("not_unicode", name=name) from exc
    return value


def load(model: Model, *, device: str = "cpu", dtype: str | torch.dtype = "float32") -> Encoder:
    """The encoder of ``model``: an embedded name (``mini-bert-zh``, ``mini-elmo-zh``, ``word2vec-zh``), a
    local model directory or a hub id (loaded from the local cache, e.g. with ``HF_HUB_OFFLINE=1``), or a
    handle ``core.models.cache.load_ref`` returned. Loaded once per process. Raises ``LabError`` (``unknown_model``,
    ``hub_offline``, ``unsafe_weights``, …).

    ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"auto"``: the GPU when torch sees one; one
    torch does not see raises ``device_unavailable``) and ``dtype`` (``"float32"``, ``"bfloat16"``,
    ``"float16"`` or the torch dtype) other than the defaults give a copy computing there
    (``Encoder.to``); vectors still come back as float32 numpy."""
    if isinstance(model, ModelRef):
        encoder = model.encoder()
    elif isinstance(model, Encoder):
        encoder = model
    else:
        encoder = load_encoder(_text(model, "model"))
    return encoder if device == "cpu" and dtype in ("float32", torch.float32) else encoder.to(device, dtype)


def clear_cache() -> None:
    """Forget every model loaded by name and every remembered failed load (a failure is otherwise answered again
    for a minute, unless the model's files change), so that the next call reads the files again. Not needed after
    saving a checkpoint again into its folder: a model directory is loaded again when any of its files' size or
    modification time changes. An encoder a caller holds stays usable."""
    _cache.clear()


def load_masked_lm(model: Model) -> BertEncoder:
    """:func:`load`, refusing a model that is not a BERT-family masked LM (``not_masked_lm``)."""
    encoder = load(model)
    if not isinstance(encoder, BertEncoder):  # named as the caller named it (the app: as the user typed it)
        raise LabError("not_masked_lm", name=model if isinstance(model, str) else model.name,
                       model_type=encoder.kind)
    return encoder


def stream_word_vectors(model: Model, sentences: Iterable[str | tuple[int, str | LabError]], word: str, *,
                        batch_size: int = MAX_SENTENCES, bad_sentences: str = "stop",
                        skipped: Callable[[int, LabError], None] | None = None) -> Iterator[WordVectors]:
    """``word``'s occurrences in a stream of sentences, one :class:`~core.compute.occurrences.WordVectors` per batch of
    ``batch_size`` sentences that contain the word, read lazily: memory is bounded by one batch whatever the
    stream's length. Only those sentences are given to the model, so every forward pass is a full batch however
    rare the word; the others are only listed in ``missing`` (a batch also goes out after
    :data:`MISSING_PER_BATCH` of them).

    ``sentences``: strings, whose ``sentence_index`` (of occurrences and of ``missing``) counts from the stream's
    start, or ``(index, sentence)`` pairs that keep their own index (e.g. a file's line number); a pair may carry
    the LabError of a line that could not be read instead. A sentence the model cannot take (longer than
    ``MAX_SENTENCE_CHARS`` characters, not text): ``bad_sentences="stop"`` raises ``bad_sentence`` with its index
    and reason before anything of its batch is computed, ``"skip"`` leaves it out and calls
    ``skipped(index, error)``. A sentence longer than a BERT's ``max_tokens`` is read in overlapping windows
    (``core.models.encoders.LONG_TEXT_POLICY``: ``max_tokens - 2`` text tokens, stride half a window; every
    occurrence kept) and listed in ``WordVectors.windowed``; ELMo and word2vec read every sentence whole.
    A static model without a vector for ``word`` raises ``word_oov``."""
    encoder = load(model)
    word = _text(word, "word").strip()
    if not word:
        raise LabError("empty_word")
    if isinstance(encoder, StaticEncoder) and encoder.word_vector(word) is None:
        raise LabError("word_oov", word=word, model=encoder.name)
    check_batch_size(batch_size, MAX_SENTENCES)
    if bad_sentences not in BAD_SENTENCE_POLICIES:
        raise LabError("bad_argument", name="bad_sentences", expected=" or ".join(BAD_SENTENCE_POLICIES),
                       given=repr(bad_sentences))
    batch: list[tuple[int, str]] = []
    missing: list[int] = []
    for index, sentence in _numbered(sentences):
        try:
            checked = _checked_sentence(encoder, sentence, index, word)
        except LabError as err:
            if bad_sentences == "stop":
                raise LabError("bad_sentence", index=index, reason=err.message("en", markdown=False)) from err
            if skipped is not None:
                skipped(index, err)
            continue
        if checked is None:
            missing.append(index)
        else:
            batch.append((index, checked))
        if len(batch) == batch_size or len(missing) >= MISSING_PER_BATCH:
            yield _batch_vectors(encoder, batch, missing, word)
            batch, missing = [], []
    if batch or missing:
        yield _batch_vectors(encoder, batch, missing, word)


def _iterable(sentences) -> Iterable:
    """``sentences`` if it is an iterable of them in order: one string is refused, not read character by character,
    and so is a dict or a set (a dict's keys would be read as the sentences; a set has no order to number)."""
    if isinstance(sentences, str | bytes | Mapping | Set) or not isinstance(sentences, Iterable):
        raise LabError("bad_argument", name="sentences", expected="a list of str", given=type_name(sentences))
    return sentences


def _numbered(sentences) -> Iterator[tuple[int, str | LabError]]:
    for position, item in enumerate(_iterable(sentences)):
        numbered = isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], int)
        yield item if numbered else (position, item)


def _checked_sentence(encoder: Encoder, sentence, index: int, word: str) -> str | None:
    """``sentence`` as the model takes it, None when ``word`` does not occur in it (the model need not read it),
    else the LabError that says why not."""
    if isinstance(sentence, LabError):
        raise sentence
    sentence = _text(sentence, f"sentences[{index}]")
    if len(sentence) > MAX_SENTENCE_CHARS:
        raise LabError("sentence_too_long", length=f"{len(sentence):,}", limit=f"{MAX_SENTENCE_CHARS:,}")
    if not find_spans(sentence, word):
        return None
    return sentence  # longer than the model's tokens: read in windows (encoders.LONG_TEXT_POLICY)


def _batch_vectors(encoder: Encoder, batch: list[tuple[int, str]], missing: list[int], word: str) -> WordVectors:
    if not batch:
        return WordVectors(word, encoder.name, list(encoder.layer_names), [], missing)
    indices = [index for index, _ in batch]
    result = word_vectors(encoder, [sentence for _, sentence in batch], word)
    result.occurrences = [replace(o, sentence_index=indices[o.sentence_index]) for o in result.occurrences]
    result.missing = sorted(missing + [indices[i] for i in result.missing])
    result.windowed = [indices[i] for i in result.windowed]
    return result


def embed(model: Model, sentences: Sequence[str], word: str,
          labels: Sequence[str | None] | None = None, *, batch_size: int = MAX_SENTENCES) -> WordVectors:
    """Every occurrence of ``word`` in ``sentences`` with one vector per layer (the mean of the tokens that
    cover it), as the static-vs-contextual page computes them; ``labels`` (e.g. senses, one per sentence)
    are carried into ``Occurrence.label``; ``batch_size``: sentences holding the word per forward pass.

    ``result.stacked()``: ``(num_layers, num_occurrences, dim)``; ``result.to_frame(layers=None)``: one pandas
    row per occurrence and layer; ``result.layer_names``: ``num_layers``
    names (layer 0 is the input layer: ELMo's is context-independent, BERT's adds position embeddings, so
    its occurrences of one word already differ); ``result.missing``: sentences without the word;
    ``result.windowed``: sentences longer than the model takes, read in overlapping windows (see
    :func:`stream_word_vectors`), the same occurrences for every model. At most
    :data:`MAX_EMBED_SENTENCES` sentences (``embed_too_many_sentences``, which names the alternative); a longer
    corpus: :func:`stream_word_vectors`.
    """
    sentences = _sentence_list(sentences)
    if labels is not None and (isinstance(labels, str) or not isinstance(labels, Sequence)):
        raise LabError("bad_argument", name="labels", expected="a list of str or None", given=type_name(labels))
    if labels is not None and len(labels) != len(sentences):
        raise LabError("labels_count", given=len(labels), sentences=len(sentences))
    for i, label in enumerate(labels or ()):
        if label is not None and not isinstance(label, str):
            raise LabError("bad_argument", name=f"labels[{i}]", expected="str or None", given=type_name(label))
    if not sentences:
        raise LabError("empty_input")
    parts = list(stream_word_vectors(model, sentences, word, batch_size=batch_size))
    result = replace(parts[0], occurrences=[o for p in parts for o in p.occurrences],
                     missing=[i for p in parts for i in p.missing], windowed=[i for p in parts for i in p.windowed])
    for occurrence in result.occurrences:
        occurrence.label = labels[occurrence.sentence_index] if labels is not None else None
    return result


def _sentence_list(sentences, function: str = "embed") -> list[str]:
    """``sentences`` as a list of text, at most :data:`MAX_EMBED_SENTENCES` (held in memory at once)."""
    checked = [_text(sentence, f"sentences[{i}]")
               for i, sentence in enumerate(itertools.islice(_iterable(sentences), MAX_EMBED_SENTENCES + 1))]
    if len(checked) > MAX_EMBED_SENTENCES:
        raise LabError("embed_too_many_sentences", limit=f"{MAX_EMBED_SENTENCES:,}", function=function)
    return checked


def mix(layers: WordVectors | np.ndarray, weights: Sequence[float], gamma: float = 1.0, *,
        pre_softmax: bool = False, do_layer_norm: bool = False, mask: np.ndarray | None = None) -> np.ndarray:
    """ELMo's scalar mix γ · Σ_j s_j h_j (``core.compute.mixing.scalar_mix``) of ``layers``: a :func:`embed` result
    or an array ``(num_layers, ..., dim)``. ``weights`` are s (non-negative, summing to 1) or, with
    ``pre_softmax``, the learned w with s = softmax(w). Returns float64 ``(..., dim)``, e.g.
    ``(num_occurrences, dim)``. ``do_layer_norm`` standardises each layer first (one mean and variance per
    layer); for padded arrays ``(num_layers, batch, time, dim)`` pass ``mask`` ``(batch, time)`` (1 = real token)
    so that padding does not count, as in AllenNLP's ``ScalarMix``. Bad weights or mask raise ``bad_mix``."""
    stack = layers.stacked() if isinstance(layers, WordVectors) else layers
    try:
        return scalar_mix(stack, weights, gamma, pre_softmax=pre_softmax, do_layer_norm=do_layer_norm,
                          mask=mask)
    except (ValueError, TypeError) as exc:
        raise LabError("bad_mix", detail=str(exc)) from exc


@dataclass
class LayerProjection:
    """Every layer's occurrences in ONE deterministic 2-D PCA frame, as the static-vs-contextual page draws them."""

    coords: np.ndarray  # (num_layers, num_occurrences, 2), each layer centred on its own mean
    explained_variance_ratio: np.ndarray  # (2,)


def project(vectors: WordVectors | np.ndarray) -> LayerProjection:
    """The page's projection (``core.vectors.projection.joint_projection``: each layer centred, one PCA with
    seed 0 and sign-fixed components over all layers) of a :func:`embed` result or an array
    ``(num_layers, num_occurrences, dim)``. Fitted on the occurrences alone: with fewer than
    ``core.vectors.view.MIN_OWN_FRAME`` of them the picture cannot show their similarity (two points always
    land at mirrored ends; the page adds the sentences' other tokens as a background); compare cosines."""
    if isinstance(vectors, WordVectors) and not vectors.occurrences:
        raise LabError("word_in_no_sentence", word=vectors.word)
    expected = "an embed result or an array (num_layers, num_occurrences, dim) of finite numbers"
    try:
        stack = np.asarray(vectors.stacked() if isinstance(vectors, WordVectors) else vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise LabError("bad_argument", name="vectors", expected=expected, given=type_name(vectors)) from exc
    if stack.ndim != 3 or not np.isfinite(stack).all():  # NaN made scikit-learn's PCA raise ValueError
        given = f"an array of shape {stack.shape}" if stack.ndim != 3 else "NaN or infinity"
        raise LabError("bad_argument", name="vectors", expected=expected, given=given)
    if stack.shape[1] == 0:
        raise LabError("word_in_no_sentence", word="")
    projection = joint_projection(stack)
    return LayerProjection(project_layers(projection, stack), projection.explained_variance_ratio)


@dataclass
class MaskPredictions:
    """What BERT puts in the masks of one sentence."""

    sentence: str  # as the model read it ([mask], ［MASK］ … normalised to the tokenizer's mask token)
    tokens: list[str]  # the tokenized input, [CLS] … [SEP]
    masks: list[MaskSlot]  # per [MASK]: top-k ``candidates`` (token, score) and the full ``probabilities`` (vocab,)
    words: list[MaskRun]  # per run of adjacent masks: ranked whole words (left-to-right chain scores)


def fill_mask(model: Model, sentence: str, top_k: int = 5, *, hide_vulgar: bool = True) -> MaskPredictions:
    """The fill-mask page's predictions: top-k tokens per ``[MASK]`` (``core.fillmask.prediction.fill_mask``) and, for
    runs of adjacent masks such as 我吃了一个[MASK][MASK]。, whole words (``core.fillmask.words.word_candidates``).
    ``hide_vulgar`` leaves out candidates that complete a word of the vulgar-word list."""
    encoder = load_masked_lm(model)
    sentence = _text(sentence, "sentence")
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise LabError("bad_argument", name="top_k", expected="int", given=type_name(top_k))
    result: FillMaskResult = _fill_mask(encoder, sentence, top_k=top_k, hide_vulgar=hide_vulgar)
    runs = word_candidates(encoder, result.sentence, top_n=top_k, hide_vulgar=hide_vulgar)
    return MaskPredictions(result.sentence, result.tokens, result.masks, runs)


def _attention_encoding(model: Model, sentence: str, pair: str | None) -> Encoding:
    encoder = load(model)
    if not isinstance(encoder, BertEncoder):
        raise LabError("no_attention", name=encoder.name)
    sentence = _text(sentence, "sentence")
    pair = None if pair is None else _text(pair, "pair")
    return encode_text(encoder, sentence if pair else sentence.strip(), pair or "")  # empty, too long: LabError


def attentions(model: Model, sentence: str, pair: str | None = None, *, hide_special: bool = False,
               word_level: bool = False) -> AttentionView:
    """The attention page's view of one sentence (or a pair ``[CLS] sentence [SEP] pair [SEP]``):
    ``view.att`` ``(num_layers, num_heads, n, n)`` (row = from, column = to, rows sum to 1),
    ``view.head_avg`` and ``view.rollout`` ``(num_layers, n, n)``, ``view.labels`` (n,). ``hide_special``
    drops [CLS]/[SEP] (rows renormalised), ``word_level`` aggregates tokens to jieba words."""
    return attention_view(_attention_encoding(model, sentence, pair), hide_special=hide_special,
                          word_level=word_level)


def bertviz_attention(model: Model, sentence: str, pair: str | None = None
                      ) -> tuple[tuple[torch.Tensor, ...], list[str]]:
    """``(attention, tokens)`` in the form bertviz's ``head_view(attention, tokens)`` / ``model_view`` take:
    one float32 tensor per layer of shape ``(batch=1, num_heads, n, n)``, and the n tokens. For a pair,
    pass ``sentence_b_start=tokens.index("[SEP]") + 1`` to bertviz as well."""
    encoding = _attention_encoding(model, sentence, pair)
    assert encoding.attentions is not None  # _attention_encoding asks a BERT for them
    return tuple(torch.from_numpy(np.ascontiguousarray(layer[None], dtype=np.float32))
                 for layer in encoding.attentions), list(encoding.tokens)


def token_vectors(model: Model, sentences: Sequence[str], *, batch_size: int = 64) -> TokenVectors:
    """Every token of every sentence with every layer's vector: ``result.sentences[i].layers`` is
    ``(num_layers, num_tokens, dim)`` beside ``tokens``, character ``offsets`` and ``special`` ([CLS]/[SEP]);
    ``result.to_frame(layers=None)`` is one pandas row per token and layer. Works for BERT-family models,
    mini-elmo-zh and word2vec (one layer; jieba words as tokens). At most :data:`MAX_EMBED_SENTENCES` sentences."""
    return _token_vectors(load(model), _sentence_list(sentences, "token_vectors"), batch_size=batch_size)


def sentence_vectors(model: Model, sentences: Sequence[str], pooling: str = "mean", *,
                     batch_size: int = 64) -> SentenceVectors:
    """Each sentence as one vector per layer: ``result.vectors`` ``(num_layers, num_sentences, dim)``,
    ``result.to_frame()`` one row per sentence and layer. ``pooling``: ``"mean"`` or ``"max"`` over the
    tokens that cover text (no [CLS]/[SEP]; word2vec: the words it knows), or ``"cls"`` (BERT only)."""
    return _sentence_vectors(load(model), _sentence_list(sentences, "sentence_vectors"), pooling,
                             batch_size=batch_size)


def read_labelled(path: str | Path) -> tuple[list[str], list[str | None]]:
    """A UTF-8 text file of ``label|sentence`` (or plain sentence) lines, as the static-vs-contextual page
    reads an upload: ``(sentences, labels)``, a label None where a line has none; blank lines dropped.
    Pass both to :func:`embed` (``labels=``). Raises ``file_unreadable`` / ``not_text``, ``bad_argument`` for a
    ``path`` that is no path."""
    if not isinstance(path, str | os.PathLike):
        raise LabError("bad_argument", name="path", expected="str or Path", given=type_name(path))
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise LabError("file_unreadable", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise LabError("not_text") from exc
    return parse_labelled(text.splitlines())


__all__ = ["Model", "load", "clear_cache", "load_masked_lm", "embed", "stream_word_vectors", "mix", "project",
           "LayerProjection", "fill_mask", "MaskPredictions", "attentions", "bertviz_attention", "token_vectors",
           "TokenVectors", "sentence_vectors", "SentenceVectors", "read_labelled", "ScalarMix"]
