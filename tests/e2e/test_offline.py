"""No request leaves localhost: every page, in a real browser, with Markdown payloads (each page opened plainly is
checked the same way by tests/e2e/test_pages_browser.py::test_page_in_browser, through :func:`watch_requests`).

Playwright sees every request the page makes (documents, scripts, fonts, images, favicons, websockets).
Each page is opened with ``?model=`` set to Markdown that would make the browser fetch an
external image if it were rendered (``![i](http://evil.example/md.png)``), including the pages' own
variants that show the model name (static page with ``ctx=bert``, ELMo page with ``bert=1``); the
sidebar's "other model" box gets the same payload typed in. Every request must go to the app's own
server (or be a ``data:``/``blob:`` URL), and no ``<img>`` may point elsewhere.
"""
from __future__ import annotations

import pytest

from core.guard.safe_text import WORD_JOINER
from e2e.conftest import (
    URL_PATHS,
    VIEWPORT,
    assert_local_only,
    body_text,
    check_healthy,
    open_page,
    page_url,
    wait_idle,
    watch_requests,
)

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

PAYLOAD = "![i](http://evil.example/md.png)"
VARIANTS = [(path, {"model": PAYLOAD}) for path in URL_PATHS] + [
    ("static-vs-contextual", {"model": PAYLOAD, "ctx": "bert"}),
    ("elmo-weights", {"model": PAYLOAD, "bert": "1"}),
    ("static-vs-contextual", {"model": "<http://evil.example/autolink>", "ctx": "bert"}),
]


@pytest.fixture
def watched(browser, warm_server):
    """A fresh session whose every request URL is collected."""
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
    requests = watch_requests(context)
    yield context.new_page(), requests
    context.close()


@pytest.mark.parametrize("url_path, query", VARIANTS,
                         ids=[f"{i}-{p}-{'-'.join(q) or 'plain'}" for i, (p, q) in enumerate(VARIANTS)])
def test_no_request_leaves_localhost(watched, warm_server, url_path, query):
    page, requests = watched
    open_page(page, page_url(warm_server, url_path, **query))
    check_healthy(page, allow_errors=True)  # an unknown model may be an error box; never an exception
    page.wait_for_timeout(1000)  # late requests: favicon, fonts
    assert_local_only(page, requests, warm_server.port, f"{url_path} {query}")
    assert "evil.example" not in page.content(), "a refused ?model= should not reach the page"


def test_model_box_payload_stays_text(watched, warm_server):
    page, requests = watched
    open_page(page, page_url(warm_server, "fill-mask", model="some-org/some-bert"))  # opens the "other" box
    box = page.locator('[data-testid="stSidebar"] [data-testid="stTextInput"] input')
    assert box.input_value() == "some-org/some-bert"
    box.fill(PAYLOAD)
    box.press("Enter")
    wait_idle(page)
    check_healthy(page, allow_errors=True)
    # refused, and shown as typed (md_escape's invisible word joiner breaks the link, not what the eye reads)
    shown = body_text(page).replace(WORD_JOINER, "")
    assert "未知模型" in shown and PAYLOAD in shown
    page.wait_for_timeout(1000)
    assert_local_only(page, requests, warm_server.port, "sidebar box")
