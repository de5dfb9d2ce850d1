"""Vectors from any BERT-family checkpoint a researcher has (issue #55 item 1): an encoder saved alone, a fine-tune
with a task head, a vocabulary padded beyond its tokenizer. Fill-mask still needs the MLM head and says so."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from core.guard.errors import LabError
from core.interface import api

SENTENCES = ["我吃了一个苹果。", "苹果昨天发布了新手机。"]


def _reference_layers(directory, sentence: str) -> np.ndarray:
    """Every hidden state of ``sentence`` straight from transformers' BertModel (the encoder alone)."""
    from transformers import BertModel, BertTokenizerFast

    model = BertModel.from_pretrained(str(directory), attn_implementation="eager").eval()
    tokenizer = BertTokenizerFast.from_pretrained(str(directory))
    with torch.inference_mode():
        out = model(**tokenizer(sentence, return_tensors="pt"), output_hidden_states=True)
    return torch.stack(out.hidden_states)[:, 0].numpy()


@pytest.fixture(scope="module")
def saved(tmp_path_factory, tiny_bert_dir):
    """The tiny BERT saved three ways: encoder only, with a 3-label classifier, with 3 padded vocabulary rows."""
    from transformers import BertForPreTraining, BertForSequenceClassification, BertModel

    root = tmp_path_factory.mktemp("checkpoints")
    tokenizer_files = [p for p in tiny_bert_dir.iterdir() if p.name not in ("model.safetensors", "config.json")]
    paths = {}
    for name, build in (("encoder", lambda: BertModel.from_pretrained(str(tiny_bert_dir))),
                        ("classifier", lambda: BertForSequenceClassification.from_pretrained(str(tiny_bert_dir),
                                                                                             num_labels=3))):
        build().save_pretrained(root / name, safe_serialization=True)
        for file in tokenizer_files:
            shutil.copy(file, root / name / file.name)
        paths[name] = root / name
    padded = BertForPreTraining.from_pretrained(str(tiny_bert_dir))
    padded.resize_token_embeddings(padded.config.vocab_size + 3)
    padded.save_pretrained(root / "padded", safe_serialization=True)
    for file in tokenizer_files:
        shutil.copy(file, root / "padded" / file.name)
    paths["padded"] = root / "padded"
    return paths


@pytest.mark.parametrize("kind", ["encoder", "classifier"])
def test_a_checkpoint_without_the_mlm_head_gives_its_vectors(clean_model_cache, saved, tiny_bert_dir, kind):
    """Both were refused as ``weights_incomplete`` (cls.predictions.* missing); their vectors are the encoder's."""
    tokens = api.token_vectors(str(saved[kind]), SENTENCES[:1])
    np.testing.assert_allclose(tokens.sentences[0].layers, _reference_layers(tiny_bert_dir, SENTENCES[0]),
                               atol=1e-5)
    words = api.embed(str(saved[kind]), SENTENCES, "苹果")
    assert len(words.occurrences) == 2 and words.stacked().shape == (3, 2, 32)
    assert api.sentence_vectors(str(saved[kind]), SENTENCES, "cls").vectors.shape == (3, 2, 32)
    assert api.attentions(str(saved[kind]), SENTENCES[0]).att.shape[:2] == (2, 2)


@pytest.mark.parametrize("kind", ["encoder", "classifier"])
def test_fill_mask_without_the_mlm_head_says_why_in_both_languages(clean_model_cache, saved, kind):
    with pytest.raises(LabError) as info:
        api.fill_mask(str(saved[kind]), "我吃了一个[MASK]果。")
    assert info.value.code == "no_mlm_head"
    assert "fill-mask needs a masked language model" in info.value.message("en")
    assert "填空需要掩码语言模型" in info.value.message("zh")


def test_a_padded_vocabulary_loads_and_fill_mask_offers_only_real_tokens(clean_model_cache, saved, tiny_bert_dir):
    """vocab_size = tokenizer + 3 was ``vocab_mismatch``; the padded rows have no token, so fill-mask's
    distribution covers the tokenizer's tokens only."""
    tokens = api.token_vectors(str(saved["padded"]), SENTENCES[:1])
    np.testing.assert_allclose(tokens.sentences[0].layers, _reference_layers(tiny_bert_dir, SENTENCES[0]),
                               atol=1e-5)
    encoder = api.load(str(saved["padded"]))
    assert encoder.model.config.vocab_size == len(encoder.tokenizer) + 3
    slot = api.fill_mask(encoder, "我吃了一个[MASK]果。").masks[0]
    assert slot.probabilities.shape == (len(encoder.tokenizer),)
    assert abs(slot.probabilities.sum() - 1) < 1e-5
    assert all(isinstance(c.token, str) for c in slot.candidates)
