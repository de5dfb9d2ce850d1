"""Papercuts of the Python API (issue #55 item 4), each once a TypeError or a refusal of a reasonable argument."""
from __future__ import annotations

import pytest
import torch

import core
from core.guard.errors import LabError
from core.interface import api

SENTENCES = ["我吃了一个苹果。", "苹果昨天发布了新手机。", "他吃苹果。"]


def test_embed_takes_a_batch_size(clean_model_cache, tiny_bert_dir):
    """``embed(batch_size=…)`` was a TypeError; the same vectors whatever the batch."""
    one = api.embed(str(tiny_bert_dir), SENTENCES, "苹果", batch_size=1)
    whole = api.embed(str(tiny_bert_dir), SENTENCES, "苹果")
    assert len(one.occurrences) == 3
    assert abs(one.stacked() - whole.stacked()).max() < 1e-5


def test_negative_layers_count_from_the_top(clean_model_cache, tiny_bert_dir):
    tokens = api.token_vectors(str(tiny_bert_dir), SENTENCES[:1])
    top = tokens.to_frame(layers=[-1])
    assert set(top["layer_index"]) == {len(tokens.layer_names) - 1}
    assert set(api.sentence_vectors(str(tiny_bert_dir), SENTENCES).to_frame(layers=[-1])["layer"]) == {"layer 2"}
    with pytest.raises(LabError):
        tokens.to_frame(layers=[-4])


@pytest.mark.parametrize("device", ["cuda:0", "cuda:7", "mps"])
def test_device_strings_torch_knows_are_answered_by_availability(clean_model_cache, tiny_bert_dir, device):
    """"cuda:0" and "mps" were refused as not one of cpu, cuda, auto."""
    available = {"mps": torch.backends.mps.is_available()}.get(
        device, torch.cuda.is_available() and int(device.split(":")[1]) < torch.cuda.device_count())
    if available:
        pytest.skip(f"{device} is available here")
    with pytest.raises(LabError) as info:
        api.load(str(tiny_bert_dir), device=device)
    assert info.value.code == "device_unavailable" and device in info.value.message("en")


def test_a_torch_dtype_is_taken(clean_model_cache, tiny_bert_dir):
    assert api.load(str(tiny_bert_dir), dtype=torch.float32) is api.load(str(tiny_bert_dir))
    half = api.load(str(tiny_bert_dir), dtype=torch.bfloat16)
    assert half.model.dtype == torch.bfloat16
    with pytest.raises(LabError):
        api.load(str(tiny_bert_dir), dtype=torch.int8)


def test_the_package_has_a_version():
    assert core.__version__ and core.__version__ != "unknown" and core.__version__[0].isdigit()


def test_embed_result_has_a_frame_like_the_others(clean_model_cache, tiny_bert_dir):
    """``api.embed``'s result had no ``to_frame``: one row per occurrence and layer, the export's table columns."""
    from core.interface import export

    vectors = api.embed(str(tiny_bert_dir), SENTENCES, "苹果", labels=["fruit", "company", None])
    frame = vectors.to_frame()
    layers, count, dim = vectors.stacked().shape
    assert frame.shape == (count * layers, 8 + dim)
    assert list(frame.columns) == list(export.table_columns(vectors))
    assert list(frame.columns[:3]) == list(api.token_vectors(str(tiny_bert_dir), SENTENCES[:1]).to_frame().columns[:3])
    first = frame[(frame.sentence_index == 1) & (frame.layer_index == 2)]
    occurrence = next(o for o in vectors.occurrences if o.sentence_index == 1)
    assert first[["sentence", "start", "end", "label"]].values.tolist() == [[SENTENCES[1], 0, 2, "company"]]
    assert (first.filter(regex=r"^d\d+$").to_numpy()[0] == occurrence.layers[2]).all()
    top = vectors.to_frame(layers=[-1])
    assert set(top["layer_index"]) == {layers - 1} and len(top) == count
    assert (top.filter(regex=r"^d\d+$").to_numpy() == vectors.stacked()[-1]).all()
