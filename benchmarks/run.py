"""Performance benchmarks of the ELMo→BERT Lab, each figure reported as a ratio against its limit.

    python -m benchmarks.run [--quick] [--json out.json] [--only fillmask,embed,...]

Runs the benchmark modules (benchmarks/fillmask.py, embed.py, embed_stream.py, slider.py, coldstart.py,
plain_bert.py; each one's docstring says what its figures measure and their targets). JSON goes to stdout (and to
``--json``), a short table and progress lines to stderr. Compared code paths are measured side by side in one
run: their repetitions are interleaved (the order rotates every repetition) and medians are
compared, so that background load hits both paths alike.

Every result is ``{"name", "value", "limit", "ratio_to_limit", "pass", ...}`` with ``target``
("<=" or ">="), ``unit`` and ``details``; a benchmark that cannot run here (model not trained yet,
no browser) has ``"skipped": true``, ``"pass": null`` and a ``reason``; one whose noise exceeds its
signal has ``"inconclusive": true``, ``"value": null``, ``"pass": null`` and the numbers in
``reason``. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import coldstart, embed, embed_stream, fillmask, plain_bert, slider
from benchmarks.common import ROOT, Config, error_result, log

BENCHMARKS: dict[str, Callable[[Config], list[dict]]] = {
    "fillmask": fillmask.measure, "embed": embed.measure, "embed_stream": embed_stream.measure,
    "slider": slider.measure, "coldstart": coldstart.measure, "plain_bert": plain_bert.measure}
ALL = tuple(BENCHMARKS)


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"cpu_model": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
    try:
        info["load_average_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        info["load_average_start"] = None
    try:
        meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        info["memory_total_gb"] = round(int(meminfo["MemTotal"].split()[0]) * 1024 / 1e9, 1)
    except (OSError, KeyError, ValueError):
        pass
    for module in ("torch", "transformers", "streamlit", "numpy"):
        try:
            info[f"{module}_version"] = __import__(module).__version__
        except Exception:  # version info is best effort
            pass
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
    except Exception:
        pass
    return info


def run_benchmarks(cfg: Config) -> dict:
    started = _dt.datetime.now().astimezone()
    if cfg.threads:
        import torch

        torch.set_num_threads(cfg.threads)
    machine = machine_info()
    results = []
    keys = cfg.only or ALL
    for key in keys:
        log(f"running {key}")
        t0 = time.perf_counter()
        try:
            produced = BENCHMARKS[key](cfg)
        except Exception as exc:  # a broken benchmark is a failed result, not a crash
            produced = [error_result(key, 0, f"{type(exc).__name__}: {exc}")]
        for result in produced:
            result["benchmark"] = key
            result["elapsed_s"] = round(time.perf_counter() - t0, 2)
        results.extend(produced)
    try:
        machine["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        machine["load_average_end"] = None
    load = machine.get("load_average_start") or [0.0]
    cores = machine.get("cores") or 1
    measured = [r for r in results if not r["skipped"]]
    return {
        "date": started.isoformat(timespec="seconds"),
        "mode": "quick" if cfg.quick else "full",
        "machine": machine,
        "loaded": load[0] >= 0.5 * cores,
        "load_note": (f"load average {load[0]} on {cores} cores at start: measured while the machine was loaded"
                      if load[0] >= 0.5 * cores else f"load average {load[0]} on {cores} cores at start"),
        "config": {k: v for k, v in cfg.__dict__.items() if k != "extra"} | {"only": list(keys)},
        "results": results,
        "summary": {"measured": len(measured), "passed": sum(1 for r in measured if r["pass"]),
                    "failed": [r["name"] for r in measured if r["pass"] is False],
                    "inconclusive": [r["name"] for r in measured if r.get("inconclusive")],
                    "skipped": [r["name"] for r in results if r["skipped"]]},
    }


def format_table(report: dict) -> str:
    rows = [("benchmark", "value", "limit", "ratio", "result")]
    for r in report["results"]:
        unit = r.get("unit", "")
        value = "—" if r["value"] is None else f"{r['value']:.3g} {unit}".strip()
        limit = f"{r['target']} {r['limit']:g} {unit}".strip()
        ratio = "—" if r["ratio_to_limit"] is None else f"{r['ratio_to_limit']:.3g}"
        verdict = ("SKIP" if r["skipped"] else "INCONCLUSIVE" if r.get("inconclusive")
                   else "PASS" if r["pass"] else "FAIL")
        if r.get("reason"):
            verdict += f" ({r['reason'][:120]})"
        elif r.get("note"):
            verdict += f" ({r['note'][:90]})"
        rows.append((r["name"], value, limit, ratio, verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    m = report["machine"]
    lines.append(f"{report['date']}  {m.get('cpu_model')} ×{m.get('cores')}  {report['load_note']}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, Config]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (200 sentences, fewer repetitions)")
    parser.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    parser.add_argument("--only", help=f"comma-separated subset of {','.join(ALL)}")
    parser.add_argument("--bert-model", help="BERT model for fill-mask and embedding (default mini-bert-zh)")
    parser.add_argument("--elmo-model", help="layered model for the slider benchmark (default mini-elmo-zh)")
    parser.add_argument("--sentences", type=int, help="sentences for the embedding benchmark")
    parser.add_argument("--embed-reps", type=int)
    parser.add_argument("--fillmask-reps", type=int)
    parser.add_argument("--slider-moves", type=int)
    parser.add_argument("--coldstart-runs", type=int)
    parser.add_argument("--chromium", help="Chromium executable (default /usr/bin/chromium)")
    parser.add_argument("--threads", type=int, help="pin torch threads (here and in the CLI / streamlit "
                        "subprocesses via OMP_NUM_THREADS); default: torch's own choice")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a measured figure misses its target or is inconclusive")
    args = parser.parse_args(argv)
    only = tuple(s.strip() for s in args.only.split(",") if s.strip()) if args.only else ALL
    unknown = [s for s in only if s not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(ALL)}")
    cfg = Config.for_mode(args.quick, bert_model=args.bert_model, elmo_model=args.elmo_model,
                          embed_sentences=args.sentences, embed_reps=args.embed_reps,
                          fillmask_reps=args.fillmask_reps, slider_moves=args.slider_moves,
                          coldstart_runs=args.coldstart_runs, chromium=args.chromium, only=only,
                          threads=args.threads)
    for name in ("fillmask_reps", "embed_sentences", "embed_reps", "slider_moves", "coldstart_runs", "threads"):
        if getattr(cfg, name) is not None and getattr(cfg, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args, cfg


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # runs the finally blocks: temp files removed, Streamlit server stopped


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if in_main_thread else None
    try:
        report = run_benchmarks(cfg)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
    text = json.dumps(report, ensure_ascii=False, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    print(format_table(report), file=sys.stderr)
    summary = report["summary"]
    return 1 if args.strict and (summary["failed"] or summary["inconclusive"]) else 0


if __name__ == "__main__":
    sys.exit(main())
