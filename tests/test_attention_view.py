"""core/attention/view.py: every row sums to 1 after every option (tiny BERT and mini-bert-zh)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from core.attention.maths import drop_tokens, rollout
from core.attention.view import (
    MAX_CHARS,
    PAIR_JOINER,
    AttentionView,
    attention_result,
    attention_view,
    encode_pair,
    inspect_text,
)
from core.guard.errors import LabError
from core.models.cache import load_encoder
from core.models.catalogue import list_models

OPTIONS = list(itertools.product([False, True], [False, True]))  # (hide_special, word_level)


def _mini_bert():
    info = next((m for m in list_models() if m.name == "mini-bert-zh"), None)
    if info is None or not info.available:
        pytest.skip("mini-bert-zh is not available here")
    return load_encoder("mini-bert-zh")


def _assert_rows_sum_to_one(view: AttentionView) -> None:
    n = len(view.labels)
    L, H = view.num_layers, view.num_heads
    assert view.att.shape == (L, H, n, n)
    assert view.head_avg.shape == view.rollout.shape == (L, n, n)
    for name in ("att", "head_avg", "rollout"):
        matrix = getattr(view, name)
        assert np.all(matrix >= 0), name
        np.testing.assert_allclose(matrix.sum(axis=-1), 1.0, atol=1e-6, err_msg=name)


@pytest.mark.parametrize(("hide", "words"), OPTIONS)
def test_rows_sum_to_one_tiny(tiny_bert, hide, words):
    encoding = tiny_bert.encode(["我吃了一个苹果，苹果很好。"], attentions=True)[0]
    view = attention_view(encoding, hide_special=hide, word_level=words)
    _assert_rows_sum_to_one(view)
    assert view.num_layers == 2 and view.num_heads == 2
    assert ("[CLS]" in view.labels) == (not hide) and ("[SEP]" in view.labels) == (not hide)
    if words:
        assert "苹果" in view.labels and "我" in view.labels
        assert all(len(g) >= 1 for g in view.groups)
    else:
        assert view.labels == [tok for tok, s in zip(encoding.tokens, encoding.special) if not (hide and s)]


@pytest.mark.realmodel
@pytest.mark.parametrize(("hide", "words"), OPTIONS)
def test_rows_sum_to_one_mini_bert(hide, words):
    encoder = _mini_bert()
    encoding = encoder.encode(["苹果昨天发布了新手机，我吃了一个苹果。"], attentions=True)[0]
    view = attention_view(encoding, hide_special=hide, word_level=words)
    _assert_rows_sum_to_one(view)
    assert view.num_layers == 4 and view.num_heads == 4


def test_plain_view_is_the_raw_attention(tiny_bert):
    encoding = tiny_bert.encode(["今天天气很好。"], attentions=True)[0]
    view = attention_view(encoding)
    np.testing.assert_allclose(view.att, encoding.attentions, atol=1e-7)
    np.testing.assert_allclose(view.head_avg, encoding.attentions.mean(axis=1), atol=1e-7)
    np.testing.assert_allclose(view.rollout, rollout(encoding.attentions), atol=1e-9)
    assert view.groups == [[i] for i in range(len(encoding.tokens))]
    assert view.special == encoding.special


def test_hidden_specials_renormalise_and_rollout_uses_full_sequence(tiny_bert):
    encoding = tiny_bert.encode(["今天天气很好。"], attentions=True)[0]
    view = attention_view(encoding, hide_special=True)
    keep = ~np.array(encoding.special)
    np.testing.assert_allclose(view.att, drop_tokens(encoding.attentions, keep), atol=1e-9)
    np.testing.assert_allclose(view.head_avg, view.att.mean(axis=1), atol=1e-12)
    # rollout over the full sequence first, then reduced (the model does attend to [CLS]/[SEP])
    np.testing.assert_allclose(view.rollout, drop_tokens(rollout(encoding.attentions), keep), atol=1e-9)
    assert not any(view.special)


def test_word_level_groups_cover_the_words(tiny_bert):
    encoding = tiny_bert.encode(["他背着包袱去北京。"], attentions=True)[0]
    view = attention_view(encoding, word_level=True, hide_special=True)
    words = ["".join(encoding.tokens[i] for i in g) for g in view.groups]
    assert words == view.labels
    assert "".join(view.labels) == "他背着包袱去北京。"
    assert "包袱" in view.labels and "北京" in view.labels


def test_find_label_follows_a_token_between_characters_and_words(tiny_bert):
    encoding = tiny_bert.encode(["他背着包袱去北京。"], attentions=True)[0]
    chars, words = attention_view(encoding), attention_view(encoding, word_level=True)
    assert chars.labels[chars.find_label("袱")] == "袱"
    assert words.labels[words.find_label("袱")] == "包袱"  # the word that contains the character
    assert chars.labels[chars.find_label("北京")] == "北"  # the first character inside the word
    first_ordinary = chars.special.index(False)
    assert chars.find_label("[CLS]") == 0 and chars.find_label("不在句中") == first_ordinary
    assert chars.find_label(None) == first_ordinary


def test_pair_encoding(tiny_bert):
    first, second = "苹果发布了新手机。", "我吃了一个苹果。"
    encoding = encode_pair(tiny_bert, first, second)
    assert encoding.text == first + PAIR_JOINER + second
    assert encoding.tokens.count("[SEP]") == 2 and encoding.tokens[0] == "[CLS]"
    for token, (start, end), special in zip(encoding.tokens, encoding.offsets, encoding.special):
        if not special:
            assert encoding.text[start:end] == token
    n = len(encoding.tokens)
    assert encoding.attentions.shape == (2, 2, n, n)
    assert encoding.layers.shape[:2] == (3, n)
    for hide, words in OPTIONS:
        view = attention_view(encoding, hide_special=hide, word_level=words)
        _assert_rows_sum_to_one(view)
        if words and not hide:
            assert view.labels.count("苹果") == 2 and view.labels.count("[SEP]") == 2


@pytest.mark.realmodel
@pytest.mark.parametrize("hide, words", OPTIONS)
def test_attention_result_is_the_page_s_one_call(hide, words):
    """The checked text, its notes and its view in one call, on mini-bert-zh: a pair is encoded in pair mode,
    an empty pair box is no pair, and what the model cannot see is named."""
    encoder = _mini_bert()
    first, second = "苹果昨天发布了新手机。", "我吃了一个苹果🍎。"
    result = attention_result(encoder, first, second)
    expected = attention_view(encode_pair(encoder, first, second), hide_special=hide, word_level=words)
    assert result.view(hide, words).labels == expected.labels
    np.testing.assert_allclose(result.view(hide, words).att, expected.att, atol=1e-6)
    assert result.notes == inspect_text(encoder, first + PAIR_JOINER + second) and result.notes.unknown == ["🍎"]
    alone = attention_result(encoder, f"  {first} ", "  ")
    assert alone.notes.empty and alone.view(hide, words).labels == attention_view(
        encoder.encode([first], attentions=True)[0], hide_special=hide, word_level=words).labels


@pytest.mark.parametrize("sentence, pair, code", [("   ", "", "empty_input"), ("好" * (MAX_CHARS + 1), "", "too_long"),
                                                  ("今天天气很好。", "好" * (MAX_CHARS + 1), "too_long")])
def test_attention_result_refuses_bad_text(tiny_bert, sentence, pair, code):
    with pytest.raises(LabError) as info:
        attention_result(tiny_bert, sentence, pair)
    assert info.value.code == code


def test_pair_encoding_too_long(tiny_bert):
    with pytest.raises(LabError) as info:
        encode_pair(tiny_bert, "今天天气很好" * 6, "我吃了一个苹果" * 5)
    assert info.value.code == "too_many_tokens"


def test_attention_view_guards(tiny_bert):
    encoding = tiny_bert.encode(["今天天气很好。"], attentions=False)[0]
    with pytest.raises(ValueError, match="attentions=True"):
        attention_view(encoding)
    encoding = tiny_bert.encode(["今天天气很好。"], attentions=True)[0]
    broken = encoding.attentions.copy()
    broken[0, 0, 0, 0] += 0.5
    encoding.attentions = broken
    with pytest.raises(ValueError, match="sum to 1"):
        attention_view(encoding)
    encoding.attentions = encoding.attentions[0]
    with pytest.raises(ValueError):
        attention_view(encoding)


def test_only_special_tokens_left(tiny_bert):
    encoding = tiny_bert.encode(["\x00\x01"], attentions=True)[0]  # the tokenizer drops control characters
    assert encoding.tokens == ["[CLS]", "[SEP]"]
    for hide, words in OPTIONS:
        with pytest.raises(LabError) as info:
            attention_view(encoding, hide_special=hide, word_level=words)
        assert info.value.code == "empty_input"


def test_inspect_text(tiny_bert):
    notes = inspect_text(tiny_bert, "我吃犇犇\x07了鱻，好\u200b\n")
    assert notes.unknown == ["犇", "鱻"]  # unique, in order
    assert notes.control == ["U+0007", "U+200B"]  # newline is allowed
    assert inspect_text(tiny_bert, "今天天气很好。").empty
    assert inspect_text(tiny_bert, "").empty
    assert inspect_text(tiny_bert, "今天[MASK]好").empty  # [MASK] is a special token, not unknown
