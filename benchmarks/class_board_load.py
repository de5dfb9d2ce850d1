"""The class board under a class: N students send a sentence each within a few seconds; how long each waits for
"sent", and how long until the projector shows each point.

    python -m benchmarks.class_board_load                      # 60 students within 10 s, a server of its own
    python -m benchmarks.class_board_load --url http://127.0.0.1:8500 --backends 8501,8502   # a lecture hall

Each student is one websocket speaking Streamlit's protocol (``benchmarks.classroom_load.run_page``'s way): it
opens the join link, then at its moment (spread evenly over ``--within`` seconds) submits the send form as the
browser does (the text box's value and the submit button's trigger); its send latency runs from that message to
the "sent" message. The projector is a real Chromium page (the lecturer's view, refreshed by its own fragment
timer), read every 0.2 s: the time from each acknowledgement to that point's first appearance. The store is the
data folder's (``LAB_DATA_DIR``: for ``--url`` the same one the hall was started with).

Every simulated student comes from this machine: the NAT case, a class of ``--students`` phones behind one
address, each with the identity the server issued it (read from the join link's ``me`` as the page sets it, kept
for the send, as a phone's browser keeps it), under the default per-origin limits. The run fails (``pass: false``
and exit status 1) when any send is refused or lost: every student must be acknowledged, stored and drawn on the
projector, beside the latency figures. JSON to stdout (and ``--json``), progress to stderr.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np

from benchmarks.classroom_load import loopback_url, measured_on, run_page
from benchmarks.common import make_result, print_report

TARGET_STUDENTS, TARGET_WITHIN_S, TARGET_SEND_P95_S, TARGET_SHOWN_S = 60, 10.0, 1.0, 3.0
PAGE = "class-board"
SECRET = "benchmark-lecturer-secret"


def _element_id(message) -> tuple[str, object] | None:
    element = message.delta.new_element
    kind = element.WhichOneof("type")
    return (kind, getattr(element, kind)) if kind else None


async def student(url: str, board_id: str, index: int, start_at: float, timeout_s: float,
                  cookie: str | None) -> dict:
    """Open the join link, wait for ``start_at`` (perf_counter), send; {"seconds", "number", "status"}."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    query = urllib.parse.urlencode({"board": board_id})
    box = submit = None
    headers = {"Cookie": cookie} if cookie else None
    async with websockets.connect(url.replace("http://", "ws://", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None, open_timeout=timeout_s, additional_headers=headers,
                                  ping_interval=None) as ws:
        async def until_finished(on_element) -> str:
            async with asyncio.timeout(timeout_s):
                while True:
                    message = ForwardMsg.FromString(await ws.recv())
                    kind = message.WhichOneof("type")
                    if kind == "page_info_changed":  # the identity the server issued: kept, as the browser does
                        issued["query"] = message.page_info_changed.query_string
                    if kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                        on_element(*(_element_id(message) or (None, None)))
                    if kind == "script_finished":
                        return ForwardMsg.ScriptFinishedStatus.Name(message.script_finished)

        def find_form(kind, element) -> None:
            nonlocal box, submit
            if kind == "text_input" and element.id.endswith("board_sentence"):
                box = element.id
            elif kind == "button" and element.is_form_submitter and element.form_id.endswith("board_send"):
                submit = element.id

        issued: dict[str, str] = {}
        opened = BackMsg()
        opened.rerun_script.page_name, opened.rerun_script.query_string = PAGE, query
        await ws.send(opened.SerializeToString())
        await until_finished(find_form)
        if not (box and submit):
            raise RuntimeError("the join link shows no send form")
        query = issued.get("query", query)
        await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
        send = BackMsg()
        send.rerun_script.page_name, send.rerun_script.query_string = PAGE, query
        text = send.rerun_script.widget_states.widgets.add()
        text.id, text.string_value = box, f"第{index}位同学吃了一个苹果。"
        trigger = send.rerun_script.widget_states.widgets.add()
        trigger.id, trigger.trigger_value = submit, True
        sent_at = time.perf_counter()
        reply: dict = {}

        def find_ack(kind, element) -> None:
            if kind == "alert" and "seconds" not in reply:
                reply["seconds"] = time.perf_counter() - sent_at
                reply["acknowledged_at"] = time.perf_counter()
                reply["text"] = element.body
        await ws.send(send.SerializeToString())
        reply["status"] = await until_finished(find_ack)
        return reply


def watch_projector(url: str, board_id: str, seen: dict[str, float], stop: threading.Event, ready: threading.Event,
                    cookie_port: str | None) -> None:
    """A real Chromium on the projector view (as the class sees it): records when each sentence first shows."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="zh-CN")
        if cookie_port:
            context.add_cookies([{"name": "lab_backend", "value": cookie_port, "url": url}])
        page = context.new_page()
        page.goto(f"{url}/{PAGE}?board={board_id}&view=projector", timeout=600_000)
        page.wait_for_selector(".st-key-board_result", timeout=600_000)
        ready.set()
        while not stop.is_set():
            texts = page.evaluate("""() => {
              const plot = document.querySelector('.st-key-board_scatter .js-plotly-plot');
              return plot && plot.data ? plot.data.flatMap((t) => t.customdata || []) : [];
            }""")
            now = time.perf_counter()
            for text in texts:
                seen.setdefault(text.replace("【", "").replace("】", ""), now)
            time.sleep(0.2)
        browser.close()


async def class_burst(url: str, board_id: str, students: int, within_s: float, timeout_s: float,
                      backends: list[str]) -> list[dict | BaseException]:
    start = time.perf_counter() + 5.0 + students * 0.05  # every student's page open before the first send
    return await asyncio.gather(*(
        student(url, board_id, i, start + within_s * i / max(1, students - 1), timeout_s,
                f"lab_backend={backends[i % len(backends)]}" if backends else None)
        for i in range(students)), return_exceptions=True)


def measure(url: str, students: int, within_s: float, timeout_s: float, backends: list[str]) -> dict:
    from core.board import rules as board
    from core.board.store import store

    # warm-up: each process loads the board's models on a board of its own, as a lecturer's rehearsal would
    warm = board.open_board(store(), board.lecturer_secret(), "苹果", "", "elmo")
    for sentence in ("我吃了一个苹果。", "苹果发布了新手机。"):
        board.send(store(), warm.id, board.issue_identity(store(), warm.id, None, "warm-up"), "warm-up", sentence, None)
    for backend in backends or [None]:
        asyncio.run(run_page(url, PAGE, timeout_s, f"board={warm.id}",
                             f"lab_backend={backend}" if backend else None))
    b = board.open_board(store(), board.lecturer_secret(), "苹果", "", "elmo")
    # the projector opens with the lecturer's example already drawn (the browser has loaded plotly)
    board.send(store(), b.id, board.issue_identity(store(), b.id, None, "warm-up"), "warm-up", "老师的苹果。", None)
    seen: dict[str, float] = {}
    stop, ready = threading.Event(), threading.Event()
    watcher = threading.Thread(target=watch_projector, args=(url, b.id, seen, stop, ready,
                                                             backends[0] if backends else None), daemon=True)
    watcher.start()
    ready.wait(timeout_s)
    results = asyncio.run(class_burst(url, b.id, students, within_s, timeout_s, backends))
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline and len(seen) < students + 1:
        time.sleep(0.2)
    stop.set()
    watcher.join(timeout=60)
    problems = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    replies = [r for r in results if isinstance(r, dict)]
    acked = [r for r in replies if "已发送" in r.get("text", "")]
    problems += [f"not acknowledged: {r.get('text', r.get('status'))}" for r in replies if r not in acked]
    latencies = [r["seconds"] for r in acked]
    shown = []
    for i, r in enumerate(results):
        if isinstance(r, dict) and r in acked:
            appeared = seen.get(f"第{i}位同学吃了一个苹果。")
            shown.append(None if appeared is None else max(0.0, appeared - r["acknowledged_at"]))
    stored = len(store().contributions(b.id)) - 1  # the lecturer's example
    return {
        "students": students, "within_s": within_s, "backends": backends or None,
        "acknowledged": len(acked), "stored": stored,
        "send_p50_s": round(np.quantile(latencies, 0.5), 3) if latencies else None,
        "send_p95_s": round(np.quantile(latencies, 0.95), 3) if latencies else None,
        "send_max_s": round(max(latencies), 3) if latencies else None,
        "on_projector": sum(s is not None for s in shown),
        "shown_p95_s": round(np.quantile([s for s in shown if s is not None], 0.95), 3) if any(shown) else None,
        "shown_max_s": round(max(s for s in shown if s is not None), 3) if any(shown) else None,
        "problems": problems[:10],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.class_board_load", description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=TARGET_STUDENTS)
    parser.add_argument("--within", type=float, default=TARGET_WITHIN_S, help="seconds over which the sends spread")
    parser.add_argument("--url", type=loopback_url, help="a running server or hall on this machine")
    parser.add_argument("--backends", default="", help="a hall's app ports (its lab_backend cookie), e.g. 8501,8502")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    backends = [p.strip() for p in args.backends.split(",") if p.strip()]
    if args.url is None:  # the server started here: its own data folder; every student on this one address
        os.environ.setdefault("LAB_DATA_DIR", tempfile.mkdtemp(prefix="class-board-bench-"))
        os.environ.pop("LAB_BOARD_ORIGIN_LIMIT", None)  # the NAT case: the default per-origin limits hold
        os.environ.setdefault("LAB_BOARD_SECRET", secrets.token_urlsafe(12))
    report = measured_on(args.url, args.timeout,
                         lambda url: measure(url, args.students, args.within, args.timeout, backends))
    report["results"] = verdict(report)
    print_report(report, args.json)
    return 0 if all(r["pass"] for r in report["results"]) else 1


def verdict(report: dict) -> list[dict]:
    """The run's figures against their targets: every student acknowledged, stored and on the projector (a send
    refused or lost fails the run), the send p95 and the slowest point's delay."""
    students = report["students"]
    return [
        make_result("class_board_acknowledged", report["acknowledged"], students, higher_is_better=True),
        make_result("class_board_stored", report["stored"], students, higher_is_better=True),
        make_result("class_board_on_projector", report["on_projector"], students, higher_is_better=True),
        make_result("class_board_send_p95_s", report["send_p95_s"] or float("inf"), TARGET_SEND_P95_S, unit="s"),
        make_result("class_board_shown_max_s", report["shown_max_s"] or float("inf"), TARGET_SHOWN_S, unit="s")]


if __name__ == "__main__":
    sys.exit(main())
