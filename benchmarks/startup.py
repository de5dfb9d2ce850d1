"""Start-up, today's code against a base commit's, side by side in one run (#41 item 5).

    python -m benchmarks.startup                       # base 7f0c227, 5 runs of each
    python -m benchmarks.startup --base <commit> --runs 7 --json out.json
    python -m benchmarks.startup --only cli --runs 9      # or app (app.py and serve.py), cli

The base commit is exported (``git archive``, models included) into a temporary directory, so both trees
run from the same virtualenv on the same box; every repetition runs each measurement in both trees, the
order alternating, so the background load hits both alike. Figures are ratios of medians, new / base:

- ``app_cold_start``: ``streamlit run app.py`` until its first page (the home page, ``/``) has settled in
  headless Chromium (``benchmarks.coldstart.cold_start_once``: the title rendered and no running status
  for 1 s; the start of that stretch counts);
- ``serve_cold_start``: the same with ``serve.py``, whose lifespan hook loads the embedded models in a
  background thread while the first page is served;
- ``cli_<command>``: ``python -m core <command>`` from its start until it exits with its answer on stdout
  (exit 0, non-empty output): ``fill-mask`` and ``embed`` on one sentence each, ``models`` and ``--help``;
  ``cli_<command>_cpu`` is the CPU time (user + system) the command used, which a loaded box inflates far less
  than the wall time.

Target (issue #41): the app's cold start and the CLI's first answer each ≤ 0.6× of the base.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks.coldstart import cold_start_once
from benchmarks.common import ROOT, Config, child_env, log

BASE_COMMIT = "7f0c227"
CLI_COMMANDS = {
    "fill-mask": ["fill-mask", "我吃了一个[MASK]果"],
    "embed": ["embed", "--word", "苹果", "我吃了一个苹果"],
    "models": ["models"],
    "--help": ["--help"],
}
SERVERS = {"app_cold_start": "app.py", "serve_cold_start": "serve.py"}
TARGET = 0.6


def export_commit(commit: str, into: Path) -> Path:
    """The tree of ``commit`` (as ``git archive`` gives it) under ``into``."""
    archive = into / "base.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), commit], cwd=ROOT, check=True)
    tree = into / "base"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def cli_seconds(root: Path, argv: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of ``python -m core <argv>`` in ``root``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "core", *argv], cwd=root, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"python -m core {' '.join(argv)} in {root}: exit {done.returncode}: {done.stderr[-400:]}")
    return seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(trees: dict[str, Path], runs: int, cfg: Config, only: set[str]) -> dict[str, dict[str, list[float]]]:
    """``{figure: {tree: [seconds per run]}}``, each repetition running every figure in every tree
    (``only``: "app" for the cold starts, "cli" for the commands)."""
    env = child_env(cfg)
    times: dict[str, dict[str, list[float]]] = {}
    names = list(trees)
    for rep in range(runs):
        order = names if rep % 2 == 0 else names[::-1]
        for figure, script in SERVERS.items() if "app" in only else ():
            for tree in order:
                result = cold_start_once(cfg, "", False, root=trees[tree], script=script)
                times.setdefault(figure, {}).setdefault(tree, []).append(result["rendered_s"])
        for command, argv in CLI_COMMANDS.items() if "cli" in only else ():
            for tree in order:
                seconds, cpu = cli_seconds(trees[tree], argv, env)
                times.setdefault(f"cli_{command}", {}).setdefault(tree, []).append(seconds)
                times.setdefault(f"cli_{command}_cpu", {}).setdefault(tree, []).append(cpu)
        log(f"startup: repetition {rep + 1}/{runs}: " + "; ".join(
            f"{figure} " + " / ".join(f"{tree} {by_tree[tree][-1]:.2f} s" for tree in names)
            for figure, by_tree in times.items()))
    return times


def report(times: dict[str, dict[str, list[float]]], load: tuple[float, float]) -> dict:
    figures = {}
    for figure, by_tree in times.items():
        new, base = statistics.median(by_tree["new"]), statistics.median(by_tree["base"])
        figures[figure] = {"new_median_s": round(new, 3), "base_median_s": round(base, 3),
                           "ratio": round(new / base, 3), "new_s": [round(x, 3) for x in by_tree["new"]],
                           "base_s": [round(x, 3) for x in by_tree["base"]]}
    return {"target": f"<= {TARGET}x (app cold start; CLI first answer)", "figures": figures,
            "load_average_start_end": load, "cores": os.cpu_count()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE_COMMIT, help="the commit to compare against (default %(default)s)")
    parser.add_argument("--runs", type=int, default=5, help="repetitions of each measurement in each tree")
    parser.add_argument("--only", default="app,cli", help="app (cold starts), cli (commands) or both (default)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    cfg = Config()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="startup-base-") as tmp:
        base = export_commit(args.base, Path(tmp))
        log(f"startup: base {args.base} in {base}; new = {ROOT}")
        times = measure({"new": ROOT, "base": base}, args.runs, cfg, set(args.only.split(",")))
    result = report(times, (round(load_start, 2), round(os.getloadavg()[0], 2)))
    result["base_commit"] = args.base
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    for figure, numbers in result["figures"].items():
        log(f"{figure}: {numbers['new_median_s']:.2f} s vs {numbers['base_median_s']:.2f} s = {numbers['ratio']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
