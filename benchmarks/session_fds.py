"""Does a lecture leak file descriptors? 200 sessions opened and closed, one after another, on one server.

    python -m benchmarks.session_fds                   # 200 sessions of the exercises page
    python -m benchmarks.session_fds --sessions 50 --page fill-mask

Each session connects its websocket, runs the page once and disconnects (``benchmarks.classroom_load.run_page``).
The server's open descriptors (``/proc/<pid>/fd``) are counted before the first session, after every
``--every`` sessions, and once more after ``--settle`` seconds without any session. A closed session kept 3
descriptors until a later clean-up (#39 item 8): this says whether that grows with the sessions.
JSON to stdout, progress to stderr.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from benchmarks.classroom_load import run_page, served, session_query
from benchmarks.common import log


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--page", default="exercises")
    parser.add_argument("--settle", type=float, default=30.0)
    args = parser.parse_args(argv)
    with served("serve.py") as (proc, url):
        counts = {"before": open_fds(proc.pid)}
        for i in range(1, args.sessions + 1):
            result = asyncio.run(run_page(url, args.page, 300, session_query(args.page, i)))
            if result["status"] != "FINISHED_SUCCESSFULLY":
                raise RuntimeError(f"session {i}: {result}")
            if i % args.every == 0:
                time.sleep(1)  # the server's side of the closed websocket
                counts[f"after_{i}"] = open_fds(proc.pid)
                log(f"{i} sessions: {counts[f'after_{i}']} descriptors")
        time.sleep(args.settle)
        counts["settled"] = open_fds(proc.pid)
        print(json.dumps({"page": args.page, "sessions": args.sessions, "open_fds": counts}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
