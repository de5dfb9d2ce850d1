"""A class of 30 while the presenter runs one gated heavy job: the others' p95, with and without it.

    LAB_POS_CORPUS=… python -m benchmarks.gated_run_load          # one server, LAB_ALLOW_TRAINING=1

One server (``serve.py``) with ``LAB_ALLOW_TRAINING=1``. First the classroom run alone
(``benchmarks.classroom_load``: every page warmed, then 30 sessions at once, each its own sentence); then one
session opens the layer-evidence page's recompute (quick samples) and clicks its Start button (the button's
widget id read from the page's own messages, a trigger sent as the browser does), and while that run goes on the
same classroom run again. Reported: both p95 figures and their ratio (issue #39: within 1.5×). JSON to stdout.
"""
from __future__ import annotations

import asyncio
import json
import os

from benchmarks.classroom_load import TARGET_SESSIONS, classroom, measure, served

EVIDENCE = "layer-evidence"


async def start_heavy_run(url: str, timeout_s: float):
    """Open the evidence page's recompute section and click Start; returns the open websocket (the run belongs to
    its session) once the run has begun."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ws = await websockets.connect(url.replace("http://", "ws://", 1) + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=None, ping_interval=None, open_timeout=timeout_s)
    request = BackMsg()
    request.rerun_script.page_name = EVIDENCE
    request.rerun_script.query_string = "section=recompute"
    await ws.send(request.SerializeToString())
    button_id = None
    while True:
        message = ForwardMsg.FromString(await asyncio.wait_for(ws.recv(), timeout_s))
        kind = message.WhichOneof("type")
        if kind == "delta" and message.delta.WhichOneof("type") == "new_element" \
                and message.delta.new_element.WhichOneof("type") == "button" \
                and message.delta.new_element.button.id.endswith("_ev_run"):
            button = message.delta.new_element.button
            if button.disabled:
                raise RuntimeError("the Start button is disabled: start the server with LAB_ALLOW_TRAINING=1")
            button_id = button.id
        if kind == "script_finished":
            break
    if button_id is None:
        raise RuntimeError("no Start button on the evidence page")
    click = BackMsg()
    click.rerun_script.page_name = EVIDENCE
    click.rerun_script.query_string = "section=recompute"
    click.rerun_script.widget_states.widgets.add(id=button_id, trigger_value=True)
    await ws.send(click.SerializeToString())
    while True:  # the progress bar says the run has begun
        message = ForwardMsg.FromString(await asyncio.wait_for(ws.recv(), timeout_s))
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element" \
                and message.delta.new_element.WhichOneof("type") == "progress":
            return ws


async def run(url: str, timeout_s: float) -> dict:
    alone = await measure(url, [TARGET_SESSIONS], 1, timeout_s)
    ws = await start_heavy_run(url, timeout_s)
    drain = asyncio.create_task(_drain(ws))
    try:
        during = await classroom(url, TARGET_SESSIONS, 1, timeout_s, True)
    finally:
        drain.cancel()
        await ws.close()
    p95_alone, p95_during = alone["runs"][0]["all_pages"]["p95_s"], during["all_pages"]["p95_s"]
    return {"sessions": TARGET_SESSIONS, "p95_alone_s": p95_alone, "p95_during_heavy_run_s": p95_during,
            "ratio": round(p95_during / p95_alone, 3), "alone": alone["runs"][0], "during": during,
            "load_average": os.getloadavg()}


async def _drain(ws) -> None:
    async for _ in ws:  # keep reading the heavy session's progress, as its browser tab would
        pass


def main() -> int:
    os.environ["LAB_ALLOW_TRAINING"] = "1"
    with served("serve.py") as (_, url):
        print(json.dumps(asyncio.run(run(url, 600)), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
