"""app_pages/evidence/page.py with AppTest: renders from assets/experiments.json, every control, recompute."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import core.experiments as experiments
from core.compute.stats import Z_95, paired, wilson_interval
from core.experiments import view
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from core.models import catalogue
from ui.i18n import translate

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "app_pages" / "evidence" / "page.py")
RESULTS = ROOT / "assets" / "experiments.json"
TIMEOUT = 90


def real_results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def with_fake_elmo(results: dict) -> dict:
    """The real results plus an ELMo entry (3 layers) so the ELMo-specific lines can be checked."""
    data = copy.deepcopy(results)
    elmo = "mini-elmo-zh"
    data["pos"]["models"][elmo] = {"layer_names": ["token layer", "biLSTM 1", "biLSTM 2"], "kind": "elmo",
                                   "fine": [0.61, 0.83, 0.79], "coarse": [0.70, 0.88, 0.85]}
    first = next(iter(data["senses"]["models"].values()))
    data["senses"]["models"][elmo] = {
        "layer_names": ["token layer", "biLSTM 1", "biLSTM 2"], "kind": "elmo",
        "per_word": {w: {"n": r["n"], "missing": 0, "oov": False, "accuracy": [0.5, 0.6, 0.7]}
                     for w, r in first["per_word"].items()},
        "mean": [0.5, 0.6, 0.7]}
    some = next(iter(data["context"]["models"].values()))
    data["context"]["models"][elmo] = {
        **{k: some[k] for k in ("n_words", "n_occurrences", "dropped_words", "n_pairs")},
        "layer_names": ["token layer", "biLSTM 1", "biLSTM 2"], "kind": "elmo",
        "self_similarity": [1.0, 0.7, 0.5], "intra_sentence": [0.3, 0.5, 0.6], "anisotropy": [0.2, 0.3, 0.35],
        "self_similarity_adjusted": [0.8, 0.4, 0.15], "intra_sentence_adjusted": [0.1, 0.2, 0.25],
        "per_word": {w: [1.0, 0.7, 0.5] for w in some["per_word"]},
        "se": {"self_similarity": [0.0, 0.02, 0.03], "intra_sentence": [0.004, 0.004, 0.004],
               "anisotropy": [0.003, 0.003, 0.003]},
        "change": {"self_similarity_adjusted": {"from": 1, "to": 2, "value": -0.25, "se": 0.03},
                   "intra_sentence_adjusted": {"from": 1, "to": 2, "value": 0.05, "se": 0.005}}}
    data["presets"] = experiments.probe_presets(data)
    return data


def page(monkeypatch, tmp_path, results: dict | None = None, lang: str = "zh", query: dict | None = None) -> AppTest:
    """The page alone, reading ``results`` (default: the committed assets/experiments.json)."""
    if results is not None:
        path = tmp_path / "experiments.json"
        experiments.save_results(results, path)
        monkeypatch.setattr(experiments, "DEFAULT_OUT", path)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.session_state["lang"] = lang
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "subheader", "title"):
        parts += [str(e.value) for e in at.get(kind)]
    return "\n".join(parts)


def figures(at: AppTest) -> list[dict]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


def trace(fig: dict, name: str) -> dict:
    return next(tr for tr in fig["data"] if tr.get("name") == name)


def test_cached_results_file_exists_and_is_full():
    data = real_results()
    assert data["version"] == experiments.FORMAT_VERSION
    assert data["published"]["pos"]["layers"] == {"biLM layer 1": 97.3, "biLM layer 2": 96.8}
    assert "mini-bert-zh" in data["pos"]["models"]


def test_renders_from_the_json_with_published_numbers_and_sample_sizes(monkeypatch, tmp_path):
    at = page(monkeypatch, tmp_path)
    data = real_results()
    cfg = data["pos"]["config"]
    body = texts(at)
    assert "97.3" in body and "96.8" in body
    for n in (cfg["n_train_sentences"], cfg["n_test_sentences"], cfg["n_train_words"], cfg["n_test_words"]):
        assert str(n) in body
    assert at.query_params["section"] == "pos"
    fig = figures(at)[0]
    bert = data["pos"]["models"]["mini-bert-zh"]
    assert trace(fig, "mini-bert-zh")["y"] == pytest.approx(bert["fine"])
    # 95% Wilson intervals over the test words as error bars, and a best layer read with its ties
    high = [wilson_interval(v, cfg["n_test_words"])[1] for v in bert["fine"]]
    assert trace(fig, "mini-bert-zh")["error_y"]["array"] == pytest.approx([h - v for h, v in zip(high, bert["fine"])])
    ties = view.layer_ties(view.pos_scores(data, "mini-bert-zh"))
    assert ties.paired  # the shipped results store every test word's outcome: the comparisons are paired
    assert (f"最好的是第 {ties.best} 层（{100 * bert['fine'][ties.best]:.1f}%）" in body
            and f"（{translate('zh', 'evidence.method.paired')}）：{'、'.join(map(str, ties.tied))}。" in body)
    # "no more than a lookup table" only for models none of whose layers beats the lookup beyond error (paired)
    lookup = view.lookup_scores(data)
    below = [name for name in data["pos"]["models"]
             if not any(paired(o, lookup.outcome(0)).verdict == "higher"
                        for o in data["pos"]["models"][name]["outcomes"]["fine"])]
    how_to_read = "**怎么读这张图**"
    assert (how_to_read in body) is bool(below) and all(name in body.split(how_to_read)[-1] for name in below)


def test_pos_tagset_switch_changes_the_curve(monkeypatch, tmp_path):
    data = with_fake_elmo(real_results())
    at = page(monkeypatch, tmp_path, data)
    assert "83.0%" in texts(at) and "79.0%" in texts(at)  # ELMo layer 1 vs 2, fine tags
    assert "与论文同向" in texts(at)
    at.radio(key="_ev_tags").set_value("coarse").run()
    assert not at.exception
    assert at.query_params["tags"] == "coarse"
    fig = figures(at)[0]
    assert trace(fig, "mini-elmo-zh")["y"] == pytest.approx([0.70, 0.88, 0.85])
    assert trace(fig, "mini-bert-zh")["y"] == pytest.approx(data["pos"]["models"]["mini-bert-zh"]["coarse"])


def test_senses_section_word_select(monkeypatch, tmp_path):
    data = with_fake_elmo(real_results())
    at = page(monkeypatch, tmp_path, data, query={"section": "senses"})
    body = texts(at)
    assert "67.4" in body and "69.0" in body and "71.1" in body
    assert "44" in body  # 苹果: 22 + 22 sentences
    assert at.radio(key="_ev_section").value == "senses"
    bert = data["senses"]["models"]["mini-bert-zh"]
    pooled = ["".join(bert["per_word"][w]["outcomes"][j] for w in view.sense_words(data))
              for j in range(len(bert["layer_names"]))]  # every word's sentences pooled, as the verdicts read them
    assert trace(figures(at)[0], "mini-bert-zh")["y"] == pytest.approx([o.count("1") / len(o) for o in pooled])
    at.selectbox(key="_ev_word").set_value("包袱").run()
    assert not at.exception and at.query_params["word"] == "包袱"
    assert trace(figures(at)[0], "mini-bert-zh")["y"] == pytest.approx(bert["per_word"]["包袱"]["accuracy"])
    names = [tr.get("name", "") for tr in figures(at)[0]["data"]]
    assert any("33.3%" in n for n in names)  # chance for the three senses of 包袱
    assert "「包袱」，39 句" in texts(at)  # the result lines describe the chosen word, not the mean


def test_context_section_modes_and_model(monkeypatch, tmp_path):
    data = with_fake_elmo(real_results())
    bert = data["context"]["models"]["mini-bert-zh"]
    intra_change = dict(bert["change"]["intra_sentence_adjusted"])  # the committed BERT figures
    bert["change"]["self_similarity_adjusted"] = {"from": 1, "to": 4, "value": -0.02, "se": 0.011}  # within error
    at = page(monkeypatch, tmp_path, data, lang="en", query={"section": "context"})
    cfg = data["context"]["config"]
    body = texts(at)
    assert str(cfg["n_occurrences"]) in body and str(cfg["n_sentences"]) in body
    assert "It falls with depth (by more than the sampling error, ±0.059)" in body  # fake ELMo: −0.25 ± 1.96·0.03
    assert "The change lies within the sampling error (±0.022)" in body  # BERT made flat above
    # intra-sentence similarity against Ethayarajh: ELMo rises in the paper (fake ELMo +0.05 ± 0.01 agrees),
    # BERT falls in the paper; the verdict on the committed BERT figures follows their change and its error
    assert "the same way as for ELMo in the paper" in body
    bert_way = {"up": "the opposite of BERT", "down": "the same way as for BERT",
                "flat": "within the sampling error"}[view.change_trend(intra_change)[0]]
    assert bert_way in body.replace("**", "")
    # layer 0's self-similarity is read from the table, not typed (#38 item 5): BERT's is far from 1
    assert f"its self-similarity there is {bert['self_similarity'][0]:.3f}, not 1" in body
    assert f"a word's self-similarity there is {1.0:.3f}" in body  # the fake ELMo's token layer
    assert "slightly below 1" not in body and "final weights" not in body
    fig = figures(at)[0]
    elmo_traces = [tr for tr in fig["data"] if tr.get("name") == "mini-elmo-zh"]
    assert elmo_traces[0]["y"] == pytest.approx([0.8, 0.4, 0.15])  # adjusted by default
    # error bars: 1.96 standard errors (Z_95), an adjusted value's including the anisotropy's
    assert elmo_traces[0]["error_y"]["array"] == pytest.approx([Z_95 * np.hypot(se, 0.003) for se in (0.0, 0.02, 0.03)])
    at.radio(key="_ev_ctx").set_value("raw").run()
    assert not at.exception and at.query_params["ctx"] == "raw"
    elmo_traces = [tr for tr in figures(at)[0]["data"] if tr.get("name") == "mini-elmo-zh"]
    assert elmo_traces[0]["y"] == pytest.approx([1.0, 0.7, 0.5])
    at.selectbox(key="_ev_ctx_model").set_value("mini-bert-zh").run()
    assert not at.exception and at.query_params["ctx_model"] == "mini-bert-zh"
    heat = figures(at)[1]
    assert len(heat["data"][0]["z"]) == cfg["n_words"] - len(data["context"]["models"]["mini-bert-zh"]["dropped_words"])


def test_presets_section(monkeypatch, tmp_path):
    data = with_fake_elmo(real_results())  # fake ELMo: POS 61 / 83 / 79 % on the real test words, senses 50 / 60 / 70 %
    at = page(monkeypatch, tmp_path, data, query={"section": "presets"})
    fig = figures(at)[0]
    expected = experiments.probe_presets(data)
    assert expected["syntax"]["s"] == [0.0, 1.0, 0.0]  # 4 points on 11,536 words: beyond error
    assert expected["semantics"]["s"] == [0.0, 0.5, 0.5]  # 10 points on 137 sentences: within error
    assert fig["data"][0]["y"] == pytest.approx(expected["syntax"]["s"])
    assert fig["data"][1]["y"] == pytest.approx(expected["semantics"]["s"])
    assert fig["data"][2]["y"] == pytest.approx([0.5, 0.4, 0.1])  # the lecture's example, as the lecture gives it
    body = texts(at)
    assert "**两组预设不同**" in body and "语义预设给第 1、2 层" in body
    # the fake ELMo stores no outcomes (an older file): compared as independent samples, and the line says so
    method = translate("zh", "evidence.method.independent")
    assert f"相差在抽样误差之内的层（{method}）：1、2 → s = [0.00, 0.50, 0.50]" in body


def test_presets_of_the_shipped_results_say_what_the_probes_support(monkeypatch, tmp_path):
    at = page(monkeypatch, tmp_path, query={"section": "presets"})
    presets = experiments.probe_presets(real_results())
    same = presets["syntax"]["tied"] == presets["semantics"]["tied"]
    assert ("**两组预设相同**" in texts(at)) is same and ("**两组预设不同**" in texts(at)) is not same
    # issue #48: paired on the 137 sentences, layer 1 falls behind layer 2 (p ≈ 0.019): the presets differ
    assert presets["semantics"]["tied"] == [2] and "**两组预设不同**" in texts(at)
    scores = {"syntax": view.pos_scores(real_results(), "mini-elmo-zh"),
              "semantics": view.sense_scores(real_results(), "mini-elmo-zh")}
    for name, preset in presets.items():  # a layer loses weight only where the paired test tells it from the best
        for j, s in enumerate(preset["s"]):
            beyond = view.compare_layers(scores[name], preset["best"], j).verdict == "higher"
            assert (s == 0.0) is beyond, (j, preset)


def test_presets_missing_without_elmo(monkeypatch, tmp_path):
    data = real_results()
    data["pos"]["models"].pop("mini-elmo-zh", None)
    at = page(monkeypatch, tmp_path, data, query={"section": "presets"})
    assert "mini-elmo-zh" in texts(at) and not figures(at)


def test_unavailable_model_reason_is_shown(monkeypatch, tmp_path):
    problem = LabError("model_not_trained", name="mini-elmo-zh", directory="/x/mini-elmo-zh", files="model.safetensors")
    infos = [catalogue.ModelInfo("mini-bert-zh", "bert", True, None, 5, ""),
             catalogue.ModelInfo("mini-elmo-zh", "elmo", False, problem, None, "")]
    monkeypatch.setattr(catalogue, "list_models", lambda: infos)
    at = page(monkeypatch, tmp_path)
    shown = problem.message("zh", markdown=False)  # in the UI language; the page's copy is escaped Markdown
    assert any(shown in w.value.replace("\\", "") for w in at.warning)


def test_no_results_file(monkeypatch, tmp_path):
    monkeypatch.setattr(experiments, "DEFAULT_OUT", tmp_path / "missing.json")
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    assert any("python -m core.experiments" in i.value for i in at.info)


def test_corrupt_results_file_shows_error(monkeypatch, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(experiments, "DEFAULT_OUT", bad)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception and at.error and md_escape("bad.json") in at.error[0].value  # Markdown source


def test_recompute_button_uses_progress_and_shows_session_results(monkeypatch, tmp_path, request):
    from core.runtime.concurrency import HEAVY_JOBS, heavy

    data = real_results()
    calls = {}

    def fake_run_all(models, *, static, quick, progress, **_):
        calls.update(models=list(models), static=static, quick=quick)
        progress(0.5, "half")
        fresh = copy.deepcopy(data)
        fresh["created"] = "2030-01-01T00:00:00+00:00"
        fresh["timing_seconds"]["total"] = 12.0
        return fresh

    monkeypatch.setattr(experiments, "run_all", heavy(fake_run_all))  # a job the gate admits
    request.addfinalizer(lambda: HEAVY_JOBS.discard(fake_run_all))
    monkeypatch.setenv("LAB_ALLOW_TRAINING", "1")  # the presenter's switch (off by default: tests/test_security.py)
    at = page(monkeypatch, tmp_path, query={"section": "recompute"})
    assert at.toggle(key="_ev_quick").value is True
    at.toggle(key="_ev_quick").set_value(False).run()
    assert at.query_params["quick"] == "0"
    at.button(key="_ev_run").click().run()
    assert not at.exception
    assert calls == {"models": ["mini-elmo-zh", "mini-bert-zh"], "static": "word2vec-zh", "quick": False}
    assert "12" in at.success[0].value
    assert "2030年01月01日 00:00（UTC）" in texts(at)  # the provenance line now describes the session results
    at.button(key="_ev_reset").click().run()
    assert not at.exception and "2030年01月01日" not in texts(at)


def test_english_section_labels(monkeypatch, tmp_path):
    at = page(monkeypatch, tmp_path, lang="en")
    assert at.title[0].value == "Evidence: layer-wise findings"
    assert "Peters et al." in texts(at)


def test_registered_in_the_app_navigation():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("app_pages/evidence/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "证据：逐层实验"
    assert "97.3" in texts(at)


def test_training_budgets_of_the_compared_models_are_shown(monkeypatch, tmp_path):
    """ELMo and BERT are compared layer by layer here: their budgets (training.json) sit at the top."""
    from core.content.budgets import load_budgets, token_ratio
    from ui.i18n import translate

    at = page(monkeypatch, tmp_path)
    ratio = token_ratio(load_budgets(), catalogue.DEFAULT_BERT, catalogue.DEFAULT_ELMO)
    expected = translate("zh", "budget.ratio", larger=catalogue.DEFAULT_BERT, smaller=catalogue.DEFAULT_ELMO,
                         ratio=f"{ratio:.0f}")
    assert sum(expected in c.value for c in at.caption) == 1
    assert "2–4" not in texts(at)  # the old, wrong "2–4 hours each on 2 CPU cores"


def test_senses_note_computes_its_sample_sizes(monkeypatch, tmp_path):
    from ui.i18n import translate

    data = real_results()
    at = page(monkeypatch, tmp_path, query={"section": "senses"})
    words = data["senses"]["words"]
    per_sense = [c for w in words for c in w["senses"].values()]
    sizes = [w["n"] for w in words]
    note = translate("zh", "evidence.senses.note", n_words=len(words), n_sentences=sum(sizes),
                     per_sense=f"{min(per_sense)}–{max(per_sense)}",
                     step=f"{100 / max(sizes):.0f}–{100 / min(sizes):.0f}")
    assert note in [m.value for m in at.markdown]


@pytest.mark.parametrize("section", ["pos", "senses", "context"])  # presets: probe_presets' own message
def test_a_results_file_of_an_older_format_is_a_message_in_its_section(monkeypatch, tmp_path, section):
    """A section that does not find what it reads says so where it stands and asks to recompute; the switch and the
    recomputation stay. (The page's try/except around the sections did not see the fragments' errors: Streamlit's
    redacted exception instead.)"""
    data = real_results()
    data[section] = {"older": True}
    at = page(monkeypatch, tmp_path, results=data, query={"section": section})
    assert not at.exception, [e.value for e in at.exception]
    assert any(e.value == at_text("evidence.bad_results", "KeyError") for e in at.error), [e.value for e in at.error]
    assert at.radio(key="_ev_section").value == section
    at.radio(key="_ev_section").set_value("recompute").run()
    assert not at.error and at.button(key="_ev_run")


def at_text(key: str, detail: str) -> str:
    return translate("zh", key, detail=detail)

def plain_answer_lines(at: AppTest) -> list[str]:
    """The plain answer's lines: the markdown after the question, split at its list items."""
    values = [str(m.value) for m in at.markdown]
    question = next(i for i, text in enumerate(values) if text.startswith("**问题**"))
    return values[question + 1].split("\n")


def test_the_page_opens_with_its_plain_answer_computed_from_the_results(monkeypatch, tmp_path):
    """A student at home reads which of the papers' findings our ELMo shows (issue #44), from the verdicts of the
    sections; a synthetic ELMo whose layer 2 wins POS and whose vectors grow alike with depth flips two of them."""
    model, findings = view.paper_findings(real_results())
    lines = plain_answer_lines(page(monkeypatch, tmp_path))
    assert lines[0] == (f"**答案（在我们的 {model} 上）**：论文的 3 条发现中，"
                        f"有 {sum(v == 'same' for v in findings.values())} 条在这里方向相同：")
    assert lines[1:] == [translate("zh", "evidence.qa.line", finding=translate("zh", f"evidence.qa.finding.{name}"),
                                   outcome=translate("zh", f"evidence.qa.outcome.{findings[name]}"))
                         for name in ("pos", "senses", "context")]
    flipped = copy.deepcopy(real_results())
    flipped["pos"]["models"][model]["fine"] = [0.5, 0.6, 0.9]  # layer 2 far ahead: the paper's opposite
    del flipped["pos"]["models"][model]["outcomes"]  # made-up accuracies have no outcomes: compared unpaired
    flipped["context"]["models"][model]["change"]["self_similarity_adjusted"] = {"from": 1, "to": 2, "value": 0.3,
                                                                                 "se": 0.01}
    assert view.paper_findings(flipped)[1] == {**findings, "pos": "opposite", "context": "opposite"}
    lines = plain_answer_lines(page(monkeypatch, tmp_path, flipped))
    assert "**方向相反**" in lines[1] and "**方向相反**" in lines[3]
    at = page(monkeypatch, tmp_path)
    at.session_state["present"] = True  # on the projector the lecturer says it
    at.run()
    assert not any(str(m.value).startswith("**问题**") for m in at.markdown)


def test_the_answer_box_and_the_sections_state_one_verdict(monkeypatch, tmp_path):
    """Issue #48: one computation behind the answer box and the section. On the shipped results the word-sense
    finding is the paper's direction, paired on the same 137 sentences, and both places say so."""
    _, findings = view.paper_findings(real_results())
    assert findings["senses"] == "same"
    for section, verdicts, line in (("pos", "evidence.verdict.pos_", 1), ("senses", "evidence.verdict.sense_", 2)):
        at = page(monkeypatch, tmp_path, query={"section": section})
        assert translate("zh", f"evidence.qa.outcome.{findings[section]}") in plain_answer_lines(at)[line]
        body = texts(at)
        # a verdict sentence is said when the text before and after its difference both are on the page
        said = [outcome for outcome in ("same", "opposite", "tie")
                if all(part in body for part in translate("zh", verdicts + outcome, difference="\x00").split("\x00"))]
        assert said == [findings[section]], said
    # 15 sentences only layer 2 gets right, 4 only layer 1: +8.0 points, the exact interval matching the exact McNemar
    # test (the issue's +1.9 to +14.1 is the normal (Wald) interval, which need not agree with the test)
    assert "第 2 层 − 第 1 层 = +8.0 个百分点（配对 95% 区间 +1.2 到 +12.2，精确 McNemar 检验 p = 0.019）" in body


def test_anisotropy_is_cited_as_ethayarajh_states_it():
    """Ethayarajh (2019, §4.1) finds contextual representations anisotropic in all non-input layers, not in every
    layer (#48); our own per-layer anisotropy is in the section's result lines."""
    assert "all non-input layers" in translate("en", "evidence.ctx.paper", pct=5)
    assert "除输入层外" in translate("zh", "evidence.ctx.paper", pct=5)
    assert "in every layer" not in translate("en", "evidence.ctx.paper", pct=5)
