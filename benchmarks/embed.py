"""Batch embedding: ``python -m core embed`` against bare forward passes of the same model.

- ``embed_cli_vs_batched_throughput``: the CLI on N sentences against a bare batched forward over
  the same sentences (``padding=True``, ``output_hidden_states=True``, tokenizer included).
  Value = t(batched) / t(CLI net); target ≥ 0.7×.
- ``embed_cli_vs_loop_speedup``: the same CLI against a one-sentence-at-a-time loop of bare
  forwards. Value = t(loop) / t(CLI net), how many times faster the CLI is; target ≥ 5×.

Both figures come from one interleaved measurement (1-sentence CLI, N-sentence CLI, batched, loop),
so they share this module. The CLI's wall time includes starting Python and loading the model;
t(CLI net) = median(N-sentence runs) − median(1-sentence runs) removes that. When the net time is
not larger than the spread of the two subtracted quantities (``common.net_ratio``) both figures
are inconclusive rather than a ratio of noise.
"""
from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import (
    ROOT,
    WORD,
    Config,
    child_env,
    error_result,
    inconclusive_result,
    interleaved,
    load_encoder,
    log,
    make_result,
    make_sentences,
    net_ratio,
    skipped_result,
)

# (name, limit, reference path): every figure is t(reference) / t(CLI net), higher is better
FIGURES = (("embed_cli_vs_batched_throughput", 0.7, "batched"), ("embed_cli_vs_loop_speedup", 5.0, "loop"))


def measure(cfg: Config) -> list[dict]:
    encoder, reason = load_encoder(cfg.bert_model, "bert")
    if encoder is None:
        return [skipped_result(n, lim, reason, higher_is_better=True, unit="x") for n, lim, _ in FIGURES]
    import torch

    sentences = make_sentences(cfg.embed_sentences)
    model, tokenizer, bs = encoder.model, encoder.tokenizer, cfg.batch_size
    work = Path(tempfile.mkdtemp(prefix="lab-bench-embed-"))
    full_in, one_in, out_path = work / "sentences.txt", work / "one.txt", work / "out.jsonl"
    full_in.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    one_in.write_text(sentences[0] + "\n", encoding="utf-8")
    env = child_env(cfg, LAB_LANG="en")
    lines: dict = {}

    def cli(path: Path):
        with open(out_path, "wb") as out:
            done = subprocess.run([sys.executable, "-m", "core", "embed", "--model", cfg.bert_model, "--word", WORD,
                                   "--input", str(path)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.PIPE,
                                  timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"python -m core embed exited {done.returncode}: "
                               f"{done.stderr.decode('utf-8', 'replace').strip()[-500:]}")
        lines[path.name] = sum(1 for _ in open(out_path, "rb"))

    def batched():
        with torch.inference_mode():
            for i in range(0, len(sentences), bs):
                inputs = tokenizer(sentences[i:i + bs], padding=True, return_tensors="pt")
                model(**inputs, output_hidden_states=True)

    def loop():
        with torch.inference_mode():
            for sentence in sentences:
                inputs = tokenizer(sentence, return_tensors="pt")
                model(**inputs, output_hidden_states=True)

    try:
        log(f"embed: warm-up ({len(sentences)} sentences)")
        if cfg.embed_warmup:
            cli(one_in)  # warms the page cache for the interpreter, torch and the weights
        with torch.inference_mode():
            for s in sentences[:bs]:
                model(**tokenizer(s, return_tensors="pt"), output_hidden_states=True)
        gc.collect()
        log(f"embed: {cfg.embed_reps} interleaved repetitions")
        times = interleaved({"cli_one": lambda: cli(one_in), "cli_full": lambda: cli(full_in),
                             "batched": batched, "loop": loop}, cfg.embed_reps, label="embed")
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        return [error_result(n, lim, str(exc), higher_is_better=True, unit="x") for n, lim, _ in FIGURES]
    finally:
        for path in (full_in, one_in, out_path):
            path.unlink(missing_ok=True)
        work.rmdir()

    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = {ref: net_ratio(times[ref], times["cli_full"], times["cli_one"]) for _, _, ref in FIGURES}
    net, spread = ratios["batched"].net_s, ratios["batched"].spread_s  # the same for both references
    n = len(sentences)
    details = {"model": cfg.bert_model, "sentences": n, "batch_size": bs, "reps": cfg.embed_reps,
               "cli_full_median_s": round(med["cli_full"], 3), "cli_startup_median_s": round(med["cli_one"], 3),
               "cli_net_s": round(net, 3), "cli_net_spread_s": None if spread is None else round(spread, 3),
               "batched_median_s": round(med["batched"], 3), "loop_median_s": round(med["loop"], 3),
               "cli_sentences_per_s": round(n / net, 1) if net > 0 else None,
               "batched_sentences_per_s": round(n / med["batched"], 1),
               "loop_sentences_per_s": round(n / med["loop"], 1),
               "batched_vs_loop_speedup": round(med["loop"] / med["batched"], 3),
               "cli_output_lines": lines.get(full_in.name),
               "times_s": {k: [round(x, 3) for x in v] for k, v in times.items()}}

    if details["cli_output_lines"] != n:
        reason = f"CLI wrote {details['cli_output_lines']} vectors for {n} sentences"
        return [error_result(name, limit, reason, higher_is_better=True, unit="x") | {"details": details}
                for name, limit, _ in FIGURES]
    results = []
    for name, limit, ref in FIGURES:
        ratio = ratios[ref]
        if ratio.value is None:
            point = ratio.point_estimate
            results.append(inconclusive_result(
                name, limit, f"CLI {ratio.reason}; use more --sentences or --embed-reps", higher_is_better=True,
                unit="x", details=details | {"point_estimate": None if point is None else round(point, 4)}))
        else:
            results.append(make_result(name, ratio.value, limit, higher_is_better=True, unit="x", details=details))
    return results
