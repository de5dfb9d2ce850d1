"""Ten students at once: 10 browser sessions on one freshly started ``streamlit run`` server.

Round 1 opens every page at the same moment (10 sessions over the 8 pages, so the model pages are
hit twice: two sessions race to load the same model); round 2 switches every session to another page
through the sidebar navigation, again all at once. Every page must finish without an exception box,
a traceback or an error message; afterwards each model must have been loaded exactly once by the
server process (the registry's loads, counted and published by the server wrapper in
tests/e2e/conftest.py), and the server's resident memory is printed before and after.

Why a real server and not AppTest in threads: ``AppTest.run`` swaps process-wide globals for every run
(``Runtime._instance`` is set to a mock and reset to ``None`` afterwards, ``PagesManager.
uses_pages_directory`` and the ``global.appTest`` option are patched), so concurrent AppTests would
fail because of the test harness, not the app. A real server is what the classroom uses anyway.
"""
from __future__ import annotations

import time

import pytest

from core.models.catalogue import list_models
from e2e.conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LISTED_PATHS,
    VIEWPORT,
    alerts,
    body_text,
    browser_missing_reason,
    open_page,
    page_url,
    start_server,
    wait_idle,
)

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

SESSIONS = 10
RSS_SANITY_MB = 6 * 1024


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory):
    reason = browser_missing_reason()
    if reason:
        pytest.skip(reason)
    server = start_server(tmp_path_factory.mktemp("concurrency-server"))
    yield server
    server.stop()


def check_page(page, label: str) -> None:
    exceptions = page.locator('[data-testid="stException"]').all_inner_texts()
    assert not exceptions, (label, exceptions)
    text = body_text(page)
    assert "Traceback" not in text and "Traceback" not in page.content(), label
    assert "Page not found" not in text, label
    errors = alerts(page, "Error")
    assert not errors, (label, errors)
    assert page.locator('[data-testid="stMain"] h1').count() >= 1, label


def go_via_sidebar(page, server, url_path: str) -> None:
    nav = '[data-testid="stSidebarNav"] a'
    link = page.locator(f'{nav}[href$="/{url_path}"]')
    if link.count():
        link.first.click()
    else:  # navigation not rendered (should not happen): open the page directly
        page.goto(page_url(server, url_path), wait_until="commit")


def test_ten_sessions_at_once(fresh_server):
    from playwright.sync_api import sync_playwright

    server = fresh_server
    rss_start = server.rss_mb()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            warm = browser.new_context(viewport=VIEWPORT)
            open_page(warm.new_page(), server.url())  # warm the page modules before the counted rounds
            warm.close()
            counts_before = server.load_counts()
            rss_before = server.rss_mb()

            contexts = [browser.new_context(viewport=VIEWPORT, locale="zh-CN") for _ in range(SESSIONS)]
            pages = [c.new_page() for c in contexts]
            first = [LISTED_PATHS[i % len(LISTED_PATHS)] for i in range(SESSIONS)]
            second = [LISTED_PATHS[(i + 3) % len(LISTED_PATHS)] for i in range(SESSIONS)]
            assert set(first) == set(LISTED_PATHS) and set(second) == set(LISTED_PATHS)

            started = time.monotonic()
            for page, path in zip(pages, first):  # all sessions start before any is waited for
                page.goto(page_url(server, path), wait_until="commit")
            for i, (page, path) in enumerate(zip(pages, first)):
                wait_idle(page)
                check_page(page, f"session {i}, round 1, {path}")
            round1 = time.monotonic() - started

            started = time.monotonic()
            for page, path in zip(pages, second):
                go_via_sidebar(page, server, path)
            for i, (page, path) in enumerate(zip(pages, second)):
                wait_idle(page)
                assert page.url.split("?")[0].endswith("/" + path), (i, page.url)
                check_page(page, f"session {i}, round 2, {path}")
            round2 = time.monotonic() - started
            for c in contexts:
                c.close()
        finally:
            browser.close()

    counts = server.load_counts()
    rss_after = server.rss_mb()
    print(f"\n[concurrency] {SESSIONS} sessions: round 1 {round1:.0f} s, round 2 {round2:.0f} s; "
          f"server RSS: start {rss_start:.0f} MB, after warm-up {rss_before:.0f} MB, after {rss_after:.0f} MB; "
          f"model loads before {counts_before}, after {counts}")
    assert counts_before == {}, "the home page should not load any model"
    available = {m.name for m in list_models() if m.available}
    assert available <= set(counts), f"models used by the pages but never loaded: {available - set(counts)}"
    assert all(n == 1 for n in counts.values()), f"a model was loaded more than once: {counts}"
    assert rss_after < RSS_SANITY_MB, f"server RSS {rss_after:.0f} MB"
