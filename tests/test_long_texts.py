"""Sentences longer than a model takes (issue #55 item 3): read in overlapping windows, the same policy for every
model, every occurrence kept, and said in the results and the CLI summary."""
from __future__ import annotations

import numpy as np
import pytest

from core.__main__ import main
from core.guard.errors import LabError
from core.interface import api

FILLER = "今天天气很好他背着包袱去北京心里的放下说相声"  # 22 characters the tiny vocabulary knows


def _long(word: str = "苹果") -> str:
    """About 150 characters (tiny BERT: 64 positions) with ``word`` at the start, the middle and the end."""
    return word + FILLER * 3 + word + FILLER * 3 + word + "。"


def test_every_occurrence_of_a_long_sentence_is_kept_and_listed(clean_model_cache, tiny_bert_dir):
    """It was ``bad_sentence`` (too_many_tokens): BERT left out what ELMo read, a biased comparison."""
    result = api.embed(str(tiny_bert_dir), [_long(), "我吃了一个苹果。"], "苹果")
    assert [o.sentence_index for o in result.occurrences] == [0, 0, 0, 1]
    assert result.windowed == [0]
    assert np.isfinite(result.stacked()).all()


def test_windows_give_each_token_the_vectors_of_its_most_central_window(clean_model_cache, tiny_bert_dir):
    encoder = api.load(str(tiny_bert_dir))
    sentence = _long()
    tokens = api.token_vectors(encoder, [sentence]).sentences[0]
    width = encoder.max_tokens - 2
    assert tokens.windows > 1 and len(tokens.tokens) == len(sentence) + 2 and tokens.special[0] and tokens.special[-1]
    # characters 0 … width/2 - 1 are read with most context in the first window: the model on its text alone
    first = api.token_vectors(encoder, [sentence[:width]]).sentences[0]
    np.testing.assert_allclose(tokens.layers[:, :width // 2 + 1], first.layers[:, :width // 2 + 1], atol=1e-5)
    # the last characters come from the last window, which ends with the sentence
    last = api.token_vectors(encoder, [sentence[-width:]]).sentences[0]
    np.testing.assert_allclose(tokens.layers[:, -(width // 4):], last.layers[:, -(width // 4):], atol=1e-5)
    assert api.sentence_vectors(encoder, [sentence, "我吃了。"]).windowed == [0]


def test_an_attention_map_still_needs_one_window(clean_model_cache, tiny_bert_dir):
    with pytest.raises(LabError) as info:
        api.attentions(str(tiny_bert_dir), _long())
    assert info.value.code == "too_many_tokens"


def test_the_cli_summary_says_how_long_sentences_were_read(clean_model_cache, tiny_bert_dir, capsys):
    code = main(["embed", "--model", str(tiny_bert_dir), "--word", "苹果", _long(), "我吃了一个苹果。"])
    out, err = capsys.readouterr()
    assert code == 0 and len(out.strip().splitlines()) == 4
    assert "1 sentences longer than" in err and "overlapping windows of 62 tokens, stride 31" in err
