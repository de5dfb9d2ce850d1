"""A classroom on one server: N sessions open the app's pages at the same moment; server-side latency per page.

    python -m benchmarks.classroom_load                    # N = 10 and 30, every page, 2 rounds each
    python -m benchmarks.classroom_load --sessions 10 --rounds 1 --json out.json

No browser per user: each session is one websocket (the ``websockets`` package, a dependency of
streamlit) speaking Streamlit's own protocol (the protobuf ``BackMsg``/``ForwardMsg`` of the installed
streamlit), the way the browser tab does. A session sends
``rerun_script`` for its page (page i % number of pages) and the time until the server's
``script_finished`` is that page's latency. All N sessions of a round send at once. Each session types
its own sentence (``session_query``: a different subject and time word per session and round, in the
page's own URL parameters), so a page run computes instead of reading another session's cached result,
as in a class where every student tries a sentence of their own; ``--same-inputs`` sends every session
the page's defaults instead (all cache hits after the warm-up). Before the rounds,
every page is run once alone (models loaded, caches warm), so the figures are a classroom's steady
state, not the cold start (``python -m benchmarks.run --only coldstart`` measures that).

The server is started here on a free loopback port (``streamlit run app.py``, ``HF_HUB_OFFLINE=1``);
``--url`` points at one already running, which must be on this machine (loopback only: this script
opens many connections on purpose). JSON goes to stdout (and ``--json``), progress to stderr.

A regression guard (issue #50): ``--save-baseline`` stores each page's p95 per session count for this box
(``box_id``: CPU model and cores) in ``benchmarks/baselines/classroom.json`` (``--baseline`` another file); every
later run on the same box prints each page's p95 against it (``baseline`` in the report), and ``--strict`` exits 1
when a page's p95 grew by more than ``GROWTH_LIMIT`` (20 %), or when this box has no baseline to compare with.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import ROOT, free_port, make_result
from ui import PAGES

STUDENT_PAGES = [spec for spec in PAGES if spec.listed]  # a class opens what the sidebar offers, not the presenter view

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
BASELINE = ROOT / "benchmarks" / "baselines" / "classroom.json"
GROWTH_LIMIT = 1.20  # --strict: a page's p95 may grow by 20 % over the box's baseline
# Issue #50 (was 2.5 s, issue #28): a class of 30, each typing a sentence of their own, on the 2-core machine.
TARGET_SESSIONS, TARGET_P95_S = 30, 1.5
SUBJECTS = ("小明", "小红", "老师", "妈妈", "爸爸", "奶奶", "同学们", "我的朋友", "邻居", "哥哥",
            "姐姐", "弟弟", "妹妹", "爷爷", "医生", "司机", "班长", "小王", "阿姨", "叔叔")
TIMES = ("昨天", "今天", "早上", "晚上", "周末", "刚才", "上午", "下午", "中午", "去年")


def session_query(page: str, index: int) -> str:
    """The query string of session ``index`` on ``page``: the page's own input parameters with a sentence no
    other index gets (up to len(SUBJECTS) × len(TIMES)); "" for pages without typed input."""
    who, when = SUBJECTS[index % len(SUBJECTS)], TIMES[index // len(SUBJECTS) % len(TIMES)]
    inputs = {
        "static-vs-contextual": {"text": f"{who}{when}吃了一个苹果\n苹果{when}发布了新手机", "word": "苹果"},
        "elmo-weights": {"text": f"{who}{when}吃了一个苹果\n苹果{when}发布了新手机", "word": "苹果"},
        "fill-mask": {"sentence": f"{who}{when}去[MASK]行取钱。"},
        "attention-heatmap": {"sentence": f"{who}{when}在图书馆看书。"},
        "pretraining-objectives": {"sentence": f"{who}{when}吃了一个苹果", "gpt_sentence": f"{who}{when}吃了一个苹果",
                                   "a": f"苹果{when}发布了新手机", "b": f"{who}{when}把苹果掉在了地上"},
    }
    return urllib.parse.urlencode(inputs.get(page, {}))


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def start_server(timeout_s: float, script: str = "app.py", log: Path | None = None) -> tuple[subprocess.Popen, str]:
    """``streamlit run <script>`` on a free loopback port (output to ``log``), once /_stcore/health answers."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    output = log.open("w") if log else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT if log else subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as response:
                if response.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout_s:.0f} s")


@contextlib.contextmanager
def served(script: str = "app.py", timeout_s: float = 600.0):
    """:func:`start_server` for a ``with`` block: ``(process, url)``, the server stopped when the block ends."""
    proc, url = start_server(timeout_s, script)
    try:
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # busy in a page run: do not leave it behind
            proc.kill()
            proc.wait(timeout=30)


def measured_on(url: str | None, timeout_s: float, measure: Callable[[str], dict]) -> dict:
    """``measure(url)`` with the date, the cores and the load average around it; without ``url`` on a server
    started here and stopped afterwards."""
    server = served(timeout_s=timeout_s) if url is None else contextlib.nullcontext((None, url))
    with server as (_, url):
        return {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpu_count": os.cpu_count(),
                "load_average_start": os.getloadavg(), **measure(url), "load_average_end": os.getloadavg()}


async def run_page(url: str, page: str, timeout_s: float, query: str = "", cookie: str | None = None) -> dict:
    """One session: connect (sending ``cookie``, e.g. a lecture hall's ``lab_backend=PORT``), run ``page`` once
    with ``query`` as its URL's query string, return {"page", "seconds", "status", "exceptions"}."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ws_url = url.replace("http://", "ws://", 1) + "/_stcore/stream"
    request = BackMsg()
    request.rerun_script.page_name = page
    request.rerun_script.query_string = query
    exceptions = 0
    # no keepalive pings: a server busy with 30 page runs answers late, and that is what is measured
    headers = {"Cookie": cookie} if cookie else None
    async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=timeout_s,
                                  additional_headers=headers,
                                  ping_interval=None) as ws:
        started = time.perf_counter()
        await ws.send(request.SerializeToString())
        async with asyncio.timeout(timeout_s):
            while True:
                message = ForwardMsg.FromString(await ws.recv())
                kind = message.WhichOneof("type")
                if kind == "delta" and message.delta.WhichOneof("type") == "new_element" \
                        and message.delta.new_element.WhichOneof("type") == "exception":
                    exceptions += 1
                if kind == "script_finished":
                    status = ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)
                    return {"page": page, "seconds": time.perf_counter() - started, "status": status,
                            "exceptions": exceptions}
                if kind == "page_not_found":
                    raise RuntimeError(f"page not found: {page}")


async def classroom(url: str, sessions: int, rounds: int, timeout_s: float, distinct: bool = True,
                    board_id: str | None = None) -> dict:
    """``rounds`` rounds of ``sessions`` sessions at once; with ``board_id`` the class board's sessions open its
    join link (a student's phone page) instead of the projector's page."""
    pages = [spec.url_path for spec in STUDENT_PAGES]
    latencies: dict[str, list[float]] = {page: [] for page in pages}
    walls, problems = [], []
    for round_index in range(rounds):
        assigned = [pages[i % len(pages)] for i in range(sessions)]
        started = time.perf_counter()
        queries = [urllib.parse.urlencode({"board": board_id}) if board_id and page == "class-board"
                   else session_query(page, round_index * sessions + i) if distinct else ""
                   for i, page in enumerate(assigned)]
        runs = (run_page(url, page, timeout_s, query) for page, query in zip(assigned, queries))
        results = await asyncio.gather(*runs, return_exceptions=True)
        walls.append(time.perf_counter() - started)
        for page, result in zip(assigned, results):
            if isinstance(result, BaseException):
                problems.append(f"{page}: {type(result).__name__}: {result}")
                continue
            latencies[page].append(result["seconds"])
            if result["status"] != "FINISHED_SUCCESSFULLY" or result["exceptions"]:
                problems.append(f"{page}: {result['status']}, {result['exceptions']} exception element(s)")
        _log(f"  N={sessions} round {round_index + 1}/{rounds}: {walls[-1]:.1f} s for all sessions")
    every = [s for values in latencies.values() for s in values]
    return {
        "sessions": sessions, "rounds": rounds, "distinct_inputs": distinct,
        "pages": {page: {"n": len(v), "p50_s": round(np.quantile(v, 0.5), 3), "p95_s": round(np.quantile(v, 0.95), 3)}
                  for page, v in latencies.items() if v},
        "all_pages": {"n": len(every), "p50_s": round(np.quantile(every, 0.5), 3),
                      "p95_s": round(np.quantile(every, 0.95), 3)} if every else None,
        "round_wall_s": [round(w, 3) for w in walls],
        "problems": problems,
    }


BOARD_SENTENCES = tuple(f"{who}{when}吃了一个苹果" for who in SUBJECTS[:6] for when in TIMES[:2]) + tuple(
    f"苹果{when}发布了新手机" for when in TIMES)  # what the projector's board shows while the class works


def open_board() -> str:
    """A board on the word 苹果 with the sentences above, in the store this process and the server share
    (``LAB_DATA_DIR`` / ``LAB_BOARD_DB``): the projector's ``/class-board`` follows it. Its id."""
    from core.board.store import Limits, store

    shared = store()
    board = shared.create_board(f"bench-{os.getpid()}-{int(time.time())}", "苹果", ("水果", "公司"), "elmo")
    limits = Limits(window=60.0, client=1000, origin=0, cap=200)
    for i, sentence in enumerate(BOARD_SENTENCES):
        shared.add_checked(board.id, f"bench-{i}", "127.0.0.1", sentence, "公司" if "发布" in sentence else "水果",
                           limits)
    return board.id


async def projector(url: str, stop: asyncio.Event, timeout_s: float) -> dict:
    """A projector showing ``/class-board`` as a browser does: the page once, then each fragment's rerun on the
    interval the server asks for (``auto_rerun``: the live part every second). Returns how many reruns it sent
    and their p50 / p95 seconds."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    timers: dict[str, float] = {}
    seconds: list[float] = []
    async with websockets.connect(url.replace("http://", "ws://", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None, open_timeout=timeout_s, ping_interval=None) as ws:
        first = BackMsg()
        first.rerun_script.page_name = "class-board"
        await ws.send(first.SerializeToString())
        sent: float | None = None
        due: dict[str, float] = {}
        while not stop.is_set():
            now = time.perf_counter()
            if sent is None and due:
                fragment, when = min(due.items(), key=lambda item: item[1])
                if when <= now:
                    request = BackMsg()
                    request.rerun_script.page_name = "class-board"
                    request.rerun_script.fragment_id = fragment
                    request.rerun_script.is_auto_rerun = True
                    await ws.send(request.SerializeToString())
                    sent, due[fragment] = now, now + timers[fragment]
            try:
                raw = await asyncio.wait_for(ws.recv(), 0.05)
            except TimeoutError:
                continue
            message = ForwardMsg.FromString(raw)
            kind = message.WhichOneof("type")
            if kind == "auto_rerun":
                timers[message.auto_rerun.fragment_id] = message.auto_rerun.interval
                due.setdefault(message.auto_rerun.fragment_id, time.perf_counter() + message.auto_rerun.interval)
            elif kind == "script_finished" and sent is not None:
                seconds.append(time.perf_counter() - sent)
                sent = None
    return {"fragment_reruns": len(seconds),
            "p50_s": round(float(np.quantile(seconds, 0.5)), 3) if seconds else None,
            "p95_s": round(float(np.quantile(seconds, 0.95)), 3) if seconds else None}


async def measure(url: str, session_counts: list[int], rounds: int, timeout_s: float, distinct: bool = True,
                  board_id: str | None = None, board_beside: bool = False, backends: tuple[str, ...] = ()) -> dict:
    warm = {}
    # each page once alone on every process (a lecture hall's, by its lab_backend cookie): models loaded, caches
    # filled; the class's sessions then go where nginx draws them, as students' browsers do
    for backend in backends or (None,):
        for spec in STUDENT_PAGES:
            result = await run_page(url, spec.url_path, timeout_s,
                                    cookie=f"lab_backend={backend}" if backend else None)
            name = f"{spec.url_path}@{backend}" if backend else spec.url_path
            warm[name] = round(result["seconds"], 3)
            _log(f"  warm-up {name}: {result['seconds']:.1f} s")
    stop = asyncio.Event()
    board = asyncio.create_task(projector(url, stop, timeout_s)) if board_beside else None
    if board:
        await asyncio.sleep(3)  # the projector's page drawn and its first refreshes asked for
    runs = [await classroom(url, n, rounds, timeout_s, distinct, board_id) for n in session_counts]
    stop.set()
    report = {"warm_up_s": warm, "runs": runs}
    if board:
        report["board_beside"] = await board
        _log(f"  the board beside: {report['board_beside']}")
    return report


def target_results(runs: list[dict]) -> list[dict]:
    """The figure with a target, as every benchmark reports it (``benchmarks.common.make_result``): the p95
    over all pages of a class of ``TARGET_SESSIONS``, when one was measured."""
    return [make_result(f"classroom_n{TARGET_SESSIONS}_p95_s", run["all_pages"]["p95_s"], TARGET_P95_S, unit="s",
                        details={"distinct_inputs": run["distinct_inputs"], "p50_s": run["all_pages"]["p50_s"]})
            for run in runs if run["sessions"] == TARGET_SESSIONS and run["all_pages"]]


def box_id() -> str:
    """This machine as a baseline's key: its CPU model and core count (timings of another box do not compare)."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model} × {os.cpu_count()}"


def baseline_entry(report: dict) -> dict:
    """What a baseline keeps of a report: each page's p95 per session count (and whether the inputs were distinct),
    with the date and load average it was measured at."""
    return {"created": report["created"], "load_average_start": [round(x, 2) for x in report["load_average_start"]],
            "runs": {str(run["sessions"]): {"distinct_inputs": run["distinct_inputs"],
                                            "p95_s": {page: v["p95_s"] for page, v in run["pages"].items()}}
                     for run in report["runs"]}}


def against_baseline(runs: list[dict], baseline: dict | None, limit: float = GROWTH_LIMIT) -> list[dict]:
    """One row per session count and page measured: its p95, the baseline's p95 for the same session count and
    inputs (None when the baseline has none), their ratio, and ``grew``: the ratio exceeds ``limit``."""
    rows = []
    for run in runs:
        stored = (baseline or {}).get("runs", {}).get(str(run["sessions"]))
        if stored and stored.get("distinct_inputs") != run["distinct_inputs"]:
            stored = None  # cache hits against typed sentences: not the same measurement
        for page, values in run["pages"].items():
            base = (stored or {}).get("p95_s", {}).get(page)
            ratio = round(float(values["p95_s"]) / base, 3) if base else None
            rows.append({"sessions": run["sessions"], "page": page, "p95_s": values["p95_s"], "baseline_p95_s": base,
                         "ratio": ratio, "grew": bool(ratio is not None and ratio > limit)})
    return rows


def load_baselines(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def loopback_url(text: str) -> str:
    """``--url``'s argparse type: an http URL of this machine (127.0.0.1, localhost, ::1), without its trailing
    slash; any other is refused, so that the load never goes to someone else's server."""
    parts = urllib.parse.urlsplit(text)
    if parts.scheme != "http" or parts.hostname not in LOOPBACK:
        raise argparse.ArgumentTypeError("only a server on this machine (http://127.0.0.1:PORT)")
    return text.rstrip("/")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.classroom_load", description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", default="10,30", help="comma-separated session counts (default 10,30)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per session count (default 2)")
    parser.add_argument("--url", type=loopback_url, help="a running server on this machine instead of a new one")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for one page run (default 600)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    parser.add_argument("--same-inputs", action="store_true",
                        help="every session sends the page's default inputs (cache hits) instead of its own")
    parser.add_argument("--backends", default="",
                        help="a lecture hall's app ports (its lab_backend cookie), e.g. 8501,8502: the warm-up runs "
                             "every page on each of them")
    parser.add_argument("--board", action="store_true",
                        help="open a class board (in LAB_DATA_DIR / LAB_BOARD_DB, which a --url server must share): "
                             "the class board's sessions open its join link, as students' phones do")
    parser.add_argument("--board-beside", action="store_true",
                        help="--board, and a projector showing it, refreshed every second, while the class works")
    parser.add_argument("--baseline", type=Path, default=BASELINE,
                        help=f"the stored baselines, one per box (default {BASELINE.relative_to(ROOT)})")
    parser.add_argument("--save-baseline", action="store_true",
                        help="store this run's p95 per page as this box's baseline (replacing the one stored)")
    parser.add_argument("--strict", action="store_true",
                        help=f"exit 1 when a page's p95 grew by more than {round((GROWTH_LIMIT - 1) * 100)} %% over "
                             "this box's baseline, or when this box has none")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.sessions.split(",") if n.strip()]
    if not counts or min(counts) < 1 or args.rounds < 1:
        parser.error("--sessions and --rounds must be positive")

    board_id = None
    if args.board or args.board_beside:
        if args.url is None and "LAB_DATA_DIR" not in os.environ and "LAB_BOARD_DB" not in os.environ:
            os.environ["LAB_DATA_DIR"] = tempfile.mkdtemp(prefix="classroom-board-")  # the server here shares it
        board_id = open_board()
        _log(f"  board {board_id} open")
    report = measured_on(args.url, args.timeout, lambda url: asyncio.run(
        measure(url, counts, args.rounds, args.timeout, not args.same_inputs, board_id, args.board_beside,
                tuple(port for port in args.backends.split(",") if port.strip()))))
    report["results"] = target_results(report["runs"])
    box, baselines = box_id(), load_baselines(args.baseline)
    rows = against_baseline(report["runs"], baselines.get(box))
    report["baseline"] = {"box": box, "file": str(args.baseline), "found": box in baselines,
                          "created": baselines.get(box, {}).get("created"), "growth_limit": GROWTH_LIMIT, "pages": rows}
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    for run in report["runs"]:
        _log(f"N={run['sessions']}: " + ", ".join(f"{p} p50 {v['p50_s']:.2f} s / p95 {v['p95_s']:.2f} s"
                                                 for p, v in run["pages"].items()))
    if box in baselines:
        _log(f"against the baseline of {baselines[box]['created']} ({box}):")
        for row in rows:
            ratio = f"{row['ratio']:.2f}×" if row["ratio"] is not None else "no baseline"
            _log(f"  N={row['sessions']} {row['page']}: p95 {row['p95_s']:.2f} s, baseline "
                 f"{row['baseline_p95_s'] or '-'} s, {ratio}{'  GREW' if row['grew'] else ''}")
    else:
        _log(f"no baseline for this box ({box}) in {args.baseline}: --save-baseline stores one")
    if args.save_baseline:
        baselines[box] = baseline_entry(report)
        args.baseline.parent.mkdir(parents=True, exist_ok=True)
        args.baseline.write_text(json.dumps(baselines, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        _log(f"baseline stored for {box} in {args.baseline}")
    if args.strict and not args.save_baseline:
        grew = [row for row in rows if row["grew"]]
        if box not in baselines or grew:
            _log("--strict: " + (f"p95 grew by more than {GROWTH_LIMIT - 1:.0%} on " + ", ".join(
                f"{row['page']} (N={row['sessions']}, {row['ratio']:.2f}×)" for row in grew) if grew
                else "no baseline to compare with"))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
