"""deploy/closed_metrics.py on its own (the fast tier): ``serve.py`` answers 404 for Streamlit's metrics in every
spelling that reaches Streamlit's route, and passes everything else on. On main a single server showed anyone the
bytes uploaded and the class board's refresh counts (issue #53)."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from deploy.closed_metrics import ClosedMetrics


async def _status(path: str) -> int:
    async def streamlit(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"streamlit"})

    sent = []

    async def send(message):
        sent.append(message)

    await ClosedMetrics(streamlit)({"type": "http", "method": "GET", "path": path, "headers": []}, None, send)
    return sent[0]["status"]


@pytest.mark.parametrize("path", ["/_stcore/metrics", "//_stcore/metrics", "/_stcore/metrics/", "/_stcore//metrics",
                                  "/lab/_stcore/metrics"])
def test_the_metrics_are_closed(path):
    assert asyncio.run(_status(path)) == 404


@pytest.mark.parametrize("path", ["/", "/_stcore/health", "/_stcore/host-config", "/fill-mask", "/metrics"])
def test_other_paths_pass(path):
    assert asyncio.run(_status(path)) == 200


ROOT = Path(__file__).resolve().parent.parent
# Streamlit's own route, served by a real st.App (its own process: one Streamlit runtime per process)
THROUGH_STREAMLIT = """
import streamlit as st
from starlette.middleware import Middleware
from starlette.testclient import TestClient
from deploy.closed_metrics import ClosedMetrics

with TestClient(st.App("app.py", middleware=[Middleware(ClosedMetrics)])) as client:
    print([client.get("http://testserver" + path).status_code
           for path in ("/_stcore/metrics", "//_stcore/metrics", "/_stcore/metrics/", "/_stcore/health")])
"""


@pytest.mark.subprocess
def test_streamlits_metrics_route_is_closed():
    done = subprocess.run([sys.executable, "-c", THROUGH_STREAMLIT], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[404, 404, 404, 200]", done.stderr[-2000:]


def test_serve_installs_it():
    import ast

    source = (ROOT / "serve.py").read_text(encoding="utf-8")
    names = {node.args[0].id for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Middleware"}
    assert names == {"ClosedMetrics", "UploadQuota"}
