"""benchmarks/classroom_load.py: loopback only; the protocol client itself runs
against a real server when ``LAB_BENCH_CLASSROOM=1`` (it starts streamlit and loads every model)."""
from __future__ import annotations

import argparse
import json
import os

import pytest

from benchmarks import classroom_load as bench


@pytest.mark.parametrize("url", ["http://192.168.1.20:8501", "http://example.org:8501", "https://127.0.0.1:8501",
                                 "ws://127.0.0.1:8501"])
def test_only_a_server_on_this_machine(url):
    with pytest.raises(argparse.ArgumentTypeError):
        bench.loopback_url(url)


def test_loopback_urls_are_accepted():
    assert bench.loopback_url("http://127.0.0.1:8501/") == "http://127.0.0.1:8501"
    assert bench.loopback_url("http://localhost:9000") == "http://localhost:9000"


@pytest.mark.subprocess
@pytest.mark.skipif(os.environ.get("LAB_BENCH_CLASSROOM") != "1", reason="starts a server: LAB_BENCH_CLASSROOM=1")
def test_two_sessions_against_a_real_server(tmp_path, capsys):
    out = tmp_path / "classroom.json"
    assert bench.main(["--sessions", "2", "--rounds", "1", "--json", str(out)]) == 0
    import json

    report = json.loads(out.read_text(encoding="utf-8"))
    run = report["runs"][0]
    assert run["sessions"] == 2 and not run["problems"] and len(run["pages"]) == 2
    assert set(report["warm_up_s"]) == {spec.url_path for spec in bench.PAGES}


def test_every_session_of_a_classroom_types_its_own_sentence():
    pages = [spec.url_path for spec in bench.PAGES]
    queries = [bench.session_query(pages[i % len(pages)], i) for i in range(120)]
    typed = [q for q in queries if q]
    assert len(set(typed)) == len(typed)  # no two sessions share inputs: no page run is a cache hit
    assert {pages[i % len(pages)] for i, q in enumerate(queries) if q} == {
        "static-vs-contextual", "elmo-weights", "fill-mask", "attention-heatmap", "pretraining-objectives"}
    assert "%5BMASK%5D" in bench.session_query("fill-mask", 7)


def test_the_class_of_thirty_is_reported_against_its_target():
    runs = [{"sessions": 10, "distinct_inputs": True, "all_pages": {"p50_s": 0.6, "p95_s": 0.7}},
            {"sessions": 30, "distinct_inputs": True, "all_pages": {"p50_s": 1.9, "p95_s": 3.0}}]
    (result,) = bench.target_results(runs)
    assert result["name"] == "classroom_n30_p95_s" and result["limit"] == 1.5  # issue #50
    assert result["ratio_to_limit"] == pytest.approx(2.0) and result["pass"] is False
    assert bench.target_results(runs[:1]) == []


def test_the_board_beside_opens_a_board_the_class_and_its_projector_share(tmp_path, monkeypatch):
    """``--board`` / ``--board-beside`` open a board in the store the server shares (LAB_DATA_DIR), on a word and
    model the board knows, with its sentences shown; the class board's sessions then open its join link."""
    from core.board import rules
    from core.board.store import store

    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    board_id = bench.open_board()
    board = store().newest_board()
    assert board is not None and board.id == board_id and board.model in rules.MODELS
    assert len(store().contributions(board_id)) == len(bench.BOARD_SENTENCES)


# ---- the regression guard (issue #50) -------------------------------------------------------------------
def _run(sessions: int, p95: dict[str, float], distinct: bool = True) -> dict:
    return {"sessions": sessions, "rounds": 1, "distinct_inputs": distinct,
            "pages": {page: {"n": 3, "p50_s": s / 2, "p95_s": s} for page, s in p95.items()},
            "all_pages": {"n": 3 * len(p95), "p50_s": 0.5, "p95_s": max(p95.values())}, "round_wall_s": [1.0],
            "problems": []}


def _report(runs: list[dict]) -> dict:
    return {"created": "2026-12-07T07:00:00+0000", "cpu_count": 2, "load_average_start": (1.0, 1.0, 1.0),
            "warm_up_s": {}, "runs": runs, "load_average_end": (1.0, 1.0, 1.0)}


def test_each_page_is_compared_with_the_same_session_count_of_the_baseline():
    baseline = bench.baseline_entry(_report([_run(10, {"a": 1.0}), _run(30, {"a": 2.0, "b": 2.0})]))
    rows = bench.against_baseline([_run(30, {"a": 2.4, "b": 2.41, "c": 1.0})], baseline)
    by_page = {row["page"]: row for row in rows}
    assert by_page["a"]["baseline_p95_s"] == 2.0 and by_page["a"]["ratio"] == pytest.approx(1.2)
    assert not by_page["a"]["grew"]  # exactly 20 % is within the limit
    assert by_page["b"]["grew"] and by_page["b"]["ratio"] == pytest.approx(1.205)
    assert by_page["c"]["baseline_p95_s"] is None and by_page["c"]["ratio"] is None and not by_page["c"]["grew"]
    # cache hits (--same-inputs) are not compared with typed sentences
    assert all(row["ratio"] is None for row in bench.against_baseline([_run(30, {"a": 9.0}, False)], baseline))
    assert all(row["ratio"] is None for row in bench.against_baseline([_run(30, {"a": 9.0})], None))


def test_strict_fails_when_a_page_grew_and_when_the_box_has_no_baseline(tmp_path, monkeypatch):
    path = tmp_path / "baselines.json"
    measured = [_report([_run(30, {"a": 1.0, "b": 1.0})])]
    monkeypatch.setattr(bench, "measured_on", lambda url, timeout, measure: measured[0])
    argv = ["--sessions", "30", "--rounds", "1", "--baseline", str(path), "--strict"]
    assert bench.main(argv) == 1  # nothing to compare with: not a pass
    assert bench.main(argv + ["--save-baseline"]) == 0
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored[bench.box_id()]["runs"]["30"]["p95_s"] == {"a": 1.0, "b": 1.0}
    measured[0] = _report([_run(30, {"a": 1.15, "b": 0.8})])
    assert bench.main(argv) == 0  # within 20 %
    measured[0] = _report([_run(30, {"a": 1.0, "b": 1.3})])
    assert bench.main(argv) == 1  # b grew by 30 %
    assert bench.main(argv[:-1]) == 0  # without --strict the run reports and exits 0


def test_the_comparison_is_plain_json_with_numpy_figures():
    """The measured p95s are numpy floats (``np.quantile``): the rows must still serialise."""
    import numpy as np

    baseline = bench.baseline_entry(_report([_run(30, {"a": 1.0})]))
    run = _run(30, {"a": 1.0})
    run["pages"]["a"]["p95_s"] = np.float64(1.5)
    (row,) = bench.against_baseline([run], baseline)
    assert json.loads(json.dumps(row))["grew"] is True
