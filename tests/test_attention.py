import numpy as np
import pytest

from core.attention.maths import (
    aggregate_words,
    check_attention,
    drop_tokens,
    head_average,
    rollout,
    word_groups,
)


def _random_attention(layers: int = 3, heads: int = 4, n: int = 5, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(layers, heads, n, n)) * 3
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def test_check_attention_accepts_and_converts():
    att = _random_attention()
    checked = check_attention(att)
    assert checked.dtype == np.float64 and checked.shape == att.shape
    assert check_attention(att[0]).shape == (4, 5, 5)
    assert check_attention(np.eye(3)).shape == (3, 3)


@pytest.mark.parametrize(
    ("att", "message"),
    [
        (np.ones(3) / 3, "shape"),
        (np.ones((1, 1, 1, 2, 2)) / 2, "shape"),
        (np.ones((2, 3)) / 3, "square"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), "non-negative"),
        (np.array([[0.5, 0.4], [0.5, 0.5]]), "sum to 1"),
    ],
)
def test_check_attention_rejects(att, message):
    with pytest.raises(ValueError, match=message):
        check_attention(att)


def test_head_average():
    att = _random_attention()
    averaged = head_average(att)
    assert averaged.shape == (3, 5, 5)
    assert np.allclose(averaged[1], att[1].astype(np.float64).mean(axis=0))
    with pytest.raises(ValueError, match="layers, heads"):
        head_average(att[0])


def test_rollout_rows_sum_to_one():
    result = rollout(_random_attention(layers=6, n=7))
    assert result.shape == (6, 7, 7)
    assert np.allclose(result.sum(axis=-1), 1.0, rtol=0.0, atol=1e-9)
    assert np.all(result >= 0)


def test_rollout_hand_computed():
    a0 = np.array([[0.0, 1.0], [1.0, 0.0]])
    a1 = np.array([[1.0, 0.0], [1.0, 0.0]])
    att = np.stack([np.stack([a0, a0]), np.stack([a1, a1])])  # (2 layers, 2 heads, 2, 2)
    result = rollout(att, residual=0.5)
    m0 = 0.5 * np.eye(2) + 0.5 * a0
    m1 = 0.5 * np.eye(2) + 0.5 * a1
    assert np.allclose(result[0], m0)
    assert np.allclose(result[1], m1 @ m0)
    assert np.allclose(result[1], [[0.5, 0.5], [0.5, 0.5]])
    # residual=1 ignores attention entirely; residual=0 is the plain product of head means.
    assert np.allclose(rollout(att, residual=1.0), np.eye(2))
    assert np.allclose(rollout(att, residual=0.0)[1], a1 @ a0)
    with pytest.raises(ValueError, match="residual"):
        rollout(att, residual=1.5)


def test_drop_tokens_removes_indices_and_renormalises():
    att = np.arange(1.0, 17.0).reshape(4, 4)
    att /= att.sum(axis=-1, keepdims=True)
    keep = [False, True, True, False]
    dropped = drop_tokens(att, keep)
    kept = att[1:3, 1:3]
    assert dropped.shape == (2, 2)
    assert np.allclose(dropped, kept / kept.sum(axis=-1, keepdims=True))
    assert np.allclose(dropped.sum(axis=-1), 1.0)


def test_drop_tokens_leading_axes_and_zero_rows():
    att = _random_attention()
    dropped = drop_tokens(att, np.array([False, True, True, True, False]))
    assert dropped.shape == (3, 4, 3, 3)
    assert np.allclose(dropped.sum(axis=-1), 1.0)
    only_cls = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])
    assert np.allclose(drop_tokens(only_cls, [False, True, True]), [[0.5, 0.5], [0.5, 0.5]])


def test_drop_tokens_rejects_bad_mask():
    with pytest.raises(ValueError, match="keep_mask"):
        drop_tokens(np.eye(3), [1, 0, 1])
    with pytest.raises(ValueError, match="keep_mask"):
        drop_tokens(np.eye(3), [True, False])
    with pytest.raises(ValueError, match="every token"):
        drop_tokens(np.eye(3), [False, False, False])


def test_aggregate_words_hand_built():
    att = np.array(
        [
            [0.1, 0.2, 0.3, 0.4],
            [0.4, 0.3, 0.2, 0.1],
            [0.25, 0.25, 0.25, 0.25],
            [0.0, 0.5, 0.5, 0.0],
        ]
    )
    # Word A = tokens {0, 1}, word B = token {2}; token 3 belongs to no word and is dropped.
    words = aggregate_words(att, [[0, 1], [2]])
    # FROM A: mean of rows 0,1 = [0.25, 0.25, 0.25, 0.25] → TO A = 0.5, TO B = 0.25 → renormalised.
    # FROM B: row 2 → TO A = 0.5, TO B = 0.25 → renormalised.
    assert np.allclose(words, [[2 / 3, 1 / 3], [2 / 3, 1 / 3]], rtol=0.0, atol=1e-12)
    # Without dropping any token, rows already sum to 1 and nothing is rescaled.
    full = aggregate_words(att, [[0, 1], [2, 3]])
    assert np.allclose(full, [[0.5, 0.5], [0.5, 0.5]])
    # Groups may come in any order; the word axis follows the group order.
    reordered = aggregate_words(att, [[3], [0], [1, 2]])
    expected = [[0.0, 0.0, 1.0], [0.4, 0.1, 0.5], [0.175, 0.325, 0.5]]
    assert np.allclose(reordered, expected, rtol=0.0, atol=1e-12)


def test_aggregate_words_leading_axes():
    att = _random_attention()
    words = aggregate_words(att, [[0], [1, 2], [3, 4]])
    assert words.shape == (3, 4, 3, 3)
    assert np.allclose(words.sum(axis=-1), 1.0)
    expected = att[2, 1].astype(np.float64)[[1, 2]].mean(axis=0)
    assert np.allclose(words[2, 1, 1], [expected[0], expected[1] + expected[2], expected[3] + expected[4]])


def test_aggregate_words_rejects_bad_groups():
    with pytest.raises(ValueError, match="disjoint"):
        aggregate_words(np.eye(3), [[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="outside"):
        aggregate_words(np.eye(3), [[0, 3]])
    with pytest.raises(ValueError, match="empty"):
        aggregate_words(np.eye(3), [[0], []])


def test_word_groups_chinese_characters():
    text = "我吃了一个苹果"
    tokens = ["[CLS]", *text, "[SEP]"]
    offsets = [(0, 0)] + [(i, i + 1) for i in range(len(text))] + [(0, 0)]
    special = [True] + [False] * len(text) + [True]
    labels, groups = word_groups(text, tokens, offsets, special)
    assert labels == ["[CLS]", "我", "吃", "了", "一个", "苹果", "[SEP]"]
    assert groups == [[0], [1], [2], [3], [4, 5], [6, 7], [8]]


def test_word_groups_skips_spaces_and_merges_straddling_tokens():
    text = "ab cd"
    # Hypothetical tokens "a", "b cd" → the second straddles the space and "cd".
    tokens = ["[CLS]", "a", "b cd", "[SEP]"]
    offsets = [(0, 0), (0, 1), (1, 5), (0, 0)]
    labels, groups = word_groups(text, tokens, offsets, [True, False, False, True])
    assert labels == ["[CLS]", "ab cd", "[SEP]"]
    assert groups == [[0], [1, 2], [3]]
    with pytest.raises(ValueError, match="same length"):
        word_groups(text, tokens, offsets[:-1], [True, False, False, True])
