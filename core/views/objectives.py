"""The pre-training objectives, measured on the embedded models (lecture 52: 双向语言模型预训练,
掩码语言模型, "ELMo 中两个独立单向 LSTM 的简单拼接" vs BERT's deep bidirectionality).

- :func:`bilm_reading`: ELMo's biLM objective on one sentence. For every token t_k the forward LM's
  distribution p(t_k | t_1 … t_{k-1}) and the backward LM's p(t_k | t_{k+1} … t_N) (top-k candidates, the
  probability and rank of the real token); the two log-likelihoods the biLM maximises are their sums.
- :func:`masked_reading`: BERT's masked-LM prediction of the same token (the sentence with that token
  replaced by [MASK]), to set against the forward LM's left-to-right prediction (the forward LM stands in
  for GPT, Radford et al. 2018: the same left-to-right objective, with an LSTM instead of a Transformer
  decoder); :func:`masked_readings` for every token, and :func:`surer_positions` counts where each is surer.
- :func:`right_context_movement`: two sentences with a shared beginning and different right-hand parts.
  How far each shared token's vector moved, per layer, for ELMo's forward half, ELMo's backward half and
  every BERT layer. The forward LSTM never reads to the right, so its half does not move at all; the
  backward half does, and so does every BERT layer above the embeddings (self-attention sees both sides).

Pure: encoders (``core.models.encoders``) and encodings in, dataclasses and arrays out; no Streamlit.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..fillmask.prediction import Candidate, fill_masks, top_candidates
from ..guard.errors import LabError
from ..guard.validation import check_text
from ..models.encoders import BertEncoder, ElmoEncoder, Encoding

MAX_CHARS = 60  # per sentence: one row per character in the page's tables
TOP_K = 10  # candidates kept per prediction (the page's slider slices them)
METRICS = ("cosine", "l2")  # 1 − cos(u, v) and ‖u − v‖ / ‖u‖
_SPECIAL = re.compile(r"[\[［]\s*(mask|cls|sep|unk|pad)\s*[\]］]", re.IGNORECASE)
_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass
class Prediction:
    """One model's prediction of one token from its context."""

    candidates: list[Candidate]  # the most probable tokens (special tokens and vulgar completions left out)
    actual: float | None  # probability of the real token (None: not in this model's vocabulary)
    rank: int | None  # 1 + the number of tokens with a higher probability
    hidden: int = 0  # vulgar candidates left out of ``candidates``


@dataclass
class BiLMReading:
    """The forward and backward LM predictions of every token of one sentence."""

    text: str
    tokens: list[str]  # the sentence's tokens, without [CLS]/[SEP]
    offsets: list[tuple[int, int]]  # character span of each token in ``text``
    forward: list[Prediction]  # p(t_k | t_1 … t_{k-1}), one per token
    backward: list[Prediction]  # p(t_k | t_{k+1} … t_N), one per token

    def log_likelihood(self, direction: str) -> float:
        """Σ_k log p(t_k | …) of the forward or backward LM (natural log) over the tokens the model knows
        (an unknown character, [UNK], has no probability of its own)."""
        predictions = self.forward if direction == "forward" else self.backward
        return float(sum(math.log(max(p.actual, 1e-45)) for p in predictions if p.actual is not None))


def check_sentence(text: str | None, limit: int = MAX_CHARS) -> str:
    """The stripped sentence; LabError empty_input / too_long / special_in_text ([MASK], [CLS], …)."""
    text = check_text(text, limit)
    special = _SPECIAL.search(text)
    if special:
        raise LabError("special_in_text", token=special.group(0))
    return text


def is_chinese(text: str) -> bool:
    """Whether ``text`` holds at least one Chinese character (the embedded models read Chinese only)."""
    return _CHINESE.search(text) is not None


def _prediction(candidates: list[Candidate], hidden: int, distribution: np.ndarray, actual_id: int | None
                ) -> Prediction:
    if actual_id is None:
        return Prediction(candidates, None, None, hidden)
    actual = float(distribution[actual_id])
    return Prediction(candidates, actual, int((distribution > actual).sum()) + 1, hidden)


def bilm_reading(encoder: ElmoEncoder, text: str, top_k: int = TOP_K, hide_vulgar: bool = True) -> BiLMReading:
    """Forward and backward LM predictions of every token of ``text`` (see the module docstring).

    Token k (between [CLS] and [SEP]) is predicted by the forward LM from position k-1 and by the backward
    LM from position k+1, as ``BiLM.lm_losses`` trains them. A vulgar completion is judged with the context
    each direction has read (the left part, or the right part).
    """
    text = check_sentence(text)
    ids, offsets, following, preceding = encoder.language_model(text)
    tokens = encoder.tokenizer.convert_ids_to_tokens(ids)
    unknown = encoder.tokenizer.unk_token_id
    inner = range(1, len(ids) - 1)
    if not inner:
        raise LabError("empty_input")  # nothing but characters the tokenizer drops
    forward: list[Prediction] = []
    backward: list[Prediction] = []
    for k in inner:
        start, end = offsets[k]
        for out, distribution, before, after in ((forward, following[k - 1], text[:start], ""),
                                                 (backward, preceding[k + 1], "", text[end:])):
            distribution = distribution.astype(np.float64)
            chosen, hidden = top_candidates(encoder, distribution, top_k, before, after, hide_vulgar)
            out.append(_prediction(chosen, hidden, distribution, None if ids[k] == unknown else ids[k]))
    spans = [(offsets[k][0], offsets[k][1]) for k in inner]
    return BiLMReading(text, [tokens[k] for k in inner], spans, forward, backward)


def masked_reading(encoder: BertEncoder, text: str, span: tuple[int, int], token: str, top_k: int = TOP_K,
                   hide_vulgar: bool = True) -> Prediction:
    """BERT's prediction of the token ``token`` at character ``span`` of ``text``, replaced by one [MASK]:
    the context on both sides is visible. ``actual`` is None when ``token`` is not in BERT's vocabulary."""
    return masked_readings(encoder, text, (span,), (token,), top_k, hide_vulgar)[0]


def masked_readings(encoder: BertEncoder, text: str, spans: tuple[tuple[int, int], ...], tokens: tuple[str, ...],
                    top_k: int = TOP_K, hide_vulgar: bool = True) -> list[Prediction]:
    """:func:`masked_reading` of every token (``spans`` and ``tokens`` as in a :class:`BiLMReading`), one
    [MASK] at a time, all in one batched forward pass."""
    text = check_sentence(text)
    masked = [text[:start] + encoder.mask_token + text[end:] for start, end in spans]
    predictions = []
    for result, token in zip(fill_masks(encoder, masked, top_k=top_k, hide_vulgar=hide_vulgar), tokens):
        slot = result.masks[0]
        actual_id = encoder.vocab.get(token)
        if actual_id == encoder.tokenizer.unk_token_id:
            actual_id = None
        predictions.append(_prediction(slot.candidates, slot.hidden, slot.probabilities, actual_id))
    return predictions


def shown_candidates(prediction: Prediction, token: str, k: int) -> tuple[list[str], list[float], int | None]:
    """The top ``k`` candidates of ``prediction`` as (tokens, probabilities, index of the real ``token`` among them),
    the real token appended last when it is not among them: a chart of the top k alone hides how far off the
    model was (苹 after 我吃了一个: 0.5 %, rank 26). The index is None when the model does not know the token."""
    tokens = [c.token for c in prediction.candidates[:k]]
    scores = [c.score for c in prediction.candidates[:k]]
    if prediction.actual is None:
        return tokens, scores, None
    if token not in tokens:
        tokens.append(token)
        scores.append(prediction.actual)
    return tokens, scores, tokens.index(token)


def surer_positions(left: list[Prediction], masked: list[Prediction]) -> tuple[list[int], list[int]]:
    """(the positions where the masked prediction gives the real token a higher probability than the
    left-to-right one, the other positions): a token outside either vocabulary has no probability and is
    in neither list."""
    surer: list[int] = []
    other: list[int] = []
    for k, (a, b) in enumerate(zip(left, masked)):
        if a.actual is not None and b.actual is not None:
            (surer if b.actual > a.actual else other).append(k)
    return surer, other


# ---- shallow concatenation vs deep bidirectionality --------------------------------------------------
@dataclass
class RightContextMovement:
    """How far the vectors of the shared beginning moved when only the text after it changed.

    Each array is (layers, tokens) for one metric: layer 0 is the input layer (ELMo's token layer,
    context-independent; BERT's embeddings, which depend on the position, not on the other tokens).
    ``elmo_forward`` / ``elmo_backward`` are the two halves of ELMo's h_{k,j} = [forward_j; backward_j].
    """

    text_a: str
    text_b: str
    shared: str  # the common beginning, in characters
    tokens: list[str]  # the tokens measured: inside ``shared`` and tokenized alike in all four encodings
    elmo_forward: dict[str, np.ndarray]
    elmo_backward: dict[str, np.ndarray]
    bert: dict[str, np.ndarray]

    def _moves(self, part: str, metric: str, first_layer: int, token: int | None) -> np.ndarray:
        moves = getattr(self, part)[metric][first_layer:]
        return moves if token is None else moves[:, token]

    def largest(self, part: str, metric: str = "cosine", first_layer: int = 1, token: int | None = None) -> float:
        """The largest movement of ``part`` ("elmo_forward", "elmo_backward", "bert") from ``first_layer`` up, over
        every token or of ``token`` alone."""
        return float(self._moves(part, metric, first_layer, token).max())

    def smallest(self, part: str, metric: str = "cosine", first_layer: int = 1, token: int | None = None) -> float:
        """The smallest movement of ``part`` over every layer from ``first_layer`` up, every token or ``token``."""
        return float(self._moves(part, metric, first_layer, token).min())


@dataclass(frozen=True)
class DeepReading:
    """What two sentences with a shared beginning show for one shared token (or every one): ``verdict`` "deep" when
    ELMo's forward half did not move at any layer (it never reads to the right) while BERT's vector did at every
    layer from 1 up (every layer reads both sides), the lecture's contrast; "other" when this measurement does not
    show it."""

    forward: float  # the largest movement of ELMo's forward half, over every layer
    backward: float  # the smallest movement of ELMo's backward half, layer 1 up
    bert: float  # the smallest movement of BERT's vectors, layer 1 up
    verdict: str


UNMOVED = 1e-6  # below this a movement is float noise: identical inputs give exactly 0 (:func:`movement`)


def deep_reading(moved: RightContextMovement, metric: str = "cosine", token: int | None = None) -> DeepReading:
    """The plain reading of :func:`right_context_movement`'s result for ``token`` (None: every shared token): the
    objectives page's answer and ②'s three figures, one computation for both."""
    forward = moved.largest("elmo_forward", metric, first_layer=0, token=token)
    bert = moved.smallest("bert", metric, token=token)
    return DeepReading(forward, moved.smallest("elmo_backward", metric, token=token), bert,
                       "deep" if forward <= UNMOVED < bert else "other")


def check_pair(text_a: str | None, text_b: str | None) -> tuple[str, str]:
    """Both sentences checked; LabError same_text / no_shared_prefix when there is nothing to compare."""
    text_a, text_b = check_sentence(text_a), check_sentence(text_b)
    if text_a == text_b:
        raise LabError("same_text")
    if not os.path.commonprefix([text_a, text_b]).strip():
        raise LabError("no_shared_prefix")
    return text_a, text_b


def _spans(encoding: Encoding, limit: int) -> dict[tuple[int, int], tuple[int, str]]:
    """(start, end) -> (index, token) of the non-special tokens that lie within the first ``limit`` characters."""
    return {(span[0], span[1]): (i, token) for i, (token, span, special) in
            enumerate(zip(encoding.tokens, encoding.offsets, encoding.special))
            if not special and span[1] > span[0] and span[1] <= limit}


def movement(u: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """Row-wise movement from ``u`` to ``v`` (…, dim): 1 − cos (as ½‖u/‖u‖ − v/‖v‖‖², which is exactly 0
    for identical vectors) and the relative distance ‖u − v‖ / ‖u‖."""
    u, v = u.astype(np.float64), v.astype(np.float64)
    nu = np.linalg.norm(u, axis=-1, keepdims=True)
    nv = np.linalg.norm(v, axis=-1, keepdims=True)
    unit_u, unit_v = u / np.where(nu == 0, 1, nu), v / np.where(nv == 0, 1, nv)
    return {"cosine": 0.5 * np.sum((unit_u - unit_v) ** 2, axis=-1),
            "l2": np.linalg.norm(u - v, axis=-1) / np.where(nu[..., 0] == 0, 1, nu[..., 0])}


def right_context_movement(elmo_pair: Sequence[Encoding], bert_pair: Sequence[Encoding]
                           ) -> RightContextMovement:
    """The movement of every shared token, per layer, between the two encodings of each model.

    ``elmo_pair`` / ``bert_pair``: the encodings (``Encoder.encode``) of the same two sentences, whose
    beginnings agree (:func:`check_pair`). A token is measured when its span lies inside the common
    beginning and all four encodings have a token with that span.
    """
    elmo_a, elmo_b = elmo_pair
    bert_a, bert_b = bert_pair
    if elmo_a.text != bert_a.text or elmo_b.text != bert_b.text:
        raise ValueError("the ELMo and BERT encodings must be of the same two sentences")
    shared = os.path.commonprefix([elmo_a.text, elmo_b.text])
    maps = [_spans(encoding, len(shared)) for encoding in (elmo_a, elmo_b, bert_a, bert_b)]
    spans = sorted(set(maps[0]).intersection(*maps[1:]))
    if not spans:
        raise LabError("no_shared_prefix")
    index = [[m[span][0] for span in spans] for m in maps]
    half = elmo_a.layers.shape[-1] // 2  # ELMo's layers are [forward; backward] (layer 0: [x; x])
    ea, eb = elmo_a.layers[:, index[0]], elmo_b.layers[:, index[1]]
    return RightContextMovement(
        text_a=elmo_a.text, text_b=elmo_b.text, shared=shared, tokens=[maps[0][span][1] for span in spans],
        elmo_forward=movement(ea[..., :half], eb[..., :half]),
        elmo_backward=movement(ea[..., half:], eb[..., half:]),
        bert=movement(bert_a.layers[:, index[2]], bert_b.layers[:, index[3]]),
    )


def measure_right_context(elmo: ElmoEncoder, bert: BertEncoder, text_a: str, text_b: str) -> RightContextMovement:
    """:func:`right_context_movement` of two sentences, encoded here (the CLI and the tests)."""
    text_a, text_b = check_pair(text_a, text_b)
    return right_context_movement(tuple(elmo.encode([text_a, text_b])), tuple(bert.encode([text_a, text_b])))
