"""core.experiments: probes and context-specificity on the tiny BERT fixture and synthetic data."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core import experiments
from core.compute.occurrences import find_spans
from core.experiments import STAGES, pos_probe, probe_presets, sense_probe, view
from core.experiments import context_specificity as cs
from core.experiments.corpus import coarse_tag, parse_line, parse_text, sample_split
from core.models.encoders import StaticEncoder
from model_support import synthetic_sentences

ROOT = Path(__file__).resolve().parent.parent

class FakeStatic(StaticEncoder):
    """A static model: one vector per word type (identical in every context), some words OOV."""

    def __init__(self, dim: int = 8, oov=("了",)):  # no files: vectors made up on the fly
        self.name, self.layer_names, self.max_tokens = "fake-static", ["word2vec"], 100_000
        rng = np.random.default_rng(3)
        self.vectors = rng.normal(size=(50, dim)).astype(np.float32)
        self._index: dict[str, int] = {}
        self._oov = set(oov)

    def word_vector(self, word):
        if word in self._oov:
            return None
        row = self._index.setdefault(word, len(self._index) % len(self.vectors))
        return self.vectors[row]


# ---- corpus ------------------------------------------------------------------------------------
def test_parse_line_drops_document_id_and_keeps_tags():
    pairs = parse_line("19980101-01-001-001/m  迈向/v  充满/v  希望/n  的/u  新/a  世纪/n  。/w")
    assert pairs[0] == ("迈向", "v") and pairs[-1] == ("。", "w") and len(pairs) == 7
    assert parse_line("１/２/m  张/q") == [("１/２", "m"), ("张", "q")]  # the tag is after the last slash


def test_parse_text_splits_sentences_and_caps_length():
    line = "我/r  吃/v  苹果/n  。/w  他/r  走/v  了/u  ！/w  " + "  ".join(["很/d"] * 120) + "  。/w"
    sentences = parse_text([line], max_chars=100, min_words=3)
    assert [s.text for s in sentences] == ["我吃苹果。", "他走了！"]
    assert sentences[0].spans == [(0, 1), (1, 2), (2, 4), (4, 5)]
    assert coarse_tag("nr") == "n" and coarse_tag("Vg") == "v" and coarse_tag("w") == "w"


def test_sample_split_is_deterministic_and_disjoint():
    pool = synthetic_sentences(40)
    a_train, a_test = sample_split(pool, 30, 10, seed=0)
    b_train, b_test = sample_split(pool, 30, 10, seed=0)
    assert a_train == b_train and a_test == b_test
    assert {id(s) for s in a_train}.isdisjoint({id(s) for s in a_test})


# ---- POS probe ---------------------------------------------------------------------------------
def test_probe_accuracy_separable_data_is_perfect():
    rng = np.random.default_rng(0)
    centres = {"n": np.eye(6)[0] * 5, "v": np.eye(6)[1] * 5, "u": np.eye(6)[2] * 5}
    labels = [list(centres)[i % 3] for i in range(90)]
    x = np.stack([centres[l] + rng.normal(scale=0.1, size=6) for l in labels])
    acc, predicted = pos_probe.probe_accuracy(x[:60], labels[:60], x[60:], labels[60:])
    assert acc == 1.0 and list(predicted) == labels[60:]
    # labels unrelated to the features: far from perfect
    shuffled = list(np.random.default_rng(1).permutation(labels))
    acc_random, _ = pos_probe.probe_accuracy(rng.normal(size=(60, 6)), shuffled[:60], rng.normal(size=(30, 6)),
                                             shuffled[60:])
    assert acc_random < 0.8


def test_pos_probe_on_tiny_bert(tiny_bert):
    result = pos_probe.run_pos_probe([tiny_bert], static=FakeStatic(), sentences=synthetic_sentences(60),
                                     n_train=45, n_test=15)
    entry = result["models"][tiny_bert.name]
    assert len(entry["fine"]) == len(entry["coarse"]) == tiny_bert.num_layers == 3
    assert all(0.0 <= a <= 1.0 for a in entry["fine"] + entry["coarse"])
    assert all(c >= f for f, c in zip(entry["fine"], entry["coarse"]))  # coarse collapses fine errors
    cfg = result["config"]
    assert cfg["n_train_sentences"] == 45 and cfg["n_test_sentences"] == 15
    assert cfg["n_test_words"] == sum(len(s.words) for s in sample_split(synthetic_sentences(60), 45, 15)[1])
    static = result["static"]
    assert static["model"] == "fake-static" and 0.0 < static["oov_rate_test"] < 0.3  # only 了 is OOV
    assert 0.0 <= result["baselines"]["majority"]["fine"] <= 1.0
    # word identity is almost perfect here: the synthetic tags are a function of the word (but 天气)
    assert result["baselines"]["word_identity"]["fine"] > 0.8


def test_unavailable_model_is_skipped_with_reason(tiny_bert):
    result = pos_probe.run_pos_probe([tiny_bert, "mini-nonexistent-zh"], sentences=synthetic_sentences(20),
                                     n_train=15, n_test=5)
    assert "mini-nonexistent-zh" in result["skipped"]
    assert set(result["skipped"]["mini-nonexistent-zh"]) == {"zh", "en"}


# ---- sense probe -------------------------------------------------------------------------------
def test_loo_centroid_accuracy_separable_and_static():
    labels = ["a"] * 5 + ["b"] * 5
    x = np.array([[1.0, 0.1 * i] for i in range(5)] + [[-1.0, 0.1 * i] for i in range(5)])
    assert sense_probe.loo_centroid_accuracy(x, labels) == 1.0
    same = np.ones((10, 3))  # a static model: every occurrence has the same vector -> chance
    assert sense_probe.loo_centroid_accuracy(same, labels) == 0.5
    assert sense_probe.loo_centroid_accuracy(np.ones((6, 3)), ["b", "b", "b", "b", "a", "a"]) == pytest.approx(2 / 6)


def test_sense_probe_on_tiny_bert(tiny_bert):
    sets = [{"word": "苹果", "file": None,
             "sentences": ["我吃了一个苹果", "今天吃苹果", "水果是苹果",
                           "苹果发布新手机", "苹果公司发布了", "苹果手机"],
             "labels": ["水果", "水果", "水果", "公司", "公司", "公司"]}]
    result = sense_probe.run_sense_probe([tiny_bert], static=FakeStatic(), sense_sets=sets)
    entry = result["models"][tiny_bert.name]
    assert len(entry["mean"]) == tiny_bert.num_layers
    assert all(0.0 <= a <= 1.0 for a in entry["mean"])
    assert entry["per_word"]["苹果"]["n"] == 6
    assert result["static"]["mean"] == [0.5]  # identical vectors: the alphabetically first sense, 3 of 6
    assert result["words"][0]["chance"] == 0.5


@pytest.mark.parametrize("word,name", sense_probe.SENSE_SETS)
def test_sense_files_are_well_formed(word, name):
    sentences, labels = sense_probe.read_sense_file(ROOT / "assets" / "eval" / name)
    text = (ROOT / "assets" / "eval" / name).read_text(encoding="utf-8")
    assert text.startswith("# ")
    counts = {label: labels.count(label) for label in set(labels)}
    assert len(counts) >= 2 and min(counts.values()) >= 12, counts
    assert all(len(find_spans(s, word)) == 1 for s in sentences), "the target must occur exactly once"
    assert len(set(sentences)) == len(sentences)


# ---- context-specificity -----------------------------------------------------------------------
def test_identical_static_vectors_have_self_similarity_one():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(1, 1, 16))
    occurrences = {"苹果": np.repeat(v, 7, axis=1), "手机": np.repeat(rng.normal(size=(1, 1, 16)), 4, axis=1)}
    sentences = [rng.normal(size=(1, 5, 16)) for _ in range(6)]
    m = cs.specificity_measures(occurrences, sentences, n_pairs=200)
    assert m["self_similarity"] == [pytest.approx(1.0)]
    assert m["per_word"]["苹果"] == [pytest.approx(1.0)]
    assert m["self_similarity_adjusted"][0] == pytest.approx(1.0 - m["anisotropy"][0])
    assert abs(m["anisotropy"][0]) < 0.2  # random directions are nearly isotropic


def test_measures_known_values():
    # a sentence of two orthogonal unit vectors: cos(v_i, mean) = cos 45°
    assert cs.intra_sentence_similarity(np.eye(2)) == pytest.approx(math.sqrt(0.5))
    assert cs.self_similarity(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])) == pytest.approx(1 / 3)
    pairs = cs.random_pairs([3, 2, 4], 50, seed=1)
    owner = np.repeat([0, 1, 2], [3, 2, 4])
    assert len(pairs) == 50 and np.all(owner[pairs[:, 0]] != owner[pairs[:, 1]])
    # every vector the same direction: anisotropy 1
    same = [np.ones((1, 3, 4)), np.ones((1, 2, 4))]
    assert cs.specificity_measures({"x": np.ones((1, 2, 4))}, same, n_pairs=20)["anisotropy"] == [pytest.approx(1.0)]


def test_context_specificity_on_tiny_bert_and_static(tiny_bert):
    result = cs.run_context_specificity([tiny_bert], static=FakeStatic(), sentences=synthetic_sentences(80),
                                        n_words=5, max_contexts=6, min_contexts=3, n_pairs=300)
    cfg = result["config"]
    assert cfg["n_words"] == 5 and all(2 <= c <= 6 for c in cfg["contexts_per_word"].values())
    assert "。" not in cfg["words"]  # punctuation excluded
    bert = result["models"][tiny_bert.name]
    assert len(bert["self_similarity"]) == tiny_bert.num_layers
    assert all(-1.0 <= v <= 1.0 for v in bert["self_similarity"] + bert["anisotropy"] + bert["intra_sentence"])
    static = result["static"]
    assert static["self_similarity"] == [pytest.approx(1.0)]  # one vector per word type
    assert "了" in static["dropped_words"] or "了" not in cfg["words"]  # OOV words have no vector


# ---- presets and layer comparisons ---------------------------------------------------------------
def fake_results(pos, senses, model="mini-elmo-zh", n_pos=10_000, n_senses=(40, 40), pos_outcomes=None,
                 sense_outcomes=None):
    """Probe results of one model; without outcomes (an older file) the comparisons are unpaired. ``sense_outcomes``:
    one word's per-layer outcome strings (then ``n_senses`` is that word's one size)."""
    words = [{"word": f"w{i}", "n": n} for i, n in enumerate(n_senses)]
    per_word = {w["word"]: {"n": w["n"], "accuracy": senses} for w in words}
    if sense_outcomes is not None:
        per_word["w0"]["outcomes"] = sense_outcomes
    pos_entry = {"fine": pos} if pos_outcomes is None else {"fine": pos, "outcomes": {"fine": pos_outcomes}}
    return {"pos": {"models": {model: pos_entry}, "config": {"n_test_words": n_pos}},
            "senses": {"models": {model: {"mean": senses, "per_word": per_word}}, "words": words}}


def test_probe_presets_keep_only_differences_beyond_sampling_error():
    presets = probe_presets(fake_results([0.80, 0.88, 0.86], [0.50, 0.70, 0.80]))
    # 10,000 test words: 0.88 vs 0.86 is beyond error (±0.9 points), 0.80 far behind -> all weight on layer 1
    assert presets["syntax"]["s"] == [0.0, 1.0, 0.0] and presets["syntax"]["tied"] == [1]
    # 80 sentences: 0.80 vs 0.70 is within error (about ±13 points), 0.50 is not -> layers 1 and 2 share s
    assert presets["semantics"]["s"] == [0.0, 0.5, 0.5] and presets["semantics"]["tied"] == [1, 2]
    assert presets["semantics"]["best"] == 2 and presets["semantics"]["n"] == 80
    assert not presets["semantics"]["paired"]  # no outcomes stored: independent samples, and the page says so
    for preset in presets.values():
        assert sum(preset["s"]) == pytest.approx(1.0)
    # a gap that a temperature-0.05 softmax would turn into s2 = 0.84 gives no preference on 40 sentences
    noisy = probe_presets(fake_results([0.9, 0.9, 0.9], [0.46, 0.70, 0.79], n_senses=(20, 20)))
    assert noisy["semantics"]["s"] == [0.0, 0.5, 0.5] and noisy["syntax"]["s"] == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError):
        probe_presets(fake_results([0.8, 0.9, 0.9], [0.5, 0.5, 0.5], model="other"))


def nested_outcomes(n: int, rights: list[int]) -> list[str]:
    """Per-layer outcome strings on ``n`` items where each layer gets the first ``rights[j]`` items right: a layer
    with more right items is right wherever a weaker one is (every disagreement goes one way)."""
    return ["1" * k + "0" * (n - k) for k in rights]


def test_two_layers_on_the_same_items_are_compared_paired():
    """60 % against 50 % on the same 100 items, the ten disagreements all one way: the independent-samples margin
    (about ±14 points) calls it a tie, the exact McNemar test (10 to 0, p = 0.002) a difference."""
    outcomes = nested_outcomes(100, [30, 50, 60])
    unpaired = view.LayerScores([0.3, 0.5, 0.6], 100)
    paired = view.LayerScores([0.3, 0.5, 0.6], 100, outcomes)
    assert view.compare_layers(unpaired, 2, 1).verdict == "tie"
    comparison = view.compare_layers(paired, 2, 1)
    assert comparison.paired and comparison.verdict == "higher" and comparison.p_value < 0.01
    assert comparison.diff == pytest.approx(0.10) and 0 < comparison.low < comparison.diff <= comparison.high
    assert view.layer_ties(unpaired).tied == [1, 2] and view.layer_ties(paired).tied == [2]
    # the presets follow the paired ties: the semantics preset now weights layer 2 alone
    presets = probe_presets(fake_results([0.8, 0.9, 0.9], [0.3, 0.5, 0.6], n_senses=(100,), sense_outcomes=outcomes))
    assert presets["semantics"]["tied"] == [2] and presets["semantics"]["s"] == [0.0, 0.0, 1.0]
    assert presets["semantics"]["paired"]
    assert view.layer_finding(paired, "senses").agreement == "same"  # layer 2 above layer 1: the paper's direction


def test_the_word_sense_finding_of_the_shipped_results_is_the_papers_direction():
    """Issue #48: on the same 137 sentences mini-elmo-zh's layer 2 − layer 1 is +8.0 points, 15 to 4 discordant,
    exact McNemar p ≈ 0.019: the paper's direction (Peters et al. 2018, Table 5), which the unpaired margin missed."""
    results = experiments.load_results()
    assert view.paper_findings(results)[1]["senses"] == "same"
    scores = view.sense_scores(results, "mini-elmo-zh")
    assert scores.paired and scores.n == sum(w["n"] for w in results["senses"]["words"])
    finding = view.layer_finding(scores, "senses")
    assert finding.agreement == "same" and finding.comparison.paired and finding.comparison.p_value < 0.05
    assert (finding.comparison.a_only, finding.comparison.b_only) == (15, 4)  # sentences only layer 2 / 1 gets right
    # the stored presets are the policy's: layer 1 falls behind layer 2 beyond sampling error
    stored, computed = results["presets"], probe_presets(results)
    assert {name: (p["best"], p["tied"], p["s"]) for name, p in stored.items()} == {
        name: (p["best"], p["tied"], p["s"]) for name, p in computed.items()}
    assert results["presets"]["semantics"]["tied"] == [2]


def test_probe_outcomes_are_the_stored_accuracies():
    """The per-item outcomes the comparisons read give back the accuracies the charts draw."""
    results = experiments.load_results()
    for entry in results["senses"]["models"].values():
        for row in entry["per_word"].values():
            assert [o.count("1") / len(o) for o in row["outcomes"]] == pytest.approx(row["accuracy"], abs=1e-4)
    n = results["pos"]["config"]["n_test_words"]
    for entry in results["pos"]["models"].values():
        for tagset in ("fine", "coarse"):
            assert all(len(o) == n for o in entry["outcomes"][tagset])
            assert [o.count("1") / n for o in entry["outcomes"][tagset]] == pytest.approx(entry[tagset], abs=1e-4)


def test_loo_centroid_outcomes_are_per_item():
    labels = ["a"] * 3 + ["b"] * 3
    x = np.array([[1.0, 0.0], [1.0, 0.1], [-1.0, 0.0], [-1.0, 0.0], [-1.0, 0.1], [-1.0, 0.2]])
    assert sense_probe.loo_centroid_outcomes(x, labels) == [1, 1, 0, 1, 1, 1]  # the third "a" sits among the b's
    assert sense_probe.loo_centroid_accuracy(x, labels) == pytest.approx(5 / 6)


def test_context_specificity_errors_and_paired_change():
    """Standard errors over words, sentences and pairs; the change from layer 1 to the top is paired."""
    rng = np.random.default_rng(0)
    base = rng.normal(size=(1, 12, 16))
    # layer 0 = layer 1 = the same vectors, layer 2 = noisier copies: self-similarity falls at the top
    occurrences = {f"w{i}": np.concatenate([np.repeat(base[:, i:i + 1], 6, axis=1)] * 2
                                           + [np.repeat(base[:, i:i + 1], 6, axis=1) + rng.normal(size=(1, 6, 16))])
                   for i in range(12)}
    sentences = [rng.normal(size=(3, 5, 16)) for _ in range(20)]
    m = cs.specificity_measures(occurrences, sentences, n_pairs=300)
    per_word = np.array(list(m["per_word"].values()))
    assert m["se"]["self_similarity"][2] == pytest.approx(per_word[:, 2].std(ddof=1) / np.sqrt(12))
    assert m["se"]["self_similarity"][1] == pytest.approx(0.0)  # every word identical in every context
    assert all(v > 0 for v in m["se"]["intra_sentence"] + m["se"]["anisotropy"])
    change = m["change"]["self_similarity_adjusted"]
    adjusted = m["self_similarity_adjusted"]
    assert (change["from"], change["to"]) == (1, 2) and change["value"] == pytest.approx(adjusted[2] - adjusted[1])
    assert change["value"] < -10 * change["se"]  # a clear fall, far beyond its error
    two = cs.specificity_measures({w: v[:2] for w, v in occurrences.items()}, [s[:2] for s in sentences], n_pairs=50)
    assert two["change"] == {"self_similarity_adjusted": None, "intra_sentence_adjusted": None}  # needs 3 layers


def test_cli_quick_end_to_end(tiny_bert_dir, tmp_path):
    """python -m core.experiments on a synthetic corpus file with the tiny BERT: JSON written."""
    from core.experiments.__main__ import main

    lines = []
    for i, s in enumerate(synthetic_sentences(420, seed=5)):
        tokens = [f"{w}/{t}" for w, t in zip(s.words, s.tags)]
        if i % 10 == 0:
            tokens.insert(0, f"19980101-01-001-{i:03d}/m")
        lines.append("  ".join(tokens))
    corpus = tmp_path / "pd.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "experiments.json"
    assert main(["--models", str(tiny_bert_dir), "--static", "none", "--quick", "--corpus", str(corpus),
                 "--out", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["quick"] is True and data["pos"]["config"]["n_train_sentences"] == 300
    assert data["published"]["pos"]["layers"] == {"biLM layer 1": 97.3, "biLM layer 2": 96.8}
    assert set(data["timing_seconds"]) == {"pos", "senses", "context", "learned_mix", "concat", "total"}
    assert data["presets"] is None  # no ELMo in this run
    assert data["learned_mix"]["model"] is None and data["learned_mix"]["tasks"] == {}  # nor a learned mix
    assert data["concat"]["inputs"] == {}  # nor a concatenation
    assert len(data["senses"]["words"]) == len(sense_probe.SENSE_SETS)

    # --only reruns the named stages and keeps the others of the file, with their timings
    args = ["--models", str(tiny_bert_dir), "--static", "none", "--quick", "--corpus", str(corpus), "--out", str(out)]
    assert main(args + ["--only", "senses"]) == 0
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["stages_rerun"] == ["senses"]
    for stage in ("pos", "context", "learned_mix", "concat"):
        assert again[stage] == data[stage] and again["timing_seconds"][stage] == data["timing_seconds"][stage]
    assert again["timing_seconds"]["total"] == pytest.approx(sum(again["timing_seconds"][k] for k in STAGES), abs=0.2)
    assert main(args[:-1] + [str(tmp_path / "none.json"), "--only", "senses"]) == 2  # nothing to keep
    assert main([a for a in args if a != "--quick"] + ["--only", "senses"]) == 2  # other mode: refused
    assert json.loads(out.read_text(encoding="utf-8")) == again  # a refused run writes nothing


def test_stale_models_follow_the_weight_file_content(tmp_path, monkeypatch):
    import core.experiments as experiments

    (tmp_path / "mini-bert-zh").mkdir()
    weights = tmp_path / "mini-bert-zh" / "model.safetensors"
    weights.write_bytes(b"first version")
    monkeypatch.setattr(experiments, "MODELS_DIR", tmp_path)
    results = {"requested_models": ["mini-bert-zh", "/some/dir"],
               "checkpoints": {"mini-bert-zh": experiments.checkpoint_fingerprint("mini-bert-zh")}}
    assert experiments.checkpoint_fingerprint("/some/dir") is None
    assert experiments.stale_models(results) == []
    weights.write_bytes(b"second version")
    assert experiments.stale_models(results) == ["mini-bert-zh"]
