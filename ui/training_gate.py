"""Training from the browser (the transfer page's 重新计算): off unless the presenter started the server with
``LAB_ALLOW_TRAINING=1``, and one run at a time on the whole server. A run trains for minutes on the
server's cores (three tabs running it took other sessions' fill-mask from 0.17 s to 8-14 s), so whether
it may run is the presenter's decision, not any visitor's.
"""
from __future__ import annotations

import os
import threading

SWITCH = "LAB_ALLOW_TRAINING"
_one_run = threading.Lock()  # module state: one per server process, shared by every session


def allowed() -> bool:
    return os.environ.get(SWITCH) == "1"


def start() -> str | None:
    """Take the server's one training slot: ``None`` when taken (``finish()`` gives it back), else the
    translation key of why not. The switch is checked here too: a disabled button is only the browser's side."""
    if not allowed():
        return "transfer.recompute.off"
    if not _one_run.acquire(blocking=False):
        return "transfer.recompute.busy"
    return None


def finish() -> None:
    _one_run.release()
