import numpy as np
import pytest

from core.compute.geometry import (
    centroid_accuracy,
    cosine_matrix,
    loo_nn_accuracy,
    nearest_neighbours,
    project,
    transform,
)


def _points(n: int = 12, dim: int = 5, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # Unequal spread per axis, so the principal components are well separated.
    return rng.normal(size=(n, dim)) * np.array([5.0, 3.0, 1.0, 0.5, 0.1])[:dim]


def test_project_shapes_and_variance():
    x = _points()
    p = project(x)
    assert p.coords.shape == (12, 2)
    assert p.components.shape == (2, 5)
    assert p.explained_variance_ratio.shape == (2,)
    assert p.explained_variance_ratio[0] > p.explained_variance_ratio[1] > 0
    assert p.explained_variance_ratio.sum() < 1
    assert np.allclose(p.mean, x.mean(axis=0))
    assert np.allclose(p.coords.mean(axis=0), 0.0, atol=1e-12)


@pytest.mark.parametrize("shape", [(12, 5), (3, 40), (40, 3), (200, 64)])
def test_project_agrees_with_scikit_learns_pca(shape):
    """numpy's SVD gives scikit-learn's PCA (svd_solver="full"): the same components up to the sign rule, the same
    explained variance ratios and coordinates."""
    from sklearn.decomposition import PCA

    x = np.random.default_rng(sum(shape)).normal(size=shape) * np.linspace(3.0, 0.2, shape[1])
    k = min(2, *shape)
    ours = project(x, n_components=k)
    pca = PCA(n_components=k, svd_solver="full").fit(x)
    signs = np.sign(pca.components_[np.arange(k), np.argmax(np.abs(pca.components_), axis=1)])
    assert np.allclose(ours.components, pca.components_ * signs[:, None], atol=1e-10)
    assert np.allclose(ours.explained_variance_ratio, pca.explained_variance_ratio_, atol=1e-12)
    assert np.allclose(ours.coords, pca.transform(x) * signs, atol=1e-9)


def test_project_exact_on_a_line():
    x = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    p = project(x, n_components=1)
    # Direction (1, 1)/√2 with a positive largest loading; coords are signed distances from the mean.
    assert np.allclose(p.components, [[1 / np.sqrt(2), 1 / np.sqrt(2)]])
    assert np.allclose(p.coords[:, 0], [-np.sqrt(2), 0.0, np.sqrt(2)])
    assert np.allclose(p.explained_variance_ratio, [1.0])


def test_sign_rule_largest_loading_positive():
    p = project(_points())
    for component in p.components:
        assert component[np.argmax(np.abs(component))] > 0


def test_project_deterministic_and_order_independent():
    x = _points()
    first, second = project(x), project(x)
    assert np.array_equal(first.coords, second.coords)
    perm = np.random.default_rng(7).permutation(len(x))
    shuffled = project(x[perm])
    unshuffled = shuffled.coords[np.argsort(perm)]
    assert np.allclose(unshuffled, first.coords, rtol=0.0, atol=1e-9)
    # Flipping every point through the mean must not flip the picture either.
    mirrored = project(2 * x.mean(axis=0) - x)
    assert np.allclose(mirrored.components, first.components, atol=1e-9)


def test_project_fewer_points_than_components():
    x = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    p = project(x, n_components=3)
    assert p.coords.shape == (2, 3)
    assert np.allclose(p.coords[:, 0], [-1.0, 1.0])
    assert np.allclose(p.coords[:, 1:], 0.0)
    assert np.allclose(p.explained_variance_ratio, [1.0, 0.0, 0.0])


def test_project_single_point_and_identical_points():
    one = project(np.array([[3.0, 4.0]]))
    assert one.coords.shape == (1, 2)
    assert np.array_equal(one.coords, np.zeros((1, 2)))
    assert np.array_equal(one.explained_variance_ratio, np.zeros(2))
    same = project(np.ones((4, 3)))
    assert np.array_equal(same.coords, np.zeros((4, 2)))
    assert not np.any(np.isnan(same.explained_variance_ratio))


def test_transform_matches_joint_fit():
    layers = np.stack([_points(seed=s) for s in range(3)])  # (layers, n, dim)
    joint = project(layers.reshape(-1, 5))
    for index, layer in enumerate(layers):
        assert np.allclose(transform(joint, layer), joint.coords[index * 12 : (index + 1) * 12])
    with pytest.raises(ValueError, match="dimension"):
        transform(joint, np.ones((2, 4)))


def test_project_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        project(np.ones(5))
    with pytest.raises(ValueError, match="finite"):
        project(np.array([[0.0, np.nan], [1.0, 1.0]]))


def test_cosine_matrix_values():
    v = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0], [1.0, 1.0]])
    c = cosine_matrix(v)
    assert c.shape == (4, 4)
    assert np.allclose(np.diag(c), 1.0)
    assert c[0, 1] == pytest.approx(0.0)
    assert c[0, 2] == pytest.approx(-1.0)
    assert c[0, 3] == pytest.approx(1 / np.sqrt(2))
    assert np.allclose(c, c.T)


def test_cosine_zero_vectors_give_zero():
    c = cosine_matrix(np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert not np.any(np.isnan(c))
    assert c[0, 0] == 0.0 and c[0, 1] == 0.0 and c[1, 1] == 1.0
    # Centring identical vectors leaves only rounding dust, which must count as zero.
    centred = cosine_matrix(np.full((3, 4), 0.1), centre=True)
    assert np.array_equal(centred, np.zeros((3, 3)))


def test_centring_removes_common_direction():
    # Two senses on either side of a large shared offset: raw cosines are all high.
    v = np.array([[10.0, 1.0], [10.0, 1.2], [10.0, -1.0], [10.0, -1.2]])
    assert cosine_matrix(v).min() > 0.95
    centred = cosine_matrix(v, centre=True)
    assert centred[0, 2] == pytest.approx(-1.0)
    assert centred[0, 1] == pytest.approx(1.0)


def test_nearest_neighbours_excludes_self_sorted():
    v = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.5, 0.5]])
    nn = nearest_neighbours(v, k=2)
    assert [j for j, _ in nn[0]] == [1, 3]
    assert [j for j, _ in nn[2]] == [3, 1]
    assert all(i not in [j for j, _ in row] for i, row in enumerate(nn))
    sims = [s for _, s in nn[0]]
    assert sims == sorted(sims, reverse=True)
    assert sims[1] == pytest.approx(1 / np.sqrt(2))
    assert len(nearest_neighbours(v, k=10)[0]) == 3
    with pytest.raises(ValueError, match="k must be"):
        nearest_neighbours(v, k=0)


def test_nearest_neighbours_ties_by_index():
    nn = nearest_neighbours(np.ones((4, 3)), k=3)
    assert [j for j, _ in nn[2]] == [0, 1, 3]


def test_loo_accuracy_separated_senses():
    v = np.array([[1.0, 0.1], [1.0, 0.0], [0.0, 1.0], [0.1, 1.0]])
    assert loo_nn_accuracy(v, ["bank", "bank", "river", "river"]) == 1.0
    # Swapping one label makes both items of the mixed pair wrong.
    assert loo_nn_accuracy(v, ["bank", "river", "bank", "river"]) == 0.0


def test_loo_accuracy_static_vectors_chance_like():
    # word2vec gives each occurrence the same vector: every other item ties and shares the vote, so
    # the score is the guessing level of a random neighbour: a's see 1 of 5 a's, b's see 3 of 5 b's.
    v = np.tile([0.3, -0.7, 0.2], (6, 1))
    labels = ["a", "a", "b", "b", "b", "b"]
    assert loo_nn_accuracy(v, labels) == pytest.approx((2 * 1 / 5 + 4 * 3 / 5) / 6)
    assert loo_nn_accuracy(v, labels, centre=True) == pytest.approx((2 * 1 / 5 + 4 * 3 / 5) / 6)
    balanced = ["a"] * 22 + ["b"] * 22  # two balanced senses: just under 50%, never below it by tie order
    assert loo_nn_accuracy(np.tile([1.0, 2.0], (44, 1)), balanced) == pytest.approx(21 / 43)


def test_loo_accuracy_partial_tie_shares_the_vote():
    # item 0 is equally close to items 1 (same sense) and 2 (other sense): half a hit
    v = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, -1.0], [-1.0, 0.2]])
    labels = ["a", "a", "b", "b"]
    # 0: tie 1/2 → 0.5; 1: nearest 0 → hit; 2: nearest 0 → miss; 3: nearest 1 (cos .. ) → miss
    assert loo_nn_accuracy(v, labels) == pytest.approx(1.5 / 4)


def test_loo_accuracy_ignores_unlabelled_and_returns_none():
    v = np.array([[1.0, 0.0], [0.0, 1.0], [0.99, 0.01], [0.01, 0.99]])
    assert loo_nn_accuracy(v, ["x", "y", None, ""]) == 0.0  # only x and y left: each other's nn
    assert loo_nn_accuracy(v, ["x", "y", "x", "y"]) == 1.0
    assert loo_nn_accuracy(v, ["x", None, "", None]) is None
    assert loo_nn_accuracy(v, ["x", "x", "x", None]) is None
    with pytest.raises(ValueError, match="labels"):
        loo_nn_accuracy(v, ["x", "y"])


def test_centroid_accuracy():
    train = np.array([[1.0, 0.0], [0.8, 0.2], [0.0, 1.0], [0.2, 0.8]])
    train_labels = ["bank", "bank", "river", "river"]
    test = np.array([[0.9, 0.0], [0.1, 0.9], [0.7, 0.3], [0.5, 0.5]])
    # The last point is equidistant: the tie goes to the alphabetically first sense, "bank".
    assert centroid_accuracy(train, train_labels, test, ["bank", "river", "river", "bank"]) == 0.75
    assert centroid_accuracy(train, train_labels, test[:2], ["bank", "unseen"]) == 0.5
    with pytest.raises(ValueError, match="no labelled"):
        centroid_accuracy(train, train_labels, test, [None, "", None, None])
    with pytest.raises(ValueError, match="dimension"):
        centroid_accuracy(train, train_labels, np.ones((1, 3)), ["bank"])
