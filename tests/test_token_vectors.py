"""Every token's and every sentence's vectors (core.compute.token_vectors through core.interface.api), checked against
transformers' own hidden states; device and dtype copies; the trainable ScalarMix against the numpy formula."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import AutoModel

from core.compute.mixing import scalar_mix
from core.compute.scalar_mix import ScalarMix
from core.guard.errors import LabError
from core.interface import api
from core.models import catalogue
from core.train.bert import declare_float32

SENTENCES = ["我吃了一个苹果。", "苹果昨天发布了新手机。"]


@pytest.fixture(scope="module")
def reference_hidden():
    """transformers' plain ``AutoModel.from_pretrained(<shipped dir>)``, no dtype given: what a researcher
    checking the lab would load."""
    directory = catalogue.MODELS_DIR / "mini-bert-zh"
    model = AutoModel.from_pretrained(directory).eval()
    tokenizer = api.load("mini-bert-zh").tokenizer
    out = []
    with torch.inference_mode():
        for sentence in SENTENCES:
            batch = tokenizer(sentence, return_tensors="pt")
            hidden = model(**batch, output_hidden_states=True).hidden_states
            out.append(torch.stack(hidden)[:, 0].float().numpy())
    return model, out


@pytest.mark.realmodel
def test_shipped_bert_loads_in_float32_and_matches_the_lab(reference_hidden):
    model, hidden = reference_hidden
    assert model.dtype == torch.float32
    result = api.token_vectors("mini-bert-zh", SENTENCES)
    for sentence, expected in zip(result.sentences, hidden):
        assert sentence.layers.shape == expected.shape
        assert np.abs(sentence.layers - expected).max() < 1e-5


def test_export_declares_float32_for_fp16_weights(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"dtype": "float16", "hidden_size": 8}), encoding="utf-8")
    declare_float32(config)
    assert json.loads(config.read_text(encoding="utf-8")) == {"dtype": "float32", "hidden_size": 8}


@pytest.mark.realmodel
def test_token_vectors_carry_tokens_offsets_and_specials():
    result = api.token_vectors("mini-bert-zh", SENTENCES, batch_size=1)
    first = result.sentences[0]
    assert first.tokens[0] == "[CLS]" and first.tokens[-1] == "[SEP]"
    assert first.special[0] and first.special[-1] and not any(first.special[1:-1])
    text_tokens = [first.text[s:e] for (s, e), special in zip(first.offsets, first.special) if not special]
    assert "".join(text_tokens) == first.text
    assert [s.sentence_index for s in result.sentences] == [0, 1]
    assert result.layer_names == api.load("mini-bert-zh").layer_names


@pytest.mark.realmodel
def test_token_frame_rows_are_the_arrays():
    result = api.token_vectors("mini-elmo-zh", SENTENCES)
    frame = result.to_frame(layers=[0, 2])
    tokens = sum(len(s.tokens) for s in result.sentences)
    assert len(frame) == 2 * tokens
    dims = [c for c in frame.columns if c.startswith("d")]
    assert len(dims) == result.sentences[0].layers.shape[-1]
    row = frame[(frame.sentence_index == 1) & (frame.layer_index == 2) & (frame.token_index == 3)].iloc[0]
    assert row.token == result.sentences[1].tokens[3]
    assert np.allclose(row[dims].to_numpy(dtype=np.float32), result.sentences[1].layers[2, 3])
    with pytest.raises(LabError) as err:
        result.to_frame(layers=[7])
    assert err.value.code == "out_of_range"


@pytest.mark.realmodel
def test_sentence_pooling_agrees_with_transformers(reference_hidden):
    _, hidden = reference_hidden
    mean = api.sentence_vectors("mini-bert-zh", SENTENCES, "mean").vectors
    cls = api.sentence_vectors("mini-bert-zh", SENTENCES, "cls").vectors
    top = api.sentence_vectors("mini-bert-zh", SENTENCES, "max").vectors
    for i, expected in enumerate(hidden):
        text = expected[:, 1:-1]  # without [CLS] and [SEP]
        assert np.abs(mean[:, i] - text.mean(axis=1)).max() < 1e-5
        assert np.abs(top[:, i] - text.max(axis=1)).max() < 1e-5
        assert np.abs(cls[:, i] - expected[:, 0]).max() < 1e-5


@pytest.mark.realmodel
def test_sentence_frame_and_other_models():
    elmo = api.sentence_vectors("mini-elmo-zh", SENTENCES)
    assert elmo.vectors.shape[:2] == (3, 2)
    frame = elmo.to_frame()
    assert len(frame) == 6 and set(frame.pooling) == {"mean"}
    assert frame.sentence[frame.sentence_index == 1].iloc[0] == SENTENCES[1]
    static = api.sentence_vectors("word2vec-zh", SENTENCES)
    encoder = api.load("word2vec-zh")
    words = [w for w in encoder.encode(SENTENCES[:1])[0].tokens if encoder.word_vector(w) is not None]
    expected = np.mean([encoder.word_vector(w) for w in words], axis=0)
    assert np.allclose(static.vectors[0, 0], expected, atol=1e-6)


@pytest.mark.parametrize("call, code", [
    (lambda: api.sentence_vectors("mini-elmo-zh", SENTENCES, "cls"), "no_cls_token"),
    (lambda: api.sentence_vectors("mini-bert-zh", SENTENCES, "sum"), "bad_choice"),
    (lambda: api.sentence_vectors("word2vec-zh", ["😀🙂"]), "no_pooled_tokens"),
    (lambda: api.token_vectors("mini-bert-zh", "我吃了一个苹果。"), "bad_argument"),
    (lambda: api.sentence_vectors("mini-bert-zh", ["我吃了一个苹果。", None]), "bad_argument"),
    (lambda: api.token_vectors("mini-bert-zh", SENTENCES, batch_size=0), "out_of_range"),
    (lambda: api.token_vectors("mini-bert-zh", []), "empty_input"),
    (lambda: api.load("mini-bert-zh", device="tpu"), "bad_choice"),
    (lambda: api.load("mini-bert-zh", dtype="int8"), "bad_choice"),
    (lambda: api.load("word2vec-zh", dtype="bfloat16"), "bad_choice"),
])
@pytest.mark.realmodel
def test_bad_arguments_are_lab_errors(call, code):
    with pytest.raises(LabError) as err:
        call()
    assert err.value.code == code
    assert err.value.message("zh") and err.value.message("en")


@pytest.mark.realmodel
@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_clear_error_and_auto_is_the_cpu():
    with pytest.raises(LabError) as err:
        api.load("mini-bert-zh", device="cuda")
    assert err.value.code == "device_unavailable"
    assert next(api.load("mini-elmo-zh", device="auto").model.parameters()).device.type == "cpu"


@pytest.mark.realmodel
def test_a_bfloat16_copy_leaves_the_shared_encoder_alone():
    shared = api.load("mini-bert-zh")
    half = api.load("mini-bert-zh", dtype="bfloat16")
    assert half is not shared and half.model.dtype == torch.bfloat16 and shared.model.dtype == torch.float32
    full = api.sentence_vectors(shared, SENTENCES).vectors
    low = api.sentence_vectors(half, SENTENCES).vectors
    assert low.dtype == np.float32
    assert 0 < np.abs(full - low).max() < 0.1  # bfloat16 keeps ~3 significant digits
    assert abs(half.next_sentence_probability(*SENTENCES) - shared.next_sentence_probability(*SENTENCES)) < 0.05


def test_read_labelled(tmp_path):
    path = tmp_path / "senses.txt"
    path.write_text("水果|我吃了一个苹果。\n\n苹果昨天发布了新手机。\n", encoding="utf-8")
    assert api.read_labelled(path) == (["我吃了一个苹果。", "苹果昨天发布了新手机。"], ["水果", None])
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(LabError) as err:
        api.read_labelled(tmp_path / "binary.txt")
    assert err.value.code == "not_text"
    with pytest.raises(LabError) as err:
        api.read_labelled(tmp_path / "missing.txt")
    assert err.value.code == "file_unreadable"


# --- ScalarMix: AllenNLP's formula as a torch module ---------------------------------------------------------

def test_scalar_mix_module_equals_the_numpy_mix():
    rng = np.random.default_rng(0)
    layers = rng.normal(size=(3, 2, 5, 8))
    w = [0.3, -1.2, 0.8]
    module = ScalarMix(3, initial_scalar_parameters=w)
    with torch.no_grad():
        module.gamma.fill_(1.7)
        out = module(torch.from_numpy(layers)).numpy()
        normed = ScalarMix(3, do_layer_norm=True, initial_scalar_parameters=w)(torch.from_numpy(layers)).numpy()
    assert np.abs(out - scalar_mix(layers, w, 1.7, pre_softmax=True)).max() < 1e-6
    assert np.abs(normed - scalar_mix(layers, w, 1.0, pre_softmax=True, do_layer_norm=True)).max() < 1e-6
    assert np.allclose(module.weights.detach().numpy(), np.exp(w) / np.exp(w).sum())


def test_scalar_mix_masked_layer_norm_uses_only_real_tokens():
    rng = np.random.default_rng(1)
    layers = torch.from_numpy(rng.normal(size=(2, 2, 4, 3)))
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]])
    with torch.no_grad():
        out = ScalarMix(2, do_layer_norm=True)(layers, mask).numpy()
    keep = mask.bool().numpy()
    expected = 0
    for j in range(2):  # AllenNLP: one mean and variance per layer over the unmasked numbers, applied everywhere
        h = layers[j].numpy()
        real = h[keep]
        expected = expected + 0.5 * (h - real.mean()) / np.sqrt(real.var() + 1e-13)
    assert np.abs(out - expected).max() < 1e-9


def test_scalar_mix_learns_the_weights_it_is_shown():
    torch.manual_seed(0)
    layers = torch.randn(3, 64, 8)
    target = 2.0 * (0.1 * layers[0] + 0.6 * layers[1] + 0.3 * layers[2])
    module = ScalarMix(3)
    optimiser = torch.optim.Adam(module.parameters(), lr=0.05)
    for _ in range(400):
        optimiser.zero_grad()
        loss = ((module(layers) - target) ** 2).mean()
        loss.backward()
        optimiser.step()
    assert np.allclose(module.weights.detach().numpy(), [0.1, 0.6, 0.3], atol=0.02)
    assert abs(float(module.gamma.detach()) - 2.0) < 0.05
    frozen = ScalarMix(3, trainable=False)
    assert not any(p.requires_grad for p in frozen.parameters())


@pytest.mark.parametrize("call, code, fragment", [
    (lambda: ScalarMix(0), "bad_argument", "mixture_size must be at least 1, not 0"),
    (lambda: ScalarMix(-1), "bad_argument", "mixture_size must be at least 1, not -1"),
    (lambda: ScalarMix("3"), "bad_argument", "mixture_size must be int, not str"),
    (lambda: ScalarMix(True), "bad_argument", "mixture_size must be int, not bool"),
    (lambda: ScalarMix(3, initial_scalar_parameters=[0.0, 1.0]), "weights_count", "2 layer weights"),
    (lambda: ScalarMix(2, initial_scalar_parameters=[0.0, float("nan")]), "bad_argument", "finite numbers"),
    (lambda: ScalarMix(2, initial_scalar_parameters=["a", "b"]), "bad_argument", "a list of numbers"),
    (lambda: ScalarMix(3)(torch.zeros(2, 4, 5)), "bad_argument", "tensors must be 3 layers (the mix's size), not 2"),
    (lambda: ScalarMix(3)(torch.tensor(1.0)), "bad_argument", "tensors must be a sequence of tensors"),
])
def test_scalar_mix_guards(call, code, fragment):
    """On main these raised ValueError, TypeError ("3" < 1) or AttributeError: the API's bad input is one
    LabError with a plain-text message."""
    with pytest.raises(LabError) as err:
        call()
    assert err.value.code == code and fragment in err.value.message("en"), err.value.message("en")
