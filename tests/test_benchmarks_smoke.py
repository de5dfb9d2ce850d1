"""The benchmark harness returns well-formed results (tiny sizes on the tiny BERT fixture).

No timing is asserted here: timings depend on the machine and its load. What is checked is the
shape of the report, the pass/ratio bookkeeping, the skip and inconclusive paths, that the slider
benchmark runs the page's own call, and that its forward-pass counter really counts (so its
"0 passes" can fail). The inconclusive decision itself: tests/test_benchmark_stats.py.
"""
from __future__ import annotations

import json
import math
import os

import pytest

from benchmarks import common, fillmask, slider
from benchmarks import run as bench

RESULT_KEYS = {"name", "value", "limit", "ratio_to_limit", "pass", "target", "unit", "skipped", "details"}


def check_result(result: dict) -> None:
    assert RESULT_KEYS <= set(result), result
    assert isinstance(result["name"], str) and result["name"]
    assert result["target"] in ("<=", ">=")
    if result["skipped"] or result.get("inconclusive"):  # no value, neither pass nor failure
        assert result["value"] is None and result["pass"] is None and result["reason"]
        return
    if result.get("error"):  # ran but broke: a failure with its reason
        assert result["pass"] is False and result["reason"]
        return
    assert isinstance(result["value"], (int, float)) and math.isfinite(result["value"]), result
    assert isinstance(result["pass"], bool)
    if result["limit"]:
        assert result["ratio_to_limit"] == pytest.approx(result["value"] / result["limit"], rel=1e-3, abs=1e-4)
    value, limit = result["value"], result["limit"]
    expected = value >= limit if result["target"] == ">=" else value <= limit
    assert result["pass"] is expected


def check_report(report: dict, names: set[str]) -> None:
    assert {"date", "mode", "machine", "loaded", "load_note", "config", "results", "summary"} <= set(report)
    machine = report["machine"]
    assert machine["cores"] >= 1 and isinstance(machine["cpu_model"], str)
    assert len(machine["load_average_start"]) == 3
    assert {r["name"] for r in report["results"]} == names
    for result in report["results"]:
        check_result(result)
    json.dumps(report)  # serialisable (no NaN/inf objects, no numpy scalars)


def test_make_result_bookkeeping():
    make_result = common.make_result
    low = make_result("x", 0.5, 2.0)
    assert low["pass"] is True and low["ratio_to_limit"] == 0.25 and low["target"] == "<="
    assert make_result("x", 3.0, 2.0)["pass"] is False
    assert make_result("y", 3.0, 2.0, higher_is_better=True)["pass"] is True
    assert make_result("y", 1.0, 2.0, higher_is_better=True)["pass"] is False
    assert make_result("z", 0, 0)["pass"] is True and make_result("z", 0, 0)["ratio_to_limit"] == 0.0
    assert make_result("z", 2, 0)["pass"] is False and make_result("z", 2, 0)["ratio_to_limit"] is None


def test_interleaved_rotates_order():
    calls = []
    times = common.interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b"),
                               "c": lambda: calls.append("c")}, 3)
    assert calls == list("abc" "bca" "cab")
    assert all(len(v) == 3 for v in times.values())


def test_sentences_are_deterministic_and_contain_the_word():
    first = common.make_sentences(300)
    assert first == common.make_sentences(300) and len(set(first)) == 300
    assert all(s.count(common.WORD) == 1 for s in first)
    labelled = common.make_labelled_sentences(300)
    assert [s for _, s in labelled] == first and {sense for sense, _ in labelled} == {"水果", "公司"}
    assert len(fillmask.FILL_MASK_SENTENCE.replace("[MASK]", "M")) == 30


def test_slider_positions_sweep_the_page_sliders():
    from app_pages.elmo_weights.mixer import W_RANGE
    from core.vectors.mix import normalised_s

    assert slider.W_RANGE == W_RANGE
    positions = slider.slider_positions(3, 7)
    tops = [values[-1] for values, _ in positions]
    assert tops[0] == slider.W_RANGE[0] and tops[-1] == slider.W_RANGE[1] and tops == sorted(tops)
    for values, gamma in positions:
        assert values[:2] == [0.0, 0.0] and values[2] == round(values[2], 2)
        assert 0.5 <= gamma <= 2.0 and gamma == round(gamma, 1)
        assert normalised_s(values, True).sum() == pytest.approx(1.0, abs=1e-12)


def test_slider_times_the_pages_mix_view_call(tiny_bert_dir, monkeypatch):
    from core.vectors import mix

    calls = []
    real = mix.mix_view

    def recorded(layer_stack, weights, gamma, pre_softmax, labels, projection=None):
        calls.append((pre_softmax, labels, projection))
        return real(layer_stack, weights, gamma, pre_softmax, labels, projection)

    monkeypatch.setattr(mix, "mix_view", recorded)
    cfg = common.Config.for_mode(True, elmo_model=str(tiny_bert_dir), slider_moves=6)
    remix, _ = slider.measure(cfg)
    assert len(calls) == 5 + 6  # the warm-up moves, then the timed ones
    for pre_softmax, labels, projection in calls:  # already normalised s, the view's labels and frame
        assert pre_softmax is False and projection is not None and set(labels) == {"水果", "公司"}
    assert remix["details"]["sense_accuracy_computed"] is True


def test_forward_counter_counts_real_passes(tiny_bert):
    counter = slider.ForwardCounter(tiny_bert)
    try:
        tiny_bert.encode(["我吃了一个苹果"])
        assert counter.passes == 1 and counter.module_calls > 0
        counter.reset()
        assert counter.passes == 0
    finally:
        counter.remove()
    tiny_bert.encode(["我吃了一个苹果"])
    assert counter.passes == 0  # removed: no more counting
    assert "forward" not in tiny_bert.model.__dict__


def test_cli_report_on_tiny_bert(tiny_bert_dir, tmp_path, capsys):
    out = tmp_path / "report.json"
    code = bench.main(["--only", "fillmask,slider", "--bert-model", str(tiny_bert_dir),
                       "--elmo-model", str(tiny_bert_dir), "--fillmask-reps", "3", "--slider-moves", "5",
                       "--json", str(out)])
    assert code == 0
    stdout, stderr = capsys.readouterr()
    report = json.loads(out.read_text(encoding="utf-8"))
    assert json.loads(stdout) == report
    check_report(report, {"fillmask_app_vs_bare_forward", "elmo_slider_remix_ms", "elmo_slider_forward_passes"})
    by_name = {r["name"]: r for r in report["results"]}
    for name in by_name:
        assert name in stderr  # the table
    assert not any(r["skipped"] or r.get("error") for r in report["results"]), report["results"]
    fill = by_name["fillmask_app_vs_bare_forward"]["details"]
    assert fill["tokens"] == 32 and fill["reps"] == 3 and fill["app_median_ms"] > 0 and fill["bare_median_ms"] > 0
    forward = by_name["elmo_slider_forward_passes"]
    assert forward["value"] == 0 and forward["pass"] is True and forward["details"]["counter_verified"] is True
    slider = by_name["elmo_slider_remix_ms"]["details"]
    assert slider["stack_shape"] == [3, 20, 32] and slider["moves"] == 5  # 2 layers + embeddings, 20 sentences


@pytest.mark.subprocess  # the benchmark times the CLI as processes
def test_embed_on_tiny_bert(tiny_bert_dir):
    cfg = common.Config.for_mode(True, bert_model=str(tiny_bert_dir), embed_sentences=12, embed_reps=1,
                                 embed_warmup=False, only=("embed",))
    report = bench.run_benchmarks(cfg)
    names = {"embed_cli_vs_batched_throughput", "embed_cli_vs_loop_speedup"}
    check_report(report, names)
    assert set(report["summary"]["inconclusive"]) == names and report["summary"]["failed"] == []
    for result in report["results"]:
        # one repetition gives no spread of the CLI's startup: never a ratio, whatever it came out as
        assert result["inconclusive"] is True and "1 repetition" in result["reason"]
        details = result["details"]
        assert details["cli_net_spread_s"] is None and "point_estimate" in details
        assert details["sentences"] == 12 and details["cli_output_lines"] == 12 and details["batch_size"] == 32
        assert set(details["times_s"]) == {"cli_one", "cli_full", "batched", "loop"}
        assert all(len(v) == 1 for v in details["times_s"].values())


def test_missing_model_is_skipped_with_reason(tmp_path):
    cfg = common.Config.for_mode(True, bert_model=str(tmp_path / "nope"), elmo_model=str(tmp_path / "nope"),
                                 only=("fillmask", "embed", "slider"))
    report = bench.run_benchmarks(cfg)
    assert len(report["results"]) == 5
    for result in report["results"]:
        check_result(result)
        assert result["skipped"] and "nope" in result["reason"]
    assert report["summary"]["measured"] == 0 and len(report["summary"]["skipped"]) == 5


def test_cold_start_skips_without_browser(tmp_path):
    cfg = common.Config.for_mode(True, chromium=str(tmp_path / "no-chromium"), only=("coldstart",))
    results = bench.run_benchmarks(cfg)["results"]
    assert [r["name"] for r in results] == ["cold_start_seconds", "cold_start_peak_rss_gb"]
    for result in results:
        check_result(result)
        assert result["skipped"] and "no-chromium" in result["reason"]


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        bench.parse_args(["--only", "nonsense"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--sentences", "0"])
    _, cfg = bench.parse_args(["--quick"])
    assert cfg.embed_sentences == 200 and cfg.only == bench.ALL


def test_inconclusive_is_reported_and_never_a_pass(monkeypatch, capsys):
    reason = "net 0.200 s ≤ spread 0.500 s over 3 repetitions: ratio 8.84 is noise"
    monkeypatch.setitem(bench.BENCHMARKS, "slider", lambda cfg: [
        common.inconclusive_result("noisy_ratio", 5.0, reason, higher_is_better=True, unit="x",
                                   details={"point_estimate": 8.84})])
    assert bench.main(["--only", "slider"]) == 0
    stdout, stderr = capsys.readouterr()
    report = json.loads(stdout)
    check_report(report, {"noisy_ratio"})
    assert report["summary"] == {"measured": 1, "passed": 0, "failed": [], "inconclusive": ["noisy_ratio"],
                                 "skipped": []}
    assert f"INCONCLUSIVE ({reason})" in stderr and "PASS" not in stderr
    assert bench.main(["--only", "slider", "--strict"]) == 1  # strict wants every figure shown to meet its target


@pytest.mark.browser
@pytest.mark.skipif(os.environ.get("LAB_BENCH_COLDSTART") != "1",
                    reason="starts the app and Chromium (slow): set LAB_BENCH_COLDSTART=1")
def test_cold_start_harness_runs():
    report = bench.run_benchmarks(common.Config.for_mode(True, only=("coldstart",)))
    check_report(report, {"cold_start_seconds", "cold_start_peak_rss_gb"})
