"""Reading BERT attention: checks, head averaging, rollout, and token → word aggregation.

Attention rollout (Abnar & Zuidema, 2020), with Ā_l the head mean of layer l and r the weight
given to the residual connection:

    A'_l = rownorm(r · I + (1 − r) · Ā_l),    R_0 = A'_0,    R_l = A'_l · R_{l−1}

Word-level attention (Clark et al., 2019): attention FROM a word is the mean of its tokens'
rows, attention TO a word is the sum of its tokens' columns, so rows still sum to 1.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import jieba
import numpy as np
from numpy.typing import ArrayLike

jieba.setLogLevel(logging.WARNING)  # jieba logs its dictionary loading at INFO

_ROW_SUM_TOLERANCE = 1e-3  # float16/float32 softmax rows drift a little from 1


def _as_square(att: ArrayLike) -> np.ndarray:
    """float64 array of shape (..., n, n) with finite, non-negative entries."""
    a = np.asarray(att, dtype=np.float64)
    if a.ndim < 2:
        raise ValueError(f"attention must have shape (..., n, n), got shape {a.shape}")
    if a.shape[-1] != a.shape[-2] or a.shape[-1] == 0:
        raise ValueError(f"attention must be square over its last two axes, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("attention must be finite")
    if np.any(a < 0):
        raise ValueError(f"attention must be non-negative, got minimum {a.min():.3g}")
    return a


def _normalise_rows(a: np.ndarray) -> np.ndarray:
    """Rows rescaled to sum to 1; all-zero rows become uniform (no evidence either way)."""
    sums = a.sum(axis=-1, keepdims=True)
    uniform = np.full_like(a, 1.0 / a.shape[-1])
    return np.where(sums > 0, a / np.where(sums > 0, sums, 1.0), uniform)


def check_attention(att: ArrayLike) -> np.ndarray:
    """Validate attention of shape (layers, heads, n, n), (heads, n, n) or (n, n); return float64."""
    a = _as_square(att)
    if a.ndim > 4:
        raise ValueError(
            f"attention must have shape (layers, heads, n, n), (heads, n, n) or (n, n), got shape {a.shape}"
        )
    sums = a.sum(axis=-1)
    if not np.allclose(sums, 1.0, rtol=0.0, atol=_ROW_SUM_TOLERANCE):
        worst = float(sums.flat[np.argmax(np.abs(sums - 1.0))])
        raise ValueError(
            f"attention rows must sum to 1 (each row is a softmax), found a row summing to {worst:.4g}"
        )
    return a


def _check_4d(att: ArrayLike) -> np.ndarray:
    a = check_attention(att)
    if a.ndim != 4:
        raise ValueError(f"attention must have shape (layers, heads, n, n), got shape {a.shape}")
    return a


def head_average(att: ArrayLike) -> np.ndarray:
    """Mean over heads: (layers, heads, n, n) → (layers, n, n)."""
    return _check_4d(att).mean(axis=1)


def rollout(att: ArrayLike, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (layers, n, n): how much each token at layer l draws on each input token."""
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must be in [0, 1], got {residual}")
    averaged = head_average(att)
    identity = np.eye(averaged.shape[-1])
    # The residual connection carries each token's own input forward alongside attention.
    mixed = _normalise_rows(residual * identity + (1.0 - residual) * averaged)
    result = np.empty_like(mixed)
    result[0] = mixed[0]
    for layer in range(1, mixed.shape[0]):
        result[layer] = mixed[layer] @ result[layer - 1]
    return result


def drop_tokens(att: ArrayLike, keep_mask: Sequence[bool] | np.ndarray) -> np.ndarray:
    """Remove the rows and columns of tokens where keep_mask is False (e.g. [CLS], [SEP]).

    Works on any leading axes. Rows are renormalised to 1, so what remains reads as "attention
    among the kept tokens"; a row that attended only to dropped tokens becomes uniform.
    """
    a = _as_square(att)
    keep = np.asarray(keep_mask)
    if keep.dtype != np.bool_ or keep.shape != (a.shape[-1],):
        raise ValueError(
            f"keep_mask must be {a.shape[-1]} booleans (one per token), "
            f"got dtype {keep.dtype} shape {keep.shape}"
        )
    if not keep.any():
        raise ValueError("keep_mask drops every token")
    return _normalise_rows(a[..., keep, :][..., :, keep])


def aggregate_words(att: ArrayLike, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Token attention (..., n, n) → word attention (..., W, W), one word per group of token indices.

    FROM a word: mean of its tokens' rows; TO a word: sum of its tokens' columns. Tokens in no
    group are dropped and rows renormalised to 1 (all-zero rows become uniform).
    """
    a = _as_square(att)
    n = a.shape[-1]
    if not groups:
        raise ValueError("groups must contain at least one word")
    seen: set[int] = set()
    to_word = np.zeros((n, len(groups)))  # column-summing matrix
    from_word = np.zeros((len(groups), n))  # row-averaging matrix
    for w, group in enumerate(groups):
        indices = [int(i) for i in group]
        if not indices:
            raise ValueError(f"group {w} is empty; every word needs at least one token")
        if any(not 0 <= i < n for i in indices):
            raise ValueError(f"group {w} has token indices {indices} outside [0, {n - 1}]")
        if seen.intersection(indices) or len(set(indices)) != len(indices):
            raise ValueError(f"group {w} repeats token indices {indices}; groups must be disjoint")
        seen.update(indices)
        to_word[indices, w] = 1.0
        from_word[w, indices] = 1.0 / len(indices)
    return _normalise_rows(from_word @ a @ to_word)


def word_groups(
    text: str,
    tokens: Sequence[str],
    token_offsets: Sequence[tuple[int, int]],
    special_mask: Sequence[bool],
) -> tuple[list[str], list[list[int]]]:
    """Words of ``text`` (jieba segmentation) and the token indices that make up each one.

    A token belongs to every word whose character span its offsets (start, end) overlap; if one
    token straddles two words they are merged into one, so the groups stay disjoint. Special
    tokens are their own group, labelled by their token string. Words covered by no token
    (spaces) are skipped, as are non-special tokens with empty offsets. Groups are in token order.
    """
    if not len(tokens) == len(token_offsets) == len(special_mask):
        raise ValueError(
            f"tokens ({len(tokens)}), token_offsets ({len(token_offsets)}) and special_mask "
            f"({len(special_mask)}) must have the same length"
        )
    # (label, start char, token indices) for each word, in text order.
    words: list[tuple[str, int, list[int]]] = []
    start = 0
    for word in jieba.lcut(text):
        end = start + len(word)
        covering = [
            i
            for i, ((s, e), special) in enumerate(zip(token_offsets, special_mask))
            if not special and e > s and s < end and e > start
        ]
        if covering and words and set(covering) & set(words[-1][2]):
            _, prev_start, prev_tokens = words[-1]
            words[-1] = (text[prev_start:end], prev_start, sorted(set(prev_tokens) | set(covering)))
        elif covering:
            words.append((word, start, covering))
        start = end
    entries = [(label, indices) for label, _, indices in words]
    entries += [(tokens[i], [i]) for i, special in enumerate(special_mask) if special]
    entries.sort(key=lambda entry: entry[1][0])
    return [label for label, _ in entries], [indices for _, indices in entries]
