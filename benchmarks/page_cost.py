"""What one page run costs the server's interpreter, per page, for one or more checkouts side by side.

    python -m benchmarks.page_cost                                   # this checkout, 8 runs per page
    python -m benchmarks.page_cost --checkout ../old --checkout .    # two checkouts, interleaved, one table
    python -m benchmarks.page_cost --checkout ../old --checkout . --profile prof/   # cProfile per page instead

A class shares one interpreter (``core/runtime/concurrency.py``), so what a class of 30 waits is, to first order,
30 times the CPU one page run takes; that CPU is far less disturbed by other work on the box than wall-clock latency.
For each checkout a ``streamlit run app.py`` server is started in that directory (this interpreter, loopback,
``HF_HUB_OFFLINE=1``); every page is run once alone (models loaded, caches filled), then ``--runs`` times, each a
new session (one websocket speaking Streamlit's protocol, ``benchmarks.classroom_load.run_page``) with a sentence
of its own (``classroom_load.session_query``), the classroom's pattern, while one other session stays connected
(:func:`idle_session`). The servers are idle but for the run being
measured, so the CPU seconds the server process spent from the request to ``script_finished`` (user + system,
every thread: the script's run and the server's sending its messages) is that page run's cost. Runs are interleaved
(every checkout's run of a page, the order rotating), so phases of the box's load hit each checkout alike. Figures
are means over the runs, in ms (the kernel counts CPU in 10 ms ticks, so one run's figure is a multiple of 10 ms and
only the mean of several resolves less; ``cpu_median_ms`` has the medians); ``ratio`` is each checkout's mean
against the first's. A page missing from a checkout is left blank.

``--profile DIR`` runs the same pages under cProfile instead (the script thread only: each page run's Python, not
the server's sending), one ``DIR/<checkout-index>-<page>.prof`` per checkout and page, and prints each page's top
functions by cumulative time; the CPU figures are then not reported (cProfile's overhead).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from benchmarks.classroom_load import run_page, session_query
from benchmarks.common import ROOT, free_port
from ui import PAGES

# The profiling launcher: run as ``python -c PROFILED <label file> <out dir> <streamlit args…>`` in a checkout.
PROFILED = r"""
import cProfile, os, sys
label_file, out_dir = sys.argv[1], sys.argv[2]
sys.argv = ["streamlit", *sys.argv[3:]]
sys.path.insert(0, os.getcwd())
from streamlit.runtime.scriptrunner import exec_code, script_runner
original = exec_code.exec_func_with_error_handling
profiles = {}
def profiled(func, ctx):
    label = open(label_file, encoding="utf-8").read().strip()
    if not label:
        return original(func, ctx)
    profile = profiles.setdefault(label, cProfile.Profile())
    profile.enable()
    try:
        return original(func, ctx)
    finally:
        profile.disable()
        profile.dump_stats(os.path.join(out_dir, label + ".prof"))
script_runner.exec_func_with_error_handling = profiled
from streamlit.web.cli import main
main()
"""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid``, every thread (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    """``streamlit run app.py`` in ``checkout`` on a free loopback port; with ``profile_dir`` under the launcher."""

    def __init__(self, checkout: Path, profile_dir: Path | None = None, label: str = "0"):
        self.checkout, self.label = checkout, label
        self.label_file = Path(tempfile.mkstemp(prefix="page-cost-label-")[1])
        port = free_port()
        args = ["run", "app.py", "--server.headless", "true", "--server.port", str(port), "--server.address",
                "127.0.0.1", "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
        command = ([sys.executable, "-c", PROFILED, str(self.label_file), str(profile_dir), *args] if profile_dir
                   else [sys.executable, "-m", "streamlit", *args])
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(checkout)}
        self.proc = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit in {checkout} exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=5):
                    return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"streamlit in {checkout} did not answer")

    def profile_as(self, page: str | None) -> None:
        self.label_file.write_text(f"{self.label}-{page}" if page else "", encoding="utf-8")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.label_file.unlink(missing_ok=True)


async def idle_session(url: str):
    """A session kept open, as a class's other tabs are: Streamlit clears its compiled-script cache whenever the
    last session disconnects (``WebsocketSessionManager.disconnect_session``), so one run after another with
    nobody else connected would each recompile the app and the page (10–20 ms), as no class does."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ws = await websockets.connect(url.replace("http://", "ws://", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None, ping_interval=None)
    request = BackMsg()
    request.rerun_script.page_name = PAGES[0].url_path
    await ws.send(request.SerializeToString())
    while ForwardMsg.FromString(await ws.recv()).WhichOneof("type") != "script_finished":
        pass
    return ws


async def measure(servers: list[Server], pages: list[str], runs: int, profiling: bool) -> dict:
    idle = [await idle_session(server.url) for server in servers]
    try:
        return await _measure(servers, pages, runs, profiling)
    finally:
        for ws in idle:
            await ws.close()


async def _measure(servers: list[Server], pages: list[str], runs: int, profiling: bool) -> dict:
    cost: dict[str, list[list[float | None]]] = {page: [[] for _ in servers] for page in pages}
    wall: dict[str, list[list[float]]] = {page: [[] for _ in servers] for page in pages}
    missing: set[tuple[int, str]] = set()
    for page in pages:
        for index, server in enumerate(servers):  # alone first: models loaded, caches filled
            try:
                await run_page(server.url, page, 600)
                await run_page(server.url, page, 600, session_query(page, 999))
            except RuntimeError as err:
                if "page not found" not in str(err):
                    raise
                missing.add((index, page))
        for run in range(runs):
            order = list(range(len(servers)))
            order = order[run % len(order):] + order[:run % len(order)]
            for index in order:
                if (index, page) in missing:
                    continue
                server = servers[index]
                if profiling:
                    server.profile_as(page)
                before = process_cpu_s(server.proc.pid)
                result = await run_page(server.url, page, 600, session_query(page, run))
                cpu = process_cpu_s(server.proc.pid) - before
                if profiling:
                    server.profile_as(None)
                if result["status"] != "FINISHED_SUCCESSFULLY" or result["exceptions"]:
                    raise RuntimeError(f"{page} on {server.checkout}: {result}")
                cost[page][index].append(cpu)
                wall[page][index].append(result["seconds"])
        _log(f"  {page}: " + " | ".join(
            f"{np.mean(c) * 1000:.0f} ms CPU" if c else "-" for c in cost[page]))
    table = {}
    for page in pages:
        means = [float(np.mean(c)) * 1000 if c else None for c in cost[page]]
        base = means[0]
        table[page] = {"cpu_ms": [round(m, 1) if m is not None else None for m in means],
                       "cpu_median_ms": [round(float(np.median(c)) * 1000, 1) if c else None for c in cost[page]],
                       "wall_ms": [round(float(np.median(w)) * 1000, 1) if w else None for w in wall[page]],
                       "ratio": [round(m / base, 2) if m is not None and base else None for m in means]}
    return table


def markdown(table: dict, checkouts: list[str]) -> str:
    header = "| page | " + " | ".join(f"{c} CPU ms" for c in checkouts) + (" | ratio |" if len(checkouts) > 1 else " |")
    lines = [header, "|" + " --- |" * (len(checkouts) + 1 + (len(checkouts) > 1))]
    for page, row in table.items():
        cells = [f"{m:.0f}" if m is not None else "" for m in row["cpu_ms"]]
        ratio = [f"{r:.2f}×" for r in row["ratio"][1:] if r is not None]
        lines.append(f"| {page} | " + " | ".join(cells) + (f" | {', '.join(ratio)} |" if len(checkouts) > 1 else " |"))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.page_cost", description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", type=Path, action="append",
                        help="a checkout of the app (repeatable; the first is the ratios' base; default: this one)")
    parser.add_argument("--runs", type=int, default=8, help="measured runs per page and checkout (default 8)")
    parser.add_argument("--pages", help="comma-separated url paths (default: every page of this checkout)")
    parser.add_argument("--profile", type=Path, help="profile with cProfile into this folder instead of timing")
    parser.add_argument("--top", type=int, default=15, help="functions listed per profile (default 15)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    checkouts = [c.resolve() for c in (args.checkout or [ROOT])]
    pages = args.pages.split(",") if args.pages else [spec.url_path for spec in PAGES]
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    servers = []
    try:
        for index, checkout in enumerate(checkouts):
            servers.append(Server(checkout, args.profile.resolve() if args.profile else None, str(index)))
        table = asyncio.run(measure(servers, pages, args.runs, args.profile is not None))
    finally:
        for server in servers:
            server.stop()
    report = {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpu_count": os.cpu_count(),
              "load_average_start": load_start, "load_average_end": os.getloadavg(),
              "checkouts": [str(c) for c in checkouts], "runs": args.runs, "pages": table}
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    if args.profile:
        import pstats
        for path in sorted(args.profile.glob("*.prof")):
            _log(f"\n== {path.name}")
            pstats.Stats(str(path), stream=sys.stderr).sort_stats("cumulative").print_stats(args.top)
    else:
        _log(markdown(table, [c.name for c in checkouts]))
        _log(f"load average {load_start[0]:.2f} → {report['load_average_end'][0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
