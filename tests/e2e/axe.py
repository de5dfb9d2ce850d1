"""The axe-core rule suite (WCAG 2.x A/AA and best practices, through the maintained ``axe-playwright-python``
binding) as the browser tests run it: the critical and serious violations of a page as it is now, at the two sizes
every page and scene is checked at (tests/e2e/test_accessibility_browser.py for the pages, the presenter's walk in
tests/e2e/test_presenter_bar_browser.py for the scenes)."""
from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe

from ui.accessibility import DOCUMENT_LANGS

DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
BLOCKING = ("critical", "serious")
AXE = Axe()
# ui/document.js is mounted (a component still loading shows a skeleton in its place)
DOCUMENT_READY = "() => !!document.querySelector('.st-key-lab_document .stBidiComponent')"


def blocking_violations(page) -> list[str]:
    """axe-core's critical and serious violations on the page as it is now, one line per rule."""
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)  # seconds after the run: the page is idle already
    page.wait_for_timeout(500)  # the script marks new elements 200 ms after the page settles
    found = AXE.run(page).response["violations"]
    return [f"{v['impact']} {v['id']} ({v['help']}): " + "; ".join(n["html"][:120] for n in v["nodes"][:3])
            for v in found if v["impact"] in BLOCKING]


def desktop_and_phone_problems(page, lang: str, what: str) -> list[str]:
    """The page as it is (at 1280×720), then the same session laid out for a phone (Streamlit's narrow layout):
    every blocking violation at either size, and a document language other than ``lang``'s. The viewport is
    left at the phone's size."""
    problems = [f"{what} at 1280×720: {v}" for v in blocking_violations(page)]
    if page.evaluate("document.documentElement.lang") != DOCUMENT_LANGS[lang]:
        problems.append(f"{what}: <html lang> is not {DOCUMENT_LANGS[lang]}")
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(1500)
    return problems + [f"{what} at 390×844: {v}" for v in blocking_violations(page)]
