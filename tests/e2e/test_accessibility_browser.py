"""Accessibility in a real browser: the axe-core rule suite (WCAG 2.x A/AA and best practices, through the
maintained ``axe-playwright-python`` binding) finds no critical or serious violation on any page, in Chinese
and English, at 1280×720 and on a 390×844 phone, nor on any presentation scene at either size; the document's
language follows the chosen one, also after switching; the sidebar's page links show keyboard focus.

One server for the session (tests/e2e/conftest.py) and one browser; each case is a fresh browser context.
"""
from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from e2e.conftest import TIMEOUT_S, URL_PATHS, open_page, page_url
from ui.accessibility import DOCUMENT_LANGS
from ui.i18n import LANGS
from ui.lecture_scenes import SCENES

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
BLOCKING = ("critical", "serious")
AXE = Axe()
# ui/document.js is mounted (a component still loading shows a skeleton in its place)
DOCUMENT_READY = "() => !!document.querySelector('.st-key-lab_document .stBidiComponent')"
LANG_IS = "(want) => document.documentElement.lang === want"


def blocking_violations(page) -> list[str]:
    """axe-core's critical and serious violations on the page as it is now, one line per rule."""
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)  # seconds after the run: the page is idle already
    page.wait_for_timeout(500)  # the script marks new elements 200 ms after the page settles
    found = AXE.run(page).response["violations"]
    return [f"{v['impact']} {v['id']} ({v['help']}): " + "; ".join(n["html"][:120] for n in v["nodes"][:3])
            for v in found if v["impact"] in BLOCKING]


@pytest.fixture
def context_of(browser, warm_server):
    """``context_of(viewport)``: a fresh browser context (a new Streamlit session), closed after the test."""
    made = []

    def make(viewport: dict):
        context = browser.new_context(viewport=viewport, locale="zh-CN")
        context.set_default_timeout(TIMEOUT_S * 1000)
        made.append(context)
        return context.new_page()

    yield make
    for context in made:
        context.close()


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("url_path", URL_PATHS)
def test_page_has_no_serious_violation_on_desktop_and_phone(context_of, warm_server, url_path, lang):
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, url_path, lang=lang))
    assert blocking_violations(page) == [], f"{url_path} ({lang}) at 1280×720"
    assert page.evaluate("document.documentElement.lang") == DOCUMENT_LANGS[lang]
    page.set_viewport_size(PHONE)  # the same session laid out for a phone: Streamlit's narrow layout
    page.wait_for_timeout(1500)
    assert blocking_violations(page) == [], f"{url_path} ({lang}) at 390×844"


@pytest.mark.parametrize("lang", list(LANGS))
@pytest.mark.parametrize("scene", SCENES, ids=[scene.id for scene in SCENES])
def test_scene_has_no_serious_violation_in_presentation_mode(context_of, warm_server, scene, lang):
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, scene.url_path, present="1", lang=lang, slide=scene.id))
    assert blocking_violations(page) == [], f"scene {scene.id} ({lang}) at 1280×720"
    assert page.evaluate("document.documentElement.lang") == DOCUMENT_LANGS[lang]
    page.set_viewport_size(PHONE)  # a student following the scene's link on a phone
    page.wait_for_timeout(1500)
    assert blocking_violations(page) == [], f"scene {scene.id} ({lang}) at 390×844"


def test_document_language_follows_the_chosen_language(context_of, warm_server):
    """<html lang> is zh-CN for the Chinese app and en for the English one, also after switching in the
    sidebar (Streamlit serves lang="en" whatever the page says)."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, URL_PATHS[0]))
    page.wait_for_function(LANG_IS, arg="zh-CN", timeout=60_000)
    for lang in ("en", "zh"):
        page.locator('[data-testid="stSidebar"] [data-testid="stRadio"] label').filter(has_text=LANGS[lang]).click()
        page.wait_for_function(LANG_IS, arg=DOCUMENT_LANGS[lang], timeout=60_000)


def test_sidebar_page_links_show_keyboard_focus(context_of, warm_server):
    """Tabbing onto a page link in the sidebar draws an outline around it (Streamlit draws none)."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, URL_PATHS[0]))
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("() => !!document.activeElement.closest('[data-testid=\"stSidebarNav\"]')"):
            break
    else:
        pytest.fail("no sidebar page link took the focus in 40 Tab presses")
    outline = page.evaluate("""() => { const s = getComputedStyle(document.activeElement);
      return [s.outlineStyle, parseFloat(s.outlineWidth)]; }""")
    assert outline[0] != "none" and outline[1] >= 2, outline
