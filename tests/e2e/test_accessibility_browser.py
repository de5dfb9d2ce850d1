"""Accessibility in a real browser: the axe-core rule suite (``e2e.axe``) finds no critical or serious violation on
any page, in Chinese and English, at 1280×720 and on a 390×844 phone (every presentation scene at both sizes is
checked on the presenter's walk, tests/e2e/test_presenter_bar_browser.py, which opens each scene's link anyway);
the document's language follows the chosen one, also after switching; the sidebar's page links show keyboard
focus.

One server for the session (tests/e2e/conftest.py) and one browser; each case is a fresh browser context.
"""
from __future__ import annotations

import re

import pytest

from e2e.axe import DESKTOP, DOCUMENT_READY, PHONE, desktop_and_phone_problems
from e2e.conftest import TIMEOUT_S, URL_PATHS, open_page, page_url, wait_for
from ui import PAGES
from ui.accessibility import DOCUMENT_LANGS, STREAMLIT_NAMES
from ui.i18n import LANGS, translate

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

LANG_IS = "(want) => document.documentElement.lang === want"


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
    assert desktop_and_phone_problems(page, lang, f"{url_path} ({lang})") == []


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


# ---- the Tab cycle and the focus ring (issue #54) -------------------------------------------------------------
# what has the keyboard focus: its widget's key (the st-key-<key> class of its container), whether it is a button
# of a chart's toolbar, its role (radio, switch, checkbox or else)
FOCUSED = """() => { const el = document.activeElement;
  if (!el || el === document.body) return null;
  const box = el.closest('[class*="st-key-"]');
  const key = box ? [...box.classList].find((c) => c.startsWith('st-key-')).slice(7) : '';
  return {key, toolbar: !!el.closest('.modebar'), label: el.getAttribute('aria-label') || '',
          role: el.getAttribute('role') || el.getAttribute('type') || el.tagName.toLowerCase()}; }"""
# the focused option's outline, and the backgrounds behind it (the outline lies outside the label, on its
# parents) from the nearest up to the first opaque one
FOCUS_RING = r"""() => { const label = document.activeElement.closest('label');
  const s = getComputedStyle(label);
  const layers = [];
  for (let el = label.parentElement; el; el = el.parentElement) {
    const c = getComputedStyle(el).backgroundColor;
    layers.push(c);
    if (/^rgb\(/.test(c)) break; }
  return {style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor, layers}; }"""


def rgba(css: str) -> tuple[float, float, float, float]:
    """A computed CSS colour, rgb() or rgba(), as (r, g, b, alpha)."""
    values = [float(v) for v in css[css.index("(") + 1:css.index(")")].split(",")]
    return (values[0], values[1], values[2], values[3] if len(values) == 4 else 1.0)


def behind(layers: list[str]) -> str:
    """What the eye sees through background layers listed from the nearest to the farthest (a white page below)."""
    seen = (255.0, 255.0, 255.0)
    for layer in reversed(layers):
        *colour, alpha = rgba(layer)
        seen = tuple(alpha * c + (1 - alpha) * s for c, s in zip(colour, seen))
    return "rgb({}, {}, {})".format(*seen)


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two opaque CSS colours."""
    def luminance(colour):
        r, g, b, _ = (c / 255 for c in rgba(colour))
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def tab_cycle(page, limit: int = 200) -> list[dict]:
    """Every Tab stop from the top of the page to its end, in order."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUSED)
        if stop is None:  # past the last stop
            return stops
        stops.append(stop)
    pytest.fail(f"the Tab cycle did not end in {limit} presses")


def test_fill_mask_tab_path_has_no_chart_toolbar(context_of, warm_server):
    """From the top of the fill-mask page: the sentence box within 12 Tabs (issue #54), and no stop in
    the whole cycle is a chart toolbar's button (plotly made 8 per chart, 40 of the page's 104); the toolbar's one
    button, for a mouse, is named in Chinese."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, "fill-mask"))
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .modebar-btn').length >= 4")
    page.wait_for_timeout(1000)  # the script marks new elements 200 ms after the page settles
    stops = tab_cycle(page)
    boxes = [n for n, stop in enumerate(stops, 1) if stop["key"] == "fill_sentence" and stop["role"] == "text"]
    assert boxes and boxes[0] <= 12, stops  # Tab presses to the sentence box (23 before the page links were one stop)
    assert [s for s in stops if s["toolbar"]] == []
    names = page.evaluate("() => [...document.querySelectorAll('.modebar-btn')].map((b) => b.ariaLabel)")
    assert names and set(names) == {"下载图表（SVG）"}, names


# the Streamlit keys around the focused element, innermost first
FOCUS_KEYS = """() => { const keys = [];
  for (let n = document.activeElement; n && n.classList; n = n.parentElement)
    for (const c of n.classList) if (c.startsWith('st-key-')) keys.push(c.slice(7));
  return keys; }"""
# the ELMo page's sliders stand after the lecture's formula, diagram, exercise and the sentences they mix (30 Tabs);
# the class board's inputs come with a board (a student's sentence) or a sign-in link (the lecturer's secret)
SHORT_TAB_PATH = [spec for spec in PAGES if spec.main_input and spec.listed
                  and spec.url_path not in ("elmo-weights", "class-board")]


@pytest.mark.parametrize("spec", SHORT_TAB_PATH, ids=lambda spec: spec.url_path)
def test_the_main_input_is_12_tabs_or_2_keys_away(context_of, warm_server, spec):
    """Issue #54 item 3: from the top of the page, plain Tab reaches the page's main input within 12 presses (the
    sidebar's page links are one stop, the page region and the headings' link icons none); the skip link, first
    stop, puts the focus into it with Enter: 2 key presses."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, spec.url_path))
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)
    page.wait_for_timeout(1000)  # the script marks new elements 200 ms after the page settles
    for _ in range(12):
        page.keyboard.press("Tab")
        if set(page.evaluate(FOCUS_KEYS)) & set(spec.main_input):
            break
    else:
        pytest.fail(f"{spec.url_path}: the main input {spec.main_input} not reached in 12 Tabs")
    open_page(page, page_url(warm_server, spec.url_path))  # from the top again
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)
    page.wait_for_timeout(1000)
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.dataset.testid") == "stSkipToContent"
    assert page.evaluate("() => document.activeElement.textContent") == translate("zh", "a11y.skip")
    page.keyboard.press("Enter")
    assert set(page.evaluate(FOCUS_KEYS)) & set(spec.main_input), page.evaluate(FOCUS_KEYS)


def test_the_page_links_are_one_tab_stop_moved_through_by_arrows(context_of, warm_server):
    """The sidebar's page links: the current page's is the one Tab stop of the list (after the skip link); ↓ and
    End move to the others, and the list says how in the page's language."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, "attention-heatmap"))
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)
    page.wait_for_timeout(1000)
    links = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stSidebarNav"] a')]
      .map((a) => [a.getAttribute('href'), a.tabIndex])""")
    hrefs = [href for href, _ in links]
    here = next(i for i, href in enumerate(hrefs) if href.endswith("/attention-heatmap"))
    assert [i for i, (_, tab) in enumerate(links) if tab == 0] == [here], links
    assert page.evaluate("""() => document.querySelector('[data-testid="stSidebarNav"] ul')
      .getAttribute('aria-description')""") == translate("zh", "a11y.nav_hint")
    focused = "() => document.activeElement.getAttribute('href')"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate(focused) == hrefs[here]
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) == hrefs[(here + 1) % len(hrefs)]
    page.keyboard.press("End")
    assert page.evaluate(focused) == hrefs[-1]


def test_focused_radio_and_switch_show_a_ring_at_3_to_1(context_of, warm_server):
    """A radio option and a switch focused by keyboard, in the sidebar (the language, presentation mode) and in the
    main area (the input mode, show all candidates): an outline of at least 2 px whose colour has a contrast of at
    least 3:1 with what lies behind it (WCAG 2.4.11/1.4.11; Streamlit's own tint was 1.22:1)."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, "fill-mask"))
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)
    wanted = {"lang": "radio", "present": "switch", "fill_mode": "radio", "fill_show_all": "switch"}
    rings = {}
    for _ in range(60):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUSED)
        if stop and stop["key"] in wanted and stop["role"] == wanted[stop["key"]]:
            rings[stop["key"]] = page.evaluate(FOCUS_RING)
        if len(rings) == len(wanted):
            break
    assert set(rings) == set(wanted), rings
    for key, ring in rings.items():
        assert ring["style"] != "none" and ring["width"] >= 2, (key, ring)
        assert contrast(ring["colour"], behind(ring["layers"])) >= 3, (key, ring)


ENGLISH_NAMES_JS = """(english) => [...document.querySelectorAll('[aria-label], [data-title]')]
  .flatMap((el) => [el.getAttribute('aria-label'), el.getAttribute('data-title')])
  .concat([...document.querySelectorAll('[data-testid="InputInstructions"]')].map((el) => el.innerText.trim()))
  .filter((name) => name && english.includes(name))"""


@pytest.mark.parametrize("url_path,box_key", [("fill-mask", "fill_sentence"), ("static-vs-contextual", "vec_text"),
                                              ("attention-heatmap", "att_sentence")])
def test_streamlits_own_control_names_speak_chinese_on_a_chinese_page(context_of, warm_server, url_path, box_key):
    """Issue #54 item 2: on a Chinese page no control a screen reader announces keeps Streamlit's English name (the
    heading links, the select's "Open", the sidebar's, a table's toolbar, a number box's steps, the input hints
    "Press Enter to apply"); on the English page they stay English."""
    english = list(STREAMLIT_NAMES)
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, url_path, lang="zh"))
    box = page.locator(f".st-key-{box_key} input, .st-key-{box_key} textarea").first
    box.click()
    box.press("End")
    box.type("了")  # an edited box shows its hint
    page.wait_for_timeout(1_000)
    assert page.evaluate(ENGLISH_NAMES_JS, english) == []
    hints = page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=\"InputInstructions\"]')].map((el) => el.innerText)")
    assert {translate("zh", "a11y.enter_apply"), translate("zh", "a11y.ctrl_enter_apply")} & set(hints), hints
    open_page(page, page_url(warm_server, url_path, lang="en"))
    assert page.evaluate(ENGLISH_NAMES_JS, english)  # untouched in English


# each chart's accessible name (Streamlit's ``alt``: a role="figure" element named by aria-label)
SPOKEN_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"][role="figure"]')]
  .map((el) => (el.getAttribute('aria-label') || '').trim())"""


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("url_path", ["fill-mask", "static-vs-contextual", "attention-heatmap"])
def test_every_chart_speaks_its_summary_and_hides_its_svg(context_of, warm_server, url_path, lang):
    """Issue #54 items 1 and 6: each chart of the page is named in the accessibility tree by a one-line summary in
    the page's language; its SVG (ticks and labels read one by one) is hidden
    from the screen reader; on the fill-mask page each blank's predictions are spoken as "word, probability" pairs
    under the blank's name."""
    page = context_of(DESKTOP)
    open_page(page, page_url(warm_server, url_path, lang=lang))
    # (plotly draws a moment after the run): one summary per chart drawn
    spoken = wait_for(page, lambda: (lambda lines: lines if lines and all(lines) and len(lines) ==
                                     page.locator(".js-plotly-plot").count() else None)(page.evaluate(SPOKEN_JS)),
                      "a summary for every chart", timeout_s=120)
    chart_word = translate(lang, "page.spoken.untitled").rstrip("。.")
    assert all(line.startswith(chart_word) for line in spoken), spoken
    tree = page.locator("[data-testid='stMain']").aria_snapshot()
    assert spoken[0][:30] in tree  # read by a screen reader, not display:none
    assert page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .main-svg')]"
                         ".every((svg) => svg.getAttribute('aria-hidden') === 'true')")
    if url_path == "fill-mask":
        pair = r"[^\s，,；;]+，\d+\.\d%" if lang == "zh" else r"[^\s,;]+, \d+\.\d%"
        # the two blanks' predictions in one summary, each blank named, three pairs each
        assert any(line.count("[MASK]") >= 2 and len(re.findall(pair, line)) >= 6 for line in spoken), spoken


# every help icon's box, and each focusable sideways scroller's background (its scroll cue)
HELP_TARGETS = """() => [...document.querySelectorAll('[data-testid="stTooltipHoverTarget"] > button')]
  .filter((b) => b.offsetParent !== null)
  .map((b) => { const r = b.getBoundingClientRect(); return [r.width, r.height]; })"""
SCROLL_CUES = """() => [...document.querySelectorAll('.katex-display[tabindex="0"]')]
  .map((el) => getComputedStyle(el).backgroundImage)"""


def test_on_a_phone_help_icons_are_24_px_targets_and_wide_formulas_show_they_scroll(context_of, warm_server):
    """Issue #54 item 5 on a 390×844 phone: each widget's "?" is a target of at least 24×24 px (it was 18×18), and
    a formula wider than the screen shows a shadow at the edge where more of it hides."""
    page = context_of(PHONE)
    open_page(page, page_url(warm_server, "pretraining-objectives"))
    page.wait_for_function(DOCUMENT_READY, timeout=60_000)
    page.wait_for_timeout(1000)  # the script marks the scrollers 200 ms after the page settles
    targets = page.evaluate(HELP_TARGETS)
    assert targets and all(w >= 24 and h >= 24 for w, h in targets), targets
    cues = page.evaluate(SCROLL_CUES)
    assert cues and all("radial-gradient" in cue for cue in cues), cues
