"""benchmarks/embed_stream.py on the tiny BERT: a well-formed result whose stream really wrote every vector."""
from __future__ import annotations

import pytest
from test_benchmarks_smoke import check_report

from benchmarks import common, embed_stream
from benchmarks import run as bench


def test_embed_stream_on_tiny_bert(tiny_bert_dir):
    cfg = common.Config.for_mode(True, bert_model=str(tiny_bert_dir), embed_sentences=30, embed_reps=2,
                                 only=("embed_stream",))
    report = bench.run_benchmarks(cfg)
    check_report(report, {embed_stream.NAME})
    result = report["results"][0]
    assert not (result["skipped"] or result.get("error")), result
    details = result["details"]
    assert details["stream_output_lines"] == 30 and details["sentences"] == 30
    assert set(details["times_s"]) == {"stream", "bare"} and all(len(v) == 2 for v in details["times_s"].values())
    # the figure is the ratio of the two throughputs: the stream's sentences/s over the bare forward's
    assert result["value"] == pytest.approx(details["stream_sentences_per_s"] / details["bare_sentences_per_s"],
                                            rel=0.02)


def test_embed_stream_skips_a_missing_model(tmp_path):
    result, = embed_stream.measure(common.Config.for_mode(True, bert_model=str(tmp_path / "nope")))
    assert result["skipped"] and result["pass"] is None and "nope" in result["reason"]
