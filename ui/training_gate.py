"""The one gate of every browser control that starts a job running for minutes (training, recomputing the
experiments: the core functions marked ``core.runtime.concurrency.heavy``): off unless the presenter started the
server with ``LAB_ALLOW_TRAINING=1``, and one run at a time per server process. Such a run takes the server's
cores and memory (three tabs training took other sessions' fill-mask from 0.17 s to 8-14 s; two evidence
recomputations doubled the server's RSS), so whether it may run is the presenter's decision, not any
visitor's. ``tests/test_security.py`` checks that the pages start marked jobs through :func:`run` only.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from core.runtime.concurrency import HEAVY_JOBS, release_memory, step_aside
from ui.i18n import t
from ui.page import attempt

SWITCH = "LAB_ALLOW_TRAINING"
_one_run = threading.Lock()  # module state: one per server process, shared by every session
Result = TypeVar("Result")


def allowed() -> bool:
    return os.environ.get(SWITCH) == "1"


def button(label: str, *, key: str, ready: bool = True, **kwargs) -> bool:
    """The start button of a heavy job: disabled, with the reason above it, unless the presenter allowed such
    runs (and ``ready``: the page has what the job needs)."""
    if not allowed():
        st.info(t("gate.off"))
    return st.button(label, key=key, type="primary", disabled=not (ready and allowed()), **kwargs)


def start() -> str | None:
    """Take the process's one slot: ``None`` when taken (``finish()`` gives it back), else the translation key
    of why not. The switch is checked here too: a disabled button is only the browser's side."""
    if not allowed():
        return "gate.off"
    if not _one_run.acquire(blocking=False):
        return "gate.busy"
    return None


def finish() -> None:
    _one_run.release()
    release_memory()


def run(job: Callable[..., Result], *args, **kwargs) -> Result | None:
    """``job(*args, **kwargs)`` in the process's one slot, inside the page's error boundary; ``None`` after a
    message where the page stands when the gate refuses or the job fails. The memory the run took is given back
    when it ends."""
    if job not in HEAVY_JOBS:  # the gate's accounting covers the marked jobs: a forgotten mark is a bug
        raise TypeError(f"{job!r} is not marked core.runtime.concurrency.heavy")
    refused = start()
    if refused:
        st.warning(t(refused))
        return None
    try:
        with step_aside():  # minutes of computing: the class's page runs take their turns meanwhile
            return attempt(job, *args, **kwargs)
    finally:
        finish()
