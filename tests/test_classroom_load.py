"""benchmarks/classroom_load.py: loopback only; the protocol client itself runs
against a real server when ``LAB_BENCH_CLASSROOM=1`` (it starts streamlit and loads every model)."""
from __future__ import annotations

import argparse
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
    assert result["name"] == "classroom_n30_p95_s" and result["limit"] == 2.5
    assert result["ratio_to_limit"] == pytest.approx(1.2) and result["pass"] is False
    assert bench.target_results(runs[:1]) == []
