"""The model cache is as fresh as the files (issue #55 item 2): a checkpoint saved again into its folder is loaded
again, a failed load is not answered again once the files change, the cache can be cleared through the API, and
the size limit speaks to whoever runs the library."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from core.guard.errors import LabError
from core.interface import api
from core.models import cache
from tests.conftest import build_tiny_bert

SENTENCE = "我吃了一个苹果。"


def _reference(directory) -> np.ndarray:
    from transformers import BertModel, BertTokenizerFast

    model = BertModel.from_pretrained(str(directory)).eval()
    with torch.inference_mode():
        batch = BertTokenizerFast.from_pretrained(str(directory))(SENTENCE, return_tensors="pt")
        return torch.stack(model(**batch, output_hidden_states=True).hidden_states)[:, 0].numpy()


def test_a_checkpoint_saved_again_into_its_folder_is_read_again(clean_model_cache, tmp_path):
    """The first weights came back until the process ended (max |diff| 5.07 against the files)."""
    directory = build_tiny_bert(tmp_path / "model", seed=0)
    ref = cache.load_ref(str(directory))
    first = api.token_vectors(str(directory), [SENTENCE]).sentences[0].layers
    np.testing.assert_allclose(first, _reference(directory), atol=1e-5)
    build_tiny_bert(directory, seed=1)  # another checkpoint, the same folder and file names
    second = api.token_vectors(str(directory), [SENTENCE]).sentences[0].layers
    np.testing.assert_allclose(second, _reference(directory), atol=1e-5)
    assert np.abs(second - first).max() > 0.1
    assert api.load(ref) is api.load(str(directory))  # a page's handle follows the files too
    assert len(cache.bookkeeping().loaded) == 1


def test_a_failed_load_is_forgotten_when_the_files_change(clean_model_cache, tmp_path, tiny_bert_dir):
    directory = shutil.copytree(tiny_bert_dir, tmp_path / "model")
    (directory / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(LabError):
        api.load(str(directory))
    with pytest.raises(LabError):  # unchanged files: the remembered failure, at once
        api.load(str(directory))
    shutil.copy(tiny_bert_dir / "model.safetensors", directory / "model.safetensors")
    assert api.load(str(directory)).kind == "bert"  # within the minute the failure was remembered for


def test_clear_cache_is_public_and_forgets_models_and_failures(clean_model_cache, tmp_path, tiny_bert_dir):
    assert "clear_cache" in api.__all__
    first = api.load(str(tiny_bert_dir))
    missing = tmp_path / "model"
    shutil.copytree(tiny_bert_dir, missing)
    (missing / "model.safetensors").write_bytes(b"broken")
    with pytest.raises(LabError):
        api.load(str(missing))
    assert cache.bookkeeping().failed
    api.clear_cache()
    assert cache.bookkeeping().loaded == () and cache.bookkeeping().failed == ()
    assert api.load(str(tiny_bert_dir)) is not first


def test_the_size_limit_speaks_to_a_library_user_and_names_the_override(clean_model_cache, monkeypatch,
                                                                          tiny_bert_dir):
    monkeypatch.setenv("LAB_MAX_MODEL_PARAMS", "1000")
    with pytest.raises(LabError) as info:
        api.load(str(tiny_bert_dir))
    assert info.value.code == "model_too_large"
    for lang in ("en", "zh"):
        text = info.value.message(lang)
        assert "LAB_MAX_MODEL_PARAMS=" in text
        assert not any(word in text for word in ("server", "presenter", "服务器", "主讲人")), text
