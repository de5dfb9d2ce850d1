"""core.experiments.concat on the shipped mini-elmo-zh and word2vec-zh (small synthetic POS sample): the three
inputs, the ELMo vector is core.compute.mixing's uniform mix, [x; ELMo] is the two side by side, the verdict follows
the intervals."""
from __future__ import annotations

import numpy as np
import pytest

import core.experiments as experiments
from core.compute.mixing import scalar_mix
from core.experiments import concat, view
from core.experiments.corpus import sample_split
from core.experiments.learned_mix import standardise
from model_support import synthetic_sentences

SMALL = {"n_train": 40, "n_test": 20, "n_dev": 10}


@pytest.fixture(scope="module")
def static_model(embedded_elmo_and_bert):
    from core.models.cache import load_encoder
    from core.models.catalogue import DEFAULT_STATIC, list_models

    if not next(m for m in list_models() if m.name == DEFAULT_STATIC).available:
        pytest.skip("word2vec-zh is not available")
    return load_encoder(DEFAULT_STATIC)


@pytest.fixture(scope="module")
def small_run(elmo, static_model) -> dict:
    return concat.run_concat([elmo], static=static_model, sentences=synthetic_sentences(60), **SMALL)


def test_the_elmo_vector_is_the_uniform_scalar_mix_of_standardised_layers():
    rng = np.random.default_rng(0)
    train, test = rng.normal(size=(3, 20, 4)) * [[[5.0]], [[1.0]], [[2.0]]], rng.normal(size=(3, 7, 4))
    mixed_train, mixed_test = concat.elmo_vectors([train, test])
    scaled_train, scaled_test = standardise(train, test)
    assert mixed_train == pytest.approx(scalar_mix(scaled_train, [1 / 3] * 3), abs=1e-5)
    assert mixed_test == pytest.approx(scaled_test.mean(axis=0), abs=1e-5)
    assert mixed_train.mean(axis=0) == pytest.approx(np.zeros(4), abs=1e-5)  # training statistics


def test_three_inputs_on_the_shipped_models(small_run, elmo, static_model):
    assert (small_run["model"], small_run["static_model"]) == (elmo.name, static_model.name)
    assert not small_run["skipped"]
    inputs = small_run["inputs"]
    assert list(inputs) == list(concat.INPUTS)
    static_dim, elmo_dim = static_model.vectors.shape[1] + 1, elmo.encode(["我"])[0].layers.shape[2]  # + OOV flag
    assert (inputs["static"]["dim"], inputs["elmo"]["dim"]) == (static_dim, elmo_dim)
    assert inputs["concat"]["dim"] == static_dim + elmo_dim  # [x; ELMo]: the two side by side
    test = sample_split(synthetic_sentences(60), 40, 20)[1]
    assert small_run["n_test_words"] == sum(len(s.words) for s in test)
    assert small_run["n_fit_words"] < small_run["n_train_words"]
    for name, r in inputs.items():
        assert r["c"] in concat.C_GRID and set(r["dev_accuracy_by_c"]) == {str(c) for c in concat.C_GRID}, name
        assert r["interval"][0] <= r["accuracy"] <= r["interval"][1] + 1e-12, name
        assert r["accuracy"] > 0.5, name  # synthetic tags follow the words: far above chance for every input
    assert 0 < small_run["word_identity"] <= 1


def test_the_verdict_follows_the_intervals():
    def entry(static, elmo, both, n=10_000):
        return {"n_test_words": n, "word_identity": 0.8,
                "inputs": {"static": {"accuracy": static}, "elmo": {"accuracy": elmo}, "concat": {"accuracy": both}}}
    assert concat.verdict(entry(0.817, 0.836, 0.883))[0] == "both"
    headline, (vs_static, vs_elmo) = concat.verdict(entry(0.817, 0.880, 0.883))
    assert headline == "one" and (vs_static.direction, vs_elmo.direction) == ("better", "tie")
    assert vs_elmo.low < 0 < vs_elmo.high and vs_elmo.diff == pytest.approx(0.003)
    assert concat.verdict(entry(0.817, 0.836, 0.83, n=200))[0] == "none"  # 200 words: every gap within error
    assert concat.compare(entry(0.9, 0.9, 0.7), "static").direction == "worse"
    assert concat.compare(entry(0.9, 0.9, 0.85), "word_identity").direction == "better"


def test_the_shipped_verdict_agrees_with_its_numbers():
    """assets/experiments.json: "both" exactly when [x; ELMo] beats each input alone beyond sampling error."""
    entry = view.concat(experiments.load_results())
    n, ours = entry["n_test_words"], entry["inputs"]["concat"]["accuracy"]
    beats = []
    for other in ("static", "elmo"):
        theirs = entry["inputs"][other]["accuracy"]
        half = 1.96 * np.sqrt(ours * (1 - ours) / n + theirs * (1 - theirs) / n)
        beats.append(ours - theirs > half)
    assert concat.verdict(entry)[0] == {2: "both", 1: "one", 0: "none"}[sum(beats)]


def test_a_c_at_the_top_of_the_grid_while_dev_still_rises_is_flagged():
    """#38 item 6: word2vec's C sat at the top of (0.01, 0.1, 1) with dev accuracy still rising; the grid now
    reaches 100 and the shipped choice lies inside it (or on a plateau)."""
    def entry(by_c: dict, chosen: float) -> dict:
        grid = list(by_c)
        inputs = {name: {"c": grid[0], "dev_accuracy_by_c": {str(c): 0.5 for c in grid}} for name in concat.INPUTS}
        inputs["static"] = {"c": chosen, "dev_accuracy_by_c": {str(c): v for c, v in by_c.items()}}
        return {"config": {"c_grid": grid}, "inputs": inputs}
    assert concat.grid_edges(entry({0.01: 0.8059, 0.1: 0.8217, 1.0: 0.825}, 1.0)) == ["static"]  # the old run
    assert concat.grid_edges(entry({0.1: 0.82, 1.0: 0.83, 10.0: 0.83}, 10.0)) == []  # a plateau: settled
    assert concat.grid_edges(entry({0.1: 0.82, 1.0: 0.83, 10.0: 0.81}, 1.0)) == []
    shipped = view.concat(experiments.load_results())
    assert max(shipped["config"]["c_grid"]) >= 100 and concat.grid_edges(shipped) == []


def test_the_training_data_disclosure_follows_the_model_cards():
    """word2vec-zh was trained on the People's Daily text the POS data comes from, mini-elmo-zh was not (their
    cards say so): the section discloses it for the shipped pair, and for no other pair."""
    from core.models.catalogue import MODELS_DIR

    for name, saw in concat.SAW_POS_TEXT.items():
        card = (MODELS_DIR / name / "README.md").read_text(encoding="utf-8")
        training = card[card.index("Trained only on `zh_mixed_v1.txt`"):].split("\n\n")[0]
        assert (f"{name} also on `peoples_daily_1998_01.txt`" in training) is saw, name
    shipped = view.concat(experiments.load_results())
    assert concat.uneven_training(shipped)
    assert not concat.uneven_training({**shipped, "static_model": "some-other-vectors"})


def test_without_a_static_model_nothing_is_trained(elmo):
    out = concat.run_concat([elmo], static=None, sentences=synthetic_sentences(20), **SMALL)
    assert out["inputs"] == {} and out["model"] is None
    assert view.concat({"concat": out}) is None and view.concat({}) is None
