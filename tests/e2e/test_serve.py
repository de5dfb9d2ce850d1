"""``streamlit run serve.py`` (the README's run command): the embedded models are loaded as the server
starts, before anyone visits, and the pages then use those same instances (no second load)."""
from __future__ import annotations

import time

import pytest

from core.models.catalogue import list_models
from e2e.conftest import VIEWPORT, body_text, check_healthy, open_page, page_url, start_server

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

READY_TIMEOUT_S = 300
READY_LINE = "embedded models ready"  # serve.READY_LINE (importing serve.py would build an st.App here)


def test_serve_py_loads_the_embedded_models_before_the_first_visit(browser, tmp_path):
    server = start_server(tmp_path, script="serve.py")
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while READY_LINE not in server.log_tail(100_000):
            assert time.monotonic() < deadline, server.log_tail()
            time.sleep(0.5)
        embedded = {m.name for m in list_models() if m.available}
        assert server.load_counts() == {name: 1 for name in embedded}  # before any browser connected
        context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
        try:
            page = context.new_page()
            open_page(page, page_url(server, "fill-mask"))
            check_healthy(page)
            assert "[MASK]" in body_text(page)
        finally:
            context.close()
        assert server.load_counts() == {name: 1 for name in embedded}  # the page used the warmed models
        assert "Traceback" not in server.log_tail(100_000)
    finally:
        server.stop()
