"""core.models.plain_bert, the embedded BERT's forward pass without transformers' modelling modules: every output
against transformers' own BertForPreTraining / BertForMaskedLM on the same checkpoint, the weights' names shared
both ways, and the loader's checks."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import BertForMaskedLM, BertForPreTraining, BertModel, BertTokenizer

from conftest import build_tiny_bert
from core.guard.errors import LabError
from core.models import catalogue, loaders, plain_bert

FIRSTS = ["我吃了一个[MASK]果", "今天天气很好，我们去北京说相声吧"]
SECONDS = ["他背着包袱", "好"]


def _batch(directory):
    tokenizer = BertTokenizer.from_pretrained(str(directory))
    return tokenizer(FIRSTS, SECONDS, padding=True, return_tensors="pt")  # two lengths: padding, and segment B


def _both(directory, reference_class):
    """(plain model, transformers' model) of one checkpoint, in float32 with eager attention."""
    plain, missing = plain_bert.read_checkpoint(directory)
    assert missing == []
    reference = reference_class.from_pretrained(str(directory), attn_implementation="eager", dtype=torch.float32)
    return plain, reference.eval()


def _assert_same(plain_outputs, reference_outputs, names):
    for name in names:
        ours, theirs = plain_outputs[name], reference_outputs[name]
        if isinstance(theirs, tuple):
            assert len(ours) == len(theirs), name
            for mine, other in zip(ours, theirs):
                assert torch.allclose(mine, other, atol=1e-5, rtol=0), name
        else:
            assert torch.allclose(ours, theirs, atol=1e-5, rtol=0), name


@pytest.mark.parametrize("act", ["gelu", "relu", "gelu_new"])
def test_every_output_is_transformers_own(tmp_path, act):
    # weights far from zero (initializer_range), so that each activation's shape shows in the outputs
    directory = build_tiny_bert(tmp_path / act, seed=5, layers=3, heads=4, hidden_act=act, initializer_range=0.5)
    plain, reference = _both(directory, BertForPreTraining)
    batch = _batch(directory)
    assert batch["attention_mask"].min() == 0 and batch["token_type_ids"].max() == 1
    with torch.inference_mode():
        ours = plain(**batch, output_hidden_states=True, output_attentions=True)
        theirs = reference(**batch, output_hidden_states=True, output_attentions=True)
        pooled = reference.bert(**batch).pooler_output
    _assert_same(ours, theirs, ["prediction_logits", "seq_relationship_logits", "hidden_states", "attentions"])
    assert torch.allclose(ours.pooler_output, pooled, atol=1e-5, rtol=0)
    assert len(ours.hidden_states) == 4 and ours.attentions[0].shape == (2, 4, *batch["input_ids"].shape[1:] * 2)


def test_a_masked_lm_without_next_sentence_head(tiny_mlm_dir):
    plain, reference = _both(tiny_mlm_dir, BertForMaskedLM)
    assert plain.cls.seq_relationship is None and plain.bert.pooler is None
    batch = _batch(tiny_mlm_dir)
    with torch.inference_mode():
        ours = plain(**batch, output_hidden_states=True)
        theirs = reference(**batch, output_hidden_states=True)
    assert torch.allclose(ours.prediction_logits, theirs.logits, atol=1e-5, rtol=0)
    _assert_same(ours, theirs, ["hidden_states"])
    assert "seq_relationship_logits" not in ours


def test_the_encoder_weights_move_into_transformers(tiny_bert_dir):
    """The transfer experiment fine-tunes a transformers copy of ``encoder.model.base_model``'s state dict."""
    plain, _ = plain_bert.read_checkpoint(tiny_bert_dir)
    copy = BertModel(plain.config)
    copy.load_state_dict(plain.base_model.state_dict())  # strict: the same names, none missing, none extra
    batch = _batch(tiny_bert_dir)
    with torch.inference_mode():
        assert torch.allclose(copy.eval()(**batch).last_hidden_state, plain.base_model(**batch).last_hidden_state,
                              atol=1e-5, rtol=0)


@pytest.mark.parametrize("change", [{"model_type": "roberta"}, {"position_embedding_type": "relative_key"},
                                    {"is_decoder": True}, {"tie_word_embeddings": False}, {"hidden_act": "silu"}])
def test_a_config_it_does_not_compute_goes_through_transformers(tiny_bert_dir, tmp_path, change):
    directory = shutil.copytree(tiny_bert_dir, tmp_path / "changed")
    assert plain_bert.supported(directory)
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    (directory / "config.json").write_text(json.dumps({**config, **change}), encoding="utf-8")
    assert not plain_bert.supported(directory)


def _rewrite_weights(source, target, edit):
    directory = shutil.copytree(source, target)
    weights = load_file(str(directory / "model.safetensors"))
    edit(weights)
    save_file(weights, str(directory / "model.safetensors"), metadata={"format": "pt"})
    return directory


@pytest.mark.parametrize(("edit", "code", "named"), [
    (lambda w: w.pop("bert.encoder.layer.1.attention.self.key.weight"), "weights_incomplete",
     "layer.1.attention.self.key"),  # missing
    (lambda w: w.update({"bert.encoder.rel_pos.weight": torch.zeros(2)}), "load_failed", "rel_pos"),  # unknown
    (lambda w: w.update({"cls.predictions.bias": torch.zeros(3)}), "load_failed", "cls.predictions.bias"),  # shape
], ids=["missing", "unknown", "wrong-shape"])
def test_weights_that_do_not_fit_the_model_are_refused(tiny_bert_dir, tmp_path, edit, code, named):
    directory = _rewrite_weights(tiny_bert_dir, tmp_path / "edited", edit)
    with pytest.raises(LabError) as info:
        loaders.load_plain_bert(directory, "edited")
    assert info.value.code == code and named in info.value.message("en", markdown=False)


def test_a_checkpoint_without_next_sentence_head_has_none(tiny_mlm_dir):
    encoder = loaders.load_plain_bert(tiny_mlm_dir, "tiny")
    assert not encoder.has_nsp
    with pytest.raises(LabError) as info:
        encoder.next_sentence_probability("今天天气很好", "我们去北京")
    assert info.value.code == "no_nsp_head"


@pytest.mark.realmodel
def test_the_embedded_bert_runs_without_transformers_models_and_gives_their_numbers():
    encoder = loaders.load("mini-bert-zh")
    assert isinstance(encoder.model, plain_bert.BertForPreTraining)
    directory = catalogue.MODELS_DIR / "mini-bert-zh"
    _, reference = _both(directory, BertForPreTraining)
    batch = encoder.tokenizer(FIRSTS, SECONDS, padding=True, return_tensors="pt")
    with torch.inference_mode():
        ours = encoder.model(**batch, output_hidden_states=True, output_attentions=True)
        theirs = reference(**batch, output_hidden_states=True, output_attentions=True)
    _assert_same(ours, theirs, ["prediction_logits", "seq_relationship_logits", "hidden_states", "attentions"])
    expected = float(torch.softmax(theirs.seq_relationship_logits[0], -1)[0])
    assert encoder.next_sentence_probability(FIRSTS[0], SECONDS[0]) == pytest.approx(expected, abs=1e-6)
