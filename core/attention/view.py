"""What the attention page shows, computed once from one :class:`~core.models.encoders.Encoding`.

``attention_view(encoding, hide_special, word_level)`` turns the raw attention of every layer and
head into the matrices the page slices:

- ``att``: (layers, heads, n, n), one row per query token (or word), each row summing to 1;
- ``head_avg``: (layers, n, n), the mean of the heads shown in ``att``;
- ``rollout``: (layers, n, n), attention rollout (Abnar & Zuidema, 2020) computed on the FULL
  token sequence (the model really attends to [CLS]/[SEP]), then reduced in the same way.

The reductions are ``core.attention.maths.drop_tokens`` (hide [CLS]/[SEP], rows renormalised) and
``core.attention.maths.aggregate_words`` over jieba words (Clark et al., 2019: from a word = mean of its
tokens' rows, to a word = sum of its tokens' columns), so every row still sums to 1.

``attention_result(encoder, sentence, pair)`` is the attention page's one core call: the checked text, what the
model cannot see in it, and its encoding, whose ``view(hide_special, word_level)`` the toggles choose.

Also here, shared by both BERT pages: ``encode_pair`` (a sentence pair through the tokenizer's
pair mode) and ``inspect_text`` (which characters the model does not know, control characters).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..guard.errors import LabError
from ..guard.validation import check_text
from ..models.encoders import Encoding
from .maths import aggregate_words, check_attention, drop_tokens, rollout, word_groups

MAX_CHARS = 120  # per sentence on the attention page: beyond this a heatmap is unreadable anyway
PAIR_JOINER = "\n"  # joins the two sentences of a pair in Encoding.text; covered by no token


@dataclass
class AttentionView:
    """What :func:`core.interface.api.attentions` returns: ``att`` ``(num_layers, num_heads, n, n)`` (row = from, column
    = to, rows sum to 1), its head average ``head_avg`` and the ``rollout`` ``(num_layers, n, n)``, and the n
    ``labels`` (tokens, or jieba words with ``word_level``)."""

    labels: list[str]  # one per row/column: tokens, or jieba words ([CLS]/[SEP] keep their token)
    att: np.ndarray  # (layers, heads, n, n), rows sum to 1
    head_avg: np.ndarray  # (layers, n, n), rows sum to 1
    rollout: np.ndarray  # (layers, n, n), rows sum to 1
    groups: list[list[int]] = field(default_factory=list)  # token indices (into the encoding) per label
    special: list[bool] = field(default_factory=list)  # whether each label is a special token

    @property
    def num_layers(self) -> int:
        return int(self.att.shape[0])

    @property
    def num_heads(self) -> int:
        return int(self.att.shape[1])

    def find_label(self, wanted: str | None) -> int:
        """The row of the label ``wanted``: that label, else the first ordinary label containing it or
        contained in it (苹 ↔ 苹果 when switching characters and words), else the first ordinary label."""
        match = next((i for i, label in enumerate(self.labels) if label == wanted), None)
        if match is None and wanted:
            match = next((i for i, label in enumerate(self.labels)
                          if (wanted in label or label in wanted) and not self.special[i]), None)
        if match is None:
            match = next((i for i, s in enumerate(self.special) if not s), 0)
        return match


@dataclass(frozen=True)
class Reading:
    """Where one token looks at one layer, averaged over the heads: its ``top`` ordinary labels (index, weight),
    strongest first, and the weight it gives to [CLS]/[SEP] (where they are shown)."""
    token: int
    layer: int  # 0-based
    top: list[tuple[int, float]]
    special: float


def read_row(view: AttentionView, token: int, layer: int | None = None, k: int = 3) -> Reading:
    """The head-averaged attention row of ``token`` at ``layer`` (default: the last), read out in words'
    order of strength; [CLS]/[SEP] are set apart, as they draw much attention whatever the sentence."""
    layer = view.num_layers - 1 if layer is None else layer
    row = view.head_avg[layer][token]
    ordinary = sorted((i for i in range(len(view.labels)) if not view.special[i]), key=lambda i: -row[i])
    return Reading(token, layer, [(i, float(row[i])) for i in ordinary[:k]],
                   float(sum(row[i] for i in range(len(view.labels)) if view.special[i])))


def attention_view(encoding: Encoding, hide_special: bool = False, word_level: bool = False,
                   residual: float = 0.5) -> AttentionView:
    """Attention of one encoding, optionally without [CLS]/[SEP] and/or aggregated to jieba words."""
    if encoding.attentions is None:
        raise ValueError("this encoding has no attentions: encode with attentions=True (BERT-family models only)")
    raw = check_attention(encoding.attentions)
    if raw.ndim != 4:
        raise ValueError(f"attention must have shape (layers, heads, n, n), got shape {raw.shape}")
    n = raw.shape[-1]
    if not len(encoding.tokens) == len(encoding.offsets) == len(encoding.special) == n:
        raise ValueError(f"the encoding has {len(encoding.tokens)} tokens but attention over {n}")
    special = [bool(s) for s in encoding.special]
    if all(special):
        raise LabError("empty_input")  # nothing but [CLS]/[SEP] (e.g. the text was only control characters)
    rolled = rollout(raw, residual=residual)

    if word_level:
        labels, groups = word_groups(encoding.text, encoding.tokens, encoding.offsets, special)
    else:
        labels, groups = list(encoding.tokens), [[i] for i in range(n)]
    is_special = [len(g) == 1 and special[g[0]] for g in groups]
    if hide_special:
        kept = [k for k, s in enumerate(is_special) if not s]
        labels, groups, is_special = [labels[k] for k in kept], [groups[k] for k in kept], [False] * len(kept)
    if not groups:
        raise LabError("empty_input")

    if word_level:
        att, rolled = aggregate_words(raw, groups), aggregate_words(rolled, groups)
    elif hide_special:
        keep = np.array([not s for s in special])
        att, rolled = drop_tokens(raw, keep), drop_tokens(rolled, keep)
    else:
        att = raw
    return AttentionView(labels=labels, att=att, head_avg=att.mean(axis=1), rollout=rolled,
                         groups=groups, special=is_special)


def encode_pair(encoder, first: str, second: str) -> Encoding:
    """One sentence pair ``[CLS] first [SEP] second [SEP]`` with every layer's attention.

    Uses the tokenizer's pair mode through ``BertEncoder.forward(texts, pairs, attentions=True)``.
    ``Encoding.text`` is ``first + PAIR_JOINER + second`` and the second sentence's offsets are
    shifted into that text, so ``word_groups`` segments both sentences.
    """
    first, second = check_text(first, MAX_CHARS), check_text(second, MAX_CHARS)
    encoder.check_length(first, second)
    batch, outputs = encoder.forward([first], [second], attentions=True, heads=False)
    ids = batch["input_ids"][0].tolist()
    shift = len(first) + len(PAIR_JOINER)
    sequence_ids = batch.sequence_ids(0)
    offsets = []
    for (start, end), seq in zip(batch["offset_mapping"][0].tolist(), sequence_ids):
        offsets.append((start + shift, end + shift) if seq == 1 and end > start else (start, end))
    hidden = np.stack([h[0].float().numpy() for h in outputs.hidden_states])
    atts = np.stack([a[0].float().numpy() for a in outputs.attentions])
    return Encoding(
        text=first + PAIR_JOINER + second,
        tokens=encoder.tokenizer.convert_ids_to_tokens(ids),
        offsets=offsets,
        special=[bool(s) for s in batch["special_tokens_mask"][0].tolist()],
        layers=hidden,
        attentions=atts,
    )


def encode_text(encoder, first: str, second: str = "") -> Encoding:
    """``first`` alone, or the pair ``first``/``second`` when ``second`` is not empty, with every layer's attention."""
    return encode_pair(encoder, first, second) if second else encoder.encode([first], attentions=True)[0]


@dataclass(frozen=True)
class AttentionResult:
    """What the attention page shows of one sentence (pair): one forward pass, reduced by :meth:`view` as the
    page's toggles ask (numpy only: a toggle never runs the model again)."""
    encoding: Encoding
    notes: TextNotes  # what the model cannot see in the text: [UNK] and control characters

    def view(self, hide_special: bool = False, word_level: bool = False) -> AttentionView:
        return attention_view(self.encoding, hide_special=hide_special, word_level=word_level)


def attention_result(encoder, sentence: str, pair: str = "") -> AttentionResult:
    """The attention page's result: ``sentence`` and the optional ``pair`` checked (LabError for empty or too long
    text), what the model cannot see in them, and their encoding with every layer's attention."""
    first = check_text(sentence, MAX_CHARS)
    second = check_text(pair, MAX_CHARS) if (pair or "").strip() else ""
    notes = inspect_text(encoder, first + (PAIR_JOINER + second if second else ""))
    return AttentionResult(encode_text(encoder, first, second), notes)


@dataclass
class TextNotes:
    unknown: list[str]  # characters/pieces the tokenizer maps to its unknown token, in order, unique
    control: list[str]  # control/format characters (shown as U+XXXX), which tokenizers drop

    @property
    def empty(self) -> bool:
        return not self.unknown and not self.control


_ALLOWED_CONTROL = {"\n", "\t", "\r"}


def inspect_text(encoder, text: str) -> TextNotes:
    """Which parts of ``text`` the model cannot see: [UNK] characters and control characters."""
    text = text or ""
    control = list(dict.fromkeys(
        f"U+{ord(c):04X}" for c in text
        if c not in _ALLOWED_CONTROL and unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs")
    ))
    tokenizer = getattr(encoder, "tokenizer", None)
    unk_id = getattr(tokenizer, "unk_token_id", None)
    unknown: list[str] = []
    if tokenizer is not None and unk_id is not None and text.strip():
        with encoder.gate.tokenize():
            batch = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        for token_id, (start, end) in zip(batch["input_ids"], batch["offset_mapping"]):
            if token_id == unk_id and end > start:
                unknown.append(text[start:end])
    return TextNotes(unknown=list(dict.fromkeys(unknown)), control=control)
