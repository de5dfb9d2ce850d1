import numpy as np
import pytest

from core.compute.mixing import (
    PRESETS,
    format_vector,
    layer_normalise,
    mean_norms,
    normalise_weights,
    one_hot,
    pre_softmax_from_normalised,
    scalar_mix,
    softmax,
)

IDENTITY = np.identity(3)


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ([0.2, 0.3, 0.5], [0.4, 0.6, 1.0]),
        ([0.5, 0.4, 0.1], [1.0, 0.8, 0.2]),
        ([0.1, 0.3, 0.6], [0.2, 0.6, 1.2]),
    ],
)
def test_lecture_numbers(s, expected):
    mixed = scalar_mix(IDENTITY, s, gamma=2.0)
    assert mixed.dtype == np.float64
    assert np.allclose(mixed, expected, rtol=0.0, atol=1e-12)


def test_presets_reproduce_lecture():
    expected = {
        "uniform": [1 / 3, 1 / 3, 1 / 3],
        "syntax": [1.0, 0.8, 0.2],
        "semantics": [0.2, 0.6, 1.2],
        "worked_example": [0.4, 0.6, 1.0],
    }
    assert set(PRESETS) == set(expected)
    for name, (weights, gamma, pre_softmax) in PRESETS.items():
        mixed = scalar_mix(IDENTITY, weights, gamma, pre_softmax=pre_softmax)
        assert np.allclose(mixed, expected[name], rtol=0.0, atol=1e-12), name


def test_zero_pre_softmax_weights_average_layers():
    layers = np.array([[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 9.0]]])  # (L+1=3, n_words=1, dim=2)
    mixed = scalar_mix(layers, [0.0, 0.0, 0.0], pre_softmax=True)
    assert mixed.shape == (1, 2)
    assert np.allclose(mixed, [[3.0, 5.0]], rtol=0.0, atol=1e-12)


def test_middle_axes_are_kept():
    rng = np.random.default_rng(0)
    layers = rng.normal(size=(3, 4, 5, 6))
    s = [0.2, 0.3, 0.5]
    expected = 1.5 * (0.2 * layers[0] + 0.3 * layers[1] + 0.5 * layers[2])
    assert np.allclose(scalar_mix(layers, s, 1.5), expected, rtol=0.0, atol=1e-12)


def test_wrong_number_of_weights():
    with pytest.raises(ValueError, match="2 weights for 3 layers"):
        scalar_mix(IDENTITY, [0.5, 0.5])


def test_layers_need_a_layer_axis():
    with pytest.raises(ValueError, match="shape"):
        scalar_mix([1.0, 2.0, 3.0], [0.2, 0.3, 0.5])


def test_negative_weights_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        normalise_weights([1.2, -0.2, 0.0], pre_softmax=False)


def test_weights_not_summing_to_one_rejected():
    with pytest.raises(ValueError, match="sum to 1"):
        scalar_mix(IDENTITY, [0.2, 0.3, 0.4])
    # Within tolerance is fine.
    assert np.allclose(normalise_weights([0.2, 0.3, 0.5 + 1e-7], pre_softmax=False), [0.2, 0.3, 0.5 + 1e-7])


def test_softmax_stable_for_large_values():
    s = softmax([1000.0, 1000.0, 999.0])
    e = np.exp(-1.0)
    assert np.all(np.isfinite(s))
    assert np.allclose(s, [1 / (2 + e), 1 / (2 + e), e / (2 + e)], rtol=0.0, atol=1e-12)
    assert np.allclose(softmax([-1000.0, 0.0]), [0.0, 1.0], rtol=0.0, atol=1e-12)


def test_softmax_rejects_non_finite():
    with pytest.raises(ValueError, match="finite"):
        softmax([0.0, np.inf])


def test_one_hot():
    assert one_hot(3, 1).tolist() == [0.0, 1.0, 0.0]
    assert np.allclose(scalar_mix(IDENTITY, one_hot(3, 2), gamma=2.0), [0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="layer index"):
        one_hot(3, 3)


def test_pre_softmax_from_normalised_round_trip():
    for s in ([0.2, 0.3, 0.5], [0.5, 0.4, 0.1], [0.1, 0.3, 0.6]):
        w = pre_softmax_from_normalised(s)
        assert w.max() == 0.0
        assert np.allclose(softmax(w), s, rtol=0.0, atol=1e-12)
    assert np.allclose(pre_softmax_from_normalised([0.25, 0.5, 0.25]), [np.log(0.5), 0.0, np.log(0.5)])


def test_pre_softmax_from_normalised_needs_positive():
    with pytest.raises(ValueError, match="strictly positive"):
        pre_softmax_from_normalised([0.0, 0.5, 0.5])


def test_format_vector_writes_vectors_as_the_lecture_does():
    assert format_vector([0.4, 0.6000000001, 1.0]) == "[0.4, 0.6, 1.0]"
    assert format_vector([1 / 3] * 3, 2) == "[0.33, 0.33, 0.33]"
    assert format_vector([0.4, 0.6, 1.0], 2) == "[0.40, 0.60, 1.00]"  # live values keep their width
    assert format_vector([0.4, 0.6, 1.0], 2, trim=True) == "[0.4, 0.6, 1.0]"
    assert format_vector([0.25, 2.0]) == "[0.2, 2.0]"


# ---- per-layer standardisation (AllenNLP's ScalarMix do_layer_norm) ------------------------------------
def test_layer_normalise_is_a_layer_norm_over_the_whole_layer():
    """One mean and one variance per layer over every position and dimension: torch's layer_norm over the
    layer's full shape (no affine), as AllenNLP's _do_layer_norm computes without padding."""
    import torch

    rng = np.random.default_rng(3)
    layers = rng.normal(size=(3, 5, 8)) * np.array([10.0, 0.5, 2.0])[:, None, None] + 4.0
    expected = torch.nn.functional.layer_norm(torch.tensor(layers), (5, 8), eps=1e-12).numpy()
    assert np.allclose(layer_normalise(layers), expected, rtol=0.0, atol=1e-9)
    per_token = torch.nn.functional.layer_norm(torch.tensor(layers), (8,), eps=1e-12).numpy()
    assert not np.allclose(layer_normalise(layers), per_token, atol=1e-3)  # not a per-token LayerNorm


def test_layer_norm_makes_the_mix_blind_to_each_layers_scale():
    rng = np.random.default_rng(4)
    layers = rng.normal(size=(3, 6, 4))
    rescaled = layers * np.array([100.0, 0.01, 3.0])[:, None, None] + np.array([5.0, -2.0, 0.0])[:, None, None]
    s = [0.2, 0.3, 0.5]
    # equal up to the ε under the variance (1e-12 against the 0.01-scaled layer's 1e-4)
    assert np.allclose(scalar_mix(rescaled, s, 1.5, do_layer_norm=True), scalar_mix(layers, s, 1.5, do_layer_norm=True),
                       rtol=0.0, atol=1e-6)
    assert not np.allclose(scalar_mix(rescaled, s), scalar_mix(layers, s))  # the raw mix follows the scales
    assert np.allclose(scalar_mix(layers, s, 1.5, do_layer_norm=False), scalar_mix(layers, s, 1.5))


def test_layer_norm_edge_cases():
    constant = np.stack([np.full((2, 3), 7.0), np.arange(6.0).reshape(2, 3)])
    normalised = layer_normalise(constant)
    assert np.all(np.isfinite(normalised)) and np.allclose(normalised[0], 0.0)  # no 0 / 0
    assert np.allclose(normalised[1].mean(), 0.0) and np.allclose(normalised[1].var(), 1.0)
    one_position = layer_normalise(np.array([[[1.0, 3.0]], [[2.0, 2.0]]]))  # (2 layers, 1 position, 2 dims)
    assert np.allclose(one_position, [[[-1.0, 1.0]], [[0.0, 0.0]]])
    empty = np.zeros((3, 0, 4))
    assert layer_normalise(empty).shape == (3, 0, 4)
    assert np.allclose(mean_norms(empty), 0.0)
    with pytest.raises(ValueError, match="layers must have shape"):
        layer_normalise([1.0, 2.0, 3.0])


def test_mean_norms():
    layers = np.array([[[3.0, 4.0], [0.0, 1.0]], [[6.0, 8.0], [0.0, 0.0]]])  # lengths 5, 1 and 10, 0
    assert np.allclose(mean_norms(layers), [3.0, 5.0])
    assert np.allclose(mean_norms(layer_normalise(np.random.default_rng(5).normal(size=(3, 400, 16)) *
                                                  np.array([9.0, 1.0, 3.0])[:, None, None])), 4.0, atol=0.2)


# ---- do_layer_norm with padding: AllenNLP's mask (#55 item 7) --------------------------------------------------
def test_masked_layer_norm_is_allennlps_formula_by_hand():
    """Two layers, a batch of two sentences padded to 3 tokens, dim 2: the mean and variance of each layer are
    taken over the 3 real tokens' 6 numbers only (AllenNLP's ``num_elements_not_masked``); padding, whatever its
    values, changes nothing at the real positions. The numpy mix, ``api.mix`` and the torch ScalarMix agree."""
    import torch

    from core.compute.scalar_mix import ScalarMix
    from core.guard.errors import LabError
    from core.interface import api

    layers = np.array([[[[1.0, 3.0], [5.0, 7.0], [99.0, -99.0]], [[2.0, 2.0], [50.0, 50.0], [50.0, 50.0]]],
                       [[[0.0, 2.0], [2.0, 4.0], [8.0, 8.0]], [[4.0, 6.0], [-7.0, 7.0], [7.0, -7.0]]]])
    mask = np.array([[1, 1, 0], [1, 0, 0]])  # real: sentence 0 tokens 0, 1; sentence 1 token 0
    # layer 0's real numbers: 1 3 5 7 2 2 → mean 20/6, variance Σ(x − mean)² / 6
    real0 = np.array([1.0, 3.0, 5.0, 7.0, 2.0, 2.0])
    real1 = np.array([0.0, 2.0, 2.0, 4.0, 4.0, 6.0])
    assert real0.mean() == 20 / 6 and real1.mean() == 3.0
    var0 = ((real0 - 20 / 6) ** 2).sum() / 6
    var1 = ((real1 - 3.0) ** 2).sum() / 6  # (9 + 1 + 1 + 1 + 1 + 9) / 6
    assert var1 == 22 / 6
    by_hand = 1.5 * (0.25 * (layers[0] - 20 / 6) / np.sqrt(var0 + 1e-12)
                     + 0.75 * (layers[1] - 3.0) / np.sqrt(var1 + 1e-12))

    mixed = api.mix(layers, [0.25, 0.75], 1.5, do_layer_norm=True, mask=mask)
    assert np.abs(mixed - by_hand).max() < 1e-12
    unmasked = api.mix(layers, [0.25, 0.75], 1.5, do_layer_norm=True)  # padding counted: other numbers
    assert np.abs(unmasked - by_hand)[mask.astype(bool)].max() > 0.1
    repadded = layers.copy()
    repadded[:, ~mask.astype(bool)] = 1e3
    again = api.mix(repadded, [0.25, 0.75], 1.5, do_layer_norm=True, mask=mask.astype(bool))
    assert np.abs(again - by_hand)[mask.astype(bool)].max() < 1e-12

    module = ScalarMix(2, do_layer_norm=True, initial_scalar_parameters=np.log([0.25, 0.75]).tolist())
    with torch.no_grad():
        module.gamma.fill_(1.5)
        torch_mixed = module(torch.from_numpy(layers), torch.from_numpy(mask)).numpy()
    assert np.abs(torch_mixed - by_hand).max() < 1e-6
    assert np.abs(api.mix(layers, [0.25, 0.75], 1.5, mask=mask) - api.mix(layers, [0.25, 0.75], 1.5)).max() == 0

    for bad in (mask[:, :2], np.zeros_like(mask), mask * 2):
        with pytest.raises(LabError) as info:
            api.mix(layers, [0.25, 0.75], do_layer_norm=True, mask=bad)
        assert info.value.code == "bad_mix"
    for bad_tensor in (torch.ones(2, 2), torch.zeros(2, 3)):
        with pytest.raises(LabError) as info:
            module(torch.from_numpy(layers), bad_tensor)
        assert info.value.code == "bad_argument" and "mask" in info.value.message("en", markdown=False)
