"""Serve the app with the embedded models already loaded: ``streamlit run serve.py``.

``streamlit run app.py`` works too, but then the first visitor of each page waits while the weights
load. Here Streamlit's ASGI app (``st.App``) loads them in a background thread as the server starts:
it answers at once, and a visitor who comes before the warm-up ends waits only for the model in use.
The log says when the models are ready (``benchmarks/ui_latency.py`` waits for that line). Uploads are bounded
per session and per client address (``deploy/upload_quota.py``); Streamlit's ``/_stcore/metrics`` is closed
(``deploy/closed_metrics.py``).
"""
from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from contextlib import asynccontextmanager

import streamlit as st
from starlette.middleware import Middleware

from core.guard.errors import LabError
from deploy.closed_metrics import ClosedMetrics
from deploy.upload_quota import UploadQuota

READY_LINE = "embedded models ready"
# core.board.rules's (not imported here: it is heavy, and the server listens before it loads)
BOARD_SECRET_ENV, MIN_BOARD_SECRET_CHARS = "LAB_BOARD_SECRET", 12


def refuse_short_board_secret() -> None:
    """A ``LAB_BOARD_SECRET`` shorter than the class board takes stops the server before it listens, with a message
    saying so (in both languages) instead of a board nobody can sign in to."""
    secret = os.environ.get(BOARD_SECRET_ENV, "").strip()
    if secret and len(secret) < MIN_BOARD_SECRET_CHARS:
        err = LabError("board_secret_short", limit=MIN_BOARD_SECRET_CHARS, count=len(secret))
        print(f"{err.message('zh')}\n{err.message('en')}", file=sys.stderr, flush=True)
        sys.exit(2)


def _warm() -> None:
    # torch and transformers (seconds) are imported here, not before the server listens, so the home page (which
    # needs neither) is served meanwhile; through ui.cache first, the pages' one import order (app.py says why)
    importlib.import_module("ui.cache")
    from core.board.rules import lecturer_secret
    from core.models.cache import warm_embedded

    lecturer_secret()  # the class board's: generated now (unless LAB_BOARD_SECRET is set) and printed in the log
    start = time.monotonic()
    names = warm_embedded()
    print(f"{READY_LINE}: {', '.join(names)} ({time.monotonic() - start:.1f} s)", file=sys.stderr, flush=True)


@asynccontextmanager
async def lifespan(_app):
    threading.Thread(target=_warm, name="warm-embedded-models", daemon=True).start()
    yield


refuse_short_board_secret()
app = st.App("app.py", lifespan=lifespan, middleware=[Middleware(ClosedMetrics), Middleware(UploadQuota)])
