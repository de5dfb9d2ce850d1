"""The one encoder interface, on tiny random BERTs built from a config and on the embedded models."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.guard.errors import LabError
from core.models.cache import load_encoder
from core.models.catalogue import list_models

SENTENCES = ["我吃了一个苹果", "苹果昨天发布了新手机 iPhone"]


def test_bert_encoding_shapes_offsets_and_attention(tiny_bert):
    encodings = tiny_bert.encode(SENTENCES, attentions=True)
    assert [e.text for e in encodings] == SENTENCES
    for enc in encodings:
        n = len(enc.tokens)
        assert enc.layers.shape == (tiny_bert.num_layers, n, 32)
        assert enc.attentions.shape == (2, 2, n, n)
        np.testing.assert_allclose(enc.attentions.sum(-1), 1.0, atol=1e-5)
        assert enc.special[0] and enc.special[-1] and enc.tokens[0] == "[CLS]"
        for token, (start, end), special in zip(enc.tokens, enc.offsets, enc.special):
            if not special:
                assert enc.text[start:end].lower() == token.removeprefix("##")
    english = encodings[1]
    assert "##p" in english.tokens  # WordPiece pieces of iphone keep their character offsets
    assert english.offsets[english.tokens.index("##p")] == (12, 13)


def test_layer_zero_is_context_independent(tiny_bert):
    a, b = tiny_bert.encode(["我吃了一个苹果", "苹果昨天发布"])
    # same character at the same position → identical embedding-layer vector, different upper layers
    np.testing.assert_allclose(a.layers[0, 1], tiny_bert.encode(["我"])[0].layers[0, 1], atol=1e-6)
    assert not np.allclose(a.layers[-1, 6], b.layers[-1, 1])


def test_batched_equals_one_by_one(tiny_bert):
    batched = tiny_bert.encode(SENTENCES + ["我"])
    for enc in batched:
        alone = tiny_bert.encode([enc.text])[0]
        np.testing.assert_allclose(enc.layers, alone.layers, atol=1e-4)


def test_nsp_probability_and_missing_head(tiny_bert, tiny_mlm_dir):
    p = tiny_bert.next_sentence_probability("我吃了一个苹果。", "苹果很甜。")
    assert 0.0 < p < 1.0
    mlm_only = load_encoder(str(tiny_mlm_dir))
    assert not mlm_only.has_nsp
    with pytest.raises(LabError) as err:
        mlm_only.next_sentence_probability("a", "b")
    assert err.value.code == "no_nsp_head"


def test_too_many_tokens_for_an_attention_map_is_a_clear_error(tiny_bert):
    """Vectors of a long sentence come from overlapping windows (tests/test_long_texts.py); one attention map
    cannot."""
    with pytest.raises(LabError) as err:
        tiny_bert.encode(["苹果" * 100], attentions=True)
    assert err.value.code == "too_many_tokens" and "64" in err.value.message("en")
    assert tiny_bert.encode(["苹果" * 100])[0].windows > 1


def test_empty_batch_is_a_clear_error(tiny_bert):
    with pytest.raises(LabError) as err:
        tiny_bert.encode([])
    assert err.value.code == "empty_input"


def test_model_loaded_once_per_process(clean_model_cache, model_loads, tiny_bert_dir):
    first = load_encoder(str(tiny_bert_dir))
    again = load_encoder(str(tiny_bert_dir))
    assert first is again and model_loads == {str(tiny_bert_dir): 1}


def test_hub_id_offline_gives_instructions(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    with pytest.raises(LabError) as err:
        load_encoder("bert-base-chinese")
    assert err.value.code == "hub_offline"
    assert "hf download bert-base-chinese" in err.value.message("en")
    assert "hf download bert-base-chinese" in err.value.message("zh")


def test_pickle_only_directory_is_refused(tmp_path, tiny_bert_dir):
    import shutil

    target = tmp_path / "pickled"
    shutil.copytree(tiny_bert_dir, target)
    (target / "model.safetensors").unlink()
    torch.save({"x": torch.zeros(1)}, target / "pytorch_model.bin")
    with pytest.raises(LabError) as err:
        load_encoder(str(target))
    assert err.value.code == "unsafe_weights" and "pytorch_model.bin" in err.value.message("en", markdown=False)


def test_unknown_local_path(tmp_path):
    with pytest.raises(LabError) as err:
        load_encoder(str(tmp_path / "does" / "not" / "exist"))
    assert err.value.code == "unknown_model"


def test_registry_lists_the_embedded_models():
    infos = {i.name: i for i in list_models()}
    assert set(infos) >= {"mini-bert-zh", "mini-elmo-zh", "word2vec-zh"}
    for info in infos.values():
        assert info.available or info.reason


def _embedded(name):
    info = next(i for i in list_models() if i.name == name)
    if not info.available:
        pytest.skip(f"{name} not trained yet: {info.reason}")
    return load_encoder(name)


@pytest.mark.realmodel
def test_embedded_elmo_layers():
    elmo = _embedded("mini-elmo-zh")
    enc = elmo.encode(["我吃了一个苹果"])[0]
    assert elmo.layer_names[0] == "token layer" and elmo.num_layers == 3
    half = enc.layers.shape[-1] // 2
    # layer 0 is the token layer duplicated: [x; x]
    np.testing.assert_allclose(enc.layers[0, :, :half], enc.layers[0, :, half:])
    assert enc.tokens[0] == "[CLS]" and enc.offsets[1] == (0, 1)


def test_elmo_loads_in_fp32_while_another_thread_changed_the_default_dtype():
    """transformers switches torch's process-wide default dtype to a checkpoint's fp16 while it builds a
    model; an ELMo loaded in another thread meanwhile came out half fp16 and failed on its first sentence."""
    from core.models.catalogue import MODELS_DIR
    from core.models.elmo import BiLM

    if not (MODELS_DIR / "mini-elmo-zh" / "model.safetensors").exists():
        pytest.skip("mini-elmo-zh not trained")
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float16)
    try:
        model = BiLM.load(MODELS_DIR / "mini-elmo-zh")
    finally:
        torch.set_default_dtype(previous)
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    ids = torch.tensor([[1, 5, 6, 2]])
    assert model.layer_vectors(ids, torch.tensor([4])).dtype == torch.float32


@pytest.mark.realmodel
def test_embedded_word2vec_static_and_oov():
    w2v = _embedded("word2vec-zh")
    a, b = w2v.encode(["我吃了一个苹果", "苹果昨天发布了新手机"])
    ia, ib = a.tokens.index("苹果"), b.tokens.index("苹果")
    np.testing.assert_array_equal(a.layers[0, ia], b.layers[0, ib])
    assert w2v.word_vector("苹果") is not None
    assert w2v.word_vector("元宇宙量子煎饼") is None


@pytest.mark.realmodel
def test_embedded_bert_loads_with_both_heads():
    bert = _embedded("mini-bert-zh")
    assert bert.has_nsp and bert.num_layers == bert.model.config.num_hidden_layers + 1
