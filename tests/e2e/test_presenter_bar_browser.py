"""Presentation mode on a 1280×720 projector (issue #27): the scene bar keeps one compact height on every
scene in both languages, so "Next" never moves under the presenter's pointer; ←/→ on a focused slider move
the slider, and the clicker's PageDown advances exactly one scene, also right after a slider click and
0.3 s after arriving.

Each scene's result (``ui.presentation.result_key``), with its figures' axis labels and legends, lies wholly inside the
viewport below the bar on arrival, in zh and en at 1280×720 and in zh at 1920×1080, as it does opened by its link.
At 1280×720 each scene is also opened by its link, and checked by axe-core there and on a phone.
One viewport screenshot per scene in test-artifacts/screenshots/bar-<lang>-<width>-<nn>-<scene>.png.
"""
from __future__ import annotations

import re

import pytest

from e2e.axe import DESKTOP, desktop_and_phone_problems
from e2e.conftest import SCREENSHOTS, check_healthy, open_page, page_url, wait_for, wait_idle
from ui.i18n import translate
from ui.lecture_scenes import SCENES
from ui.presentation import result_key

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

MAX_BAR_PX = 120
BAR = ".st-key-present_bar"
GAMMA_THUMB = ".st-key-elmo_gamma input[type='range']"  # react-aria: the thumb is a visually hidden range input


def bar_height(page) -> float:
    return page.evaluate(f"() => document.querySelector('{BAR}').getBoundingClientRect().height")


def title_fits(page) -> bool:
    """The bar's first line (counter and scene title) is not cut off; only the note may end in "…"."""
    return page.evaluate("""() => {
      const title = document.querySelector('.st-key-present_text p');
      return title.scrollWidth <= title.clientWidth;
    }""")


def gamma(page) -> str:
    thumb = page.locator(GAMMA_THUMB).first
    return thumb.get_attribute("aria-valuetext") or thumb.input_value()


# The row pinned under the bar that stands above ``el`` (ui/presenter.js's pinnedAbove: it sticks within its wrapper's
# parent, over what follows it there), or null; defined inside each script below.
PINNED_ABOVE_JS = """
  const pinnedAbove = (el) => [...document.querySelectorAll('.st-key-present_pinned')].filter((row) => {
    const within = row.parentElement && row.parentElement.parentElement;
    return within && within.contains(el) && (row.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  }).pop() || null;"""


# The result's box: the container, every plotly figure in it and every SVG text of those figures (tick
# labels, legend, axis titles may reach past their figure's box), and what each formula would need to be
# shown whole (a KaTeX block wider than its column scrolls, so the eye sees it cut).
RESULT_BOX_JS = """([bar, key]) => {""" + PINNED_ABOVE_JS + """
  const el = document.querySelector('.st-key-' + key);
  if (!el) return null;
  const parts = [el, ...el.querySelectorAll('.js-plotly-plot .main-svg, .js-plotly-plot svg text')]
    .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
  // (KaTeX's italic corrections overhang a block by a pixel or two: no glyph is cut by that)
  const cut = [...el.querySelectorAll('.katex-display')].filter((k) => k.scrollWidth > k.clientWidth + 4).length;
  // a row pinned under the bar above the result (ui.presentation.PINNED_KEY) is part of the screen's top
  const pinned = pinnedAbove(el);
  const above = !!pinned;
  return {
    top: Math.min(...parts.map((r) => r.top)), bottom: Math.max(...parts.map((r) => r.bottom)),
    left: Math.min(...parts.map((r) => r.left)), right: Math.max(...parts.map((r) => r.right)),
    bar: Math.max(document.querySelector(bar).getBoundingClientRect().bottom,
                  above ? pinned.getBoundingClientRect().bottom : 0),
    scene_bar: document.querySelector(bar).getBoundingClientRect().bottom,
    width: window.innerWidth, height: window.innerHeight, cut_formulas: cut,
  };
}"""


def result_box(page, key: str) -> dict | None:
    return page.evaluate(RESULT_BOX_JS, [BAR, key])


def wholly_in_view(box: dict | None) -> bool:
    """The result, axis labels and legend included, lies inside the viewport below the scene bar."""
    return bool(box) and (box["top"] >= box["bar"] - 1 and box["bottom"] <= box["height"] + 1
                          and box["left"] >= -1 and box["right"] <= box["width"] + 1 and not box["cut_formulas"])


def in_view_soon(page, key: str) -> dict | None:
    """None once the result ``key`` lies wholly in view (the presenter's script may still be placing it),
    else its box after 20 s."""
    try:
        wait_for(page, lambda: wholly_in_view(result_box(page, key)), f"{key} in view", timeout_s=20)
    except AssertionError:
        return result_box(page, key)
    return None


# Where the result ``key`` starts, the scene bar and a switch pinned under it stand, and the screen's height.
RESULT_TOP_JS = """([bar, key]) => {""" + PINNED_ABOVE_JS + """
  const b = document.querySelector(bar).getBoundingClientRect();
  const el = document.querySelector('.st-key-' + key);
  const pinned = el ? pinnedAbove(el) : null;
  return {top: el ? el.getBoundingClientRect().top : -1e9, bar_top: b.top, bar_bottom: b.bottom,
          pinned_bottom: pinned ? pinned.getBoundingClientRect().bottom : b.bottom, height: window.innerHeight};
}"""


def placed_below_the_bar(page, key: str) -> bool:
    """The scene's result starts just below the scene bar (where the presenter's script scrolls it)."""
    at = page.evaluate(RESULT_TOP_JS, [BAR, key])
    return at["bar_bottom"] - 2 <= at["top"] <= at["bar_bottom"] + 40


def starts_below_the_bar(page, key: str) -> bool:
    """The result ``key`` starts just below the visible scene bar (and a switch pinned under it), in the upper half."""
    at = page.evaluate(RESULT_TOP_JS, [BAR, key])
    bottom = max(at["bar_bottom"], at["pinned_bottom"])
    return at["bar_top"] >= -20 and bottom - 2 <= at["top"] <= bottom + 40 and at["top"] < at["height"] * 0.5


# Everything the chart ``key`` writes (title, bar labels, axes): its texts' extent, and where the screen below the bar
# starts (a page's switch pinned under the bar, ui.presentation.PINNED_KEY, is part of the screen's top).
CHART_TEXT_JS = """([bar, key]) => {""" + PINNED_ABOVE_JS + """
  const b = document.querySelector(bar).getBoundingClientRect();
  const el = document.querySelector('.st-key-' + key);
  const pinned = el ? pinnedAbove(el) : null;
  const texts = el ? [...el.querySelectorAll('svg text')].map(e => e.getBoundingClientRect()) : [];
  if (!texts.length) return null;
  return {top: Math.min(...texts.map(r => r.top)), bottom: Math.max(...texts.map(r => r.bottom)),
          barBottom: pinned ? Math.max(b.bottom, pinned.getBoundingClientRect().bottom) : b.bottom,
          height: window.innerHeight};
}"""


def chart_in_view(page, key: str) -> bool:
    """Every text of the chart ``key`` is on the screen below the scene bar (its empty bottom margin may run past)."""
    box = page.evaluate(CHART_TEXT_JS, [BAR, key])
    return bool(box) and box["top"] >= box["barBottom"] - 2 and box["bottom"] <= box["height"]


def view_of(page, scene) -> dict:
    """Where a scene's page stands once the presenter's script has held its result in place a while: its scroll
    position, where the bar stands and where its result starts below the bar."""
    page.wait_for_timeout(2000)
    return page.evaluate("""([bar, key]) => {
      const el = key && document.querySelector('.st-key-' + key);
      const b = document.querySelector(bar).getBoundingClientRect();
      return {scroll: document.querySelector('[data-testid="stMain"]').scrollTop, bar_top: b.top,
              result_top: el ? el.getBoundingClientRect().top - b.bottom : null};
    }""", [BAR, result_key(scene)])


def same_view(by_key: dict, by_link: dict) -> bool:
    """The same screen: the bar where it was, and the scene's result at the same place below it (within 4 px); a
    scene without a result, the same scroll position (within 24 px). With a result, the scroll position may differ
    by what stands above the result, off screen: a line of text still wrapping there made 25 px in one CI run while
    the result stood 1 px apart."""
    same_place = (abs(by_key["scroll"] - by_link["scroll"]) <= 24 if by_link["result_top"] is None
                  else by_key["result_top"] is not None and abs(by_key["result_top"] - by_link["result_top"]) <= 4)
    return same_place and abs(by_key["bar_top"] - by_link["bar_top"]) <= 2 and by_link["bar_top"] <= 20


def click_the_slider_track(page, where: float) -> None:
    """A mouse click on γ's track, ``where`` (0–1) along it: the slider moves and the page reruns."""
    thumb = page.locator(".st-key-elmo_gamma [data-rac][style*='left']").first  # the visible thumb
    thumb.scroll_into_view_if_needed()
    track = thumb.locator("xpath=..").bounding_box()
    y = thumb.bounding_box()["y"] + thumb.bounding_box()["height"] / 2
    page.mouse.click(track["x"] + track["width"] * where, y)


def current_slide(page) -> str | None:
    match = re.search(r"[?&]slide=([^&]+)", page.url)
    return match.group(1) if match else None


def arrows_move_the_focused_slider(page, tr) -> None:
    """On the worked example: → and ← on the focused γ slider change γ, not the scene."""
    start = gamma(page)
    for key in ("ArrowRight", "ArrowLeft"):
        before = gamma(page)
        page.locator(GAMMA_THUMB).first.focus()
        page.keyboard.press(key)
        wait_for(page, lambda before=before: gamma(page) != before, f"{key} moves γ")
        wait_idle(page)
        assert current_slide(page) == "worked", f"{key} on a focused slider changed the scene"
        assert tr("present.scene.worked") in page.locator(BAR).inner_text()
    assert gamma(page) == start, "→ then ← is back where it started"


def walk_order() -> list[int]:
    """Scene numbers in the order the walk visits them: every scene, and after the fill-mask scene (left
    0.3 s after arriving) back to it with PageUp, so that it is checked too, then on again."""
    fill = next(n for n, scene in enumerate(SCENES, start=1) if scene.id == "fill")
    return [*range(1, fill + 2), fill, *range(fill + 1, len(SCENES) + 1)]


def arrival_out_of_view(page, scene) -> dict:
    """The scene's result (and on the fill-mask scene its whole-word chart) just arrived at: {} where it lies wholly
    in view and starts just below the bar, else {where: its box}."""
    result = result_key(scene)
    if scene.id == "fill":
        wait_for(page, lambda: chart_in_view(page, "fill_words_chart"), "fill: the whole-word chart in view")
    if not result:
        return {}
    if scene.id == "iterative":  # arrived by a fast click: its own result, not the previous scene's chart
        wait_for(page, lambda: starts_below_the_bar(page, result), "iterative: its result in view", timeout_s=60)
    box = in_view_soon(page, result)
    if box is not None:
        return {scene.id: box}
    return {} if starts_below_the_bar(page, result) else {f"{scene.id}, not at the top": result_box(page, result)}


def touch_the_worked_example(page, tr, shot: str) -> dict:
    """On the worked example: ←/→ on the focused γ move γ; revealing the derivation keeps the result in view ({} or
    {where: its box}); then a mouse click on γ's thumb, after which the clicker must still change the scene."""
    arrows_move_the_focused_slider(page, tr)
    page.locator(".st-key-elmo_reveal label").first.click()  # the class has computed: the derivation
    wait_idle(page)
    box = in_view_soon(page, "elmo_exercise")
    page.mouse.move(0, 0)
    page.screenshot(path=str(SCREENSHOTS / f"{shot}-revealed.png"))
    page.locator(".st-key-elmo_gamma [data-rac][style*='left']").first.click()
    assert page.evaluate("() => document.activeElement.type") == "range"
    return {} if box is None else {"worked, revealed": box}


def linked_view(page, server, scene, lang: str, axe_problems: list[str]) -> dict:
    """:func:`view_of` the scene opened by its link; then axe-core's blocking violations of that scene at 1280×720
    and on a phone (the same session laid out for a student following the link) go into ``axe_problems``."""
    page.set_viewport_size(DESKTOP)
    open_page(page, page_url(server, scene.url_path, present="1", lang=lang, slide=scene.id))
    if result_key(scene):
        in_view_soon(page, result_key(scene))
    view = view_of(page, scene)
    axe_problems.extend(desktop_and_phone_problems(page, lang, f"scene {scene.id} ({lang})"))
    return view


WALKS = [("zh", 1280, 720), ("en", 1280, 720), ("zh", 1920, 1080)]


@pytest.mark.parametrize("lang,width,height", WALKS, ids=[f"{lang}-{w}x{h}" for lang, w, h in WALKS])
def test_every_scene_in_view_below_a_steady_bar(page, warm_server, lang, width, height):
    """A first-time presenter with a clicker walks all scenes from the home page with its keys only (each press
    moves exactly one scene). On arrival each scene's result starts just below the bar and lies wholly inside the
    viewport, axis labels and legend included (on the fill-mask scene the whole-word chart beside the characters
    too); the bar's height is the same on every scene and at most 120 px, with the scene's counter and whole title
    in it. On the worked example ←/→ move the focused γ slider, and PageDown after a click on γ's thumb still
    changes the scene; on the fill-mask scene PageDown comes 0.3 s after arrival, and the next scene still shows
    its own result. At 1280×720, each scene then opened by its link looks as it did arrived at by PageDown: the
    bar in place and the same result at the same place just below it, or on a scene without a result the same
    scroll position (the exercises opened scrolled to the bottom when reached by PageDown before #37); there
    axe-core finds no critical or serious violation, at 1280×720 and laid out for a 390×844 phone, and <html lang>
    is the scene's language.

    This one walk per (language, size) holds what test_walk_every_scene (tests/e2e/test_pages_browser.py),
    test_pagedown_arrival_equals_the_deep_link (tests/e2e/test_presenter_live_browser.py) and
    test_scene_has_no_serious_violation_in_presentation_mode (tests/e2e/test_accessibility_browser.py) did apart."""
    def tr(key: str, **params) -> str:
        return translate(lang, key, **params)

    page.set_viewport_size({"width": width, "height": height})
    open_page(page, page_url(warm_server, "overview", present="1", lang=lang))
    bar = page.locator(BAR)
    heights, out_of_view, walked, left_early = {}, {}, {}, False
    compare_links = (width, height) == (1280, 720)
    order = walk_order()
    for step, number in enumerate(order):
        scene = SCENES[number - 1]
        counter = tr("present.counter", k=number, n=len(SCENES))  # "Scene 2/18" is not in "Scene 12/18"
        wait_for(page, lambda counter=counter: counter in bar.inner_text(), f"scene {number} ({scene.id})",
                 interval_s=0.1)
        heights[f"{scene.id}:{step}"] = round(bar_height(page), 1)
        if scene.id == "fill" and not left_early:  # the presenter clicks on 0.3 s after arriving
            left_early = True
            page.wait_for_timeout(300)
            page.keyboard.press("PageDown")
            continue
        wait_idle(page)
        check_healthy(page)
        text = bar.inner_text()
        assert tr(scene.title_key) in text and current_slide(page) in (scene.id, None), (scene.id, text)
        assert counter in text, (scene.id, text)
        heights[f"{scene.id}:{step}"] = round(bar_height(page), 1)
        assert title_fits(page), f"{scene.id}: the scene's title is cut off"
        out_of_view.update(arrival_out_of_view(page, scene))
        if compare_links:
            walked[scene.id] = view_of(page, scene)
        if scene.id == "attention" and height >= 960:  # a 1080p projector: the map grows into the room it has
            heatmap = page.locator(".st-key-att_heatmap .js-plotly-plot").first.bounding_box()
            assert heatmap and heatmap["width"] > 0.4 * width, heatmap
        page.mouse.move(0, 0)  # no tooltip in the picture
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"bar-{lang}-{width}-{number:02d}-{scene.id}.png"))
        if step == len(order) - 1:
            break
        if scene.id == "worked":
            out_of_view.update(touch_the_worked_example(page, tr, f"bar-{lang}-{width}-{number:02d}-{scene.id}"))
        page.keyboard.press("PageDown" if order[step + 1] > number else "PageUp")
    assert not out_of_view, f"results not wholly in view below the bar: {out_of_view}"
    assert len(set(heights.values())) == 1, f"the bar's height changes from scene to scene: {heights}"
    assert max(heights.values()) <= MAX_BAR_PX, heights
    # the whole note is one click away on the bar (its first words only fit in the bar)
    bar.locator("[data-testid='stPopover'] button").first.click()
    note = tr(SCENES[-1].note_key)
    wait_for(page, lambda: note[:20] in page.locator("[data-testid='stPopoverBody']").inner_text(), "the whole note")
    if compare_links:
        axe_problems: list[str] = []
        differ = {scene.id: {"pagedown": walked[scene.id], "link": linked} for scene in SCENES if not same_view(
                  walked[scene.id], linked := linked_view(page, warm_server, scene, lang, axe_problems))}
        assert not differ, f"arrival by PageDown differs from the scene's link: {differ}"
        assert not axe_problems, axe_problems


def test_pagedown_right_after_a_slider_click(page, warm_server):
    """A lecturer drags γ and clicks on at once: the slider's rerun must not swallow the press (it did in 4
    of 5 tries before the press was kept until the scene changed). Three tries, each exactly one scene on."""
    page.set_viewport_size({"width": 1280, "height": 720})
    for where in (0.6, 0.7, 0.8):
        open_page(page, page_url(warm_server, "elmo-weights", present="1", slide="worked"))
        click_the_slider_track(page, where)
        page.keyboard.press("PageDown")
        wait_for(page, lambda: current_slide(page) != "worked", "PageDown after the slider click", timeout_s=60)
        wait_idle(page)
        page.wait_for_timeout(4000)  # a press sent twice would have moved on by now
        assert current_slide(page) == "syntax", page.url
