import numpy as np
import pytest

from core.compute.occurrences import find_spans, parse_labelled, word_vectors
from core.guard.errors import LabError


def test_find_spans_chinese_english_and_case():
    assert find_spans("苹果和苹果", "苹果") == [(0, 2), (3, 5)]
    assert find_spans("I like Apple and pineapple", "apple") == [(7, 12)]
    assert find_spans("没有", "苹果") == []


def test_parse_labelled():
    sentences, labels = parse_labelled(["水果|我吃了一个苹果", "", "苹果昨天发布了新手机", "a|"])
    assert sentences == ["我吃了一个苹果", "苹果昨天发布了新手机", "a|"]
    assert labels == ["水果", None, None]


def test_word_vectors_mean_of_covering_tokens(tiny_bert):
    sentences = ["我吃了一个苹果", "没有这个词", "苹果昨天发布了新手机，苹果很好"]
    result = word_vectors(tiny_bert, sentences, "苹果", ["水果", None, "公司"])
    assert result.missing == [1]
    assert [(o.sentence_index, o.start, o.end) for o in result.occurrences] == [(0, 5, 7), (2, 0, 2), (2, 11, 13)]
    first = result.occurrences[0]
    enc = tiny_bert.encode([sentences[0]])[0]
    np.testing.assert_allclose(first.layers, enc.layers[:, first.token_indices].mean(axis=1), atol=1e-6)
    assert first.token_indices == [6, 7] and first.label == "水果"
    assert result.stacked().shape == (tiny_bert.num_layers, 3, 32)


def test_english_word_pieces(tiny_bert):
    result = word_vectors(tiny_bert, ["new iphone today"], "iphone")
    occ = result.occurrences[0]
    enc = tiny_bert.encode(["new iphone today"])[0]
    assert [enc.tokens[i] for i in occ.token_indices] == ["i", "##p", "##h", "##o", "##n", "##e"]


def test_clear_errors(tiny_bert):
    with pytest.raises(LabError) as err:
        word_vectors(tiny_bert, ["我吃了一个苹果"], "  ")
    assert err.value.code == "empty_word"
    with pytest.raises(LabError):
        word_vectors(tiny_bert, [], "苹果")
    with pytest.raises(LabError) as err:
        word_vectors(tiny_bert, ["苹果"] * 201, "苹果")
    assert err.value.code == "too_many_sentences"


def test_word_absent_everywhere_is_not_an_error(tiny_bert):
    result = word_vectors(tiny_bert, ["我吃了", "他来了"], "苹果")
    assert result.occurrences == [] and result.missing == [0, 1]
