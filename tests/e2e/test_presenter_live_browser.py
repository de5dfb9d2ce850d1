"""Presentation mode, live (issue #37), at 1280×720 in zh and en: what the lecturer changes, the class sees.

- Every scene with a sentence box: the box gets one character changed and Enter (Ctrl+Enter in a text area),
  as a lecturer trying a student's sentence would; the result that box drives then lies wholly in view below
  the scene bar, axis labels and legend included, and the box too where both fit on the screen (at 1920×1080).
  The same for a slider (γ), a radio (the distance measure, the evidence page's section) and a tab (attention).
(Arriving at a scene by PageDown looks exactly like opening its link: tests/e2e/test_presenter_bar_browser.py's walk.)

Screenshots of each edited scene in test-artifacts/screenshots/live-<lang>-[<size>-]<scene>-<input>.png.
"""
from __future__ import annotations

import pytest

from e2e.conftest import SCREENSHOTS, check_healthy, open_page, page_url, wait_for, wait_idle
from e2e.test_presenter_bar_browser import (
    current_slide,
    in_view_soon,
    placed_below_the_bar,
    result_box,
    starts_below_the_bar,
    wholly_in_view,
)
from ui.i18n import translate
from ui.lecture_scenes import SCENES
from ui.presentation import result_key

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

LANGS = ("zh", "en")
# (scene, the sentence box's widget key, the result it drives): the seven scenes with a sentence box
SENTENCE_BOXES = (
    ("pair", "vec_text", "static_result"),
    ("senses", "vec_text", "static_result"),
    ("bilm", "obj_sentence", "obj_bilm_result"),
    ("deep", "obj_text_b", "obj_deep_result"),
    ("fill", "fill_sentence", "fill_topk"),
    ("objective", "obj_gpt_sentence", "obj_gpt_result"),
    ("attention", "att_sentence", "att_head_view"),
)


def scroll_top(page) -> float:
    """How far the page is scrolled (Streamlit scrolls its main area, not the document)."""
    return page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop")


def open_scene(page, server, scene_id: str, lang: str) -> None:
    scene = next(s for s in SCENES if s.id == scene_id)
    open_page(page, page_url(server, scene.url_path, present="1", lang=lang, slide=scene_id))
    result = result_key(scene)
    if result:
        assert in_view_soon(page, result) is None, f"{scene_id}: its result is not in view on arrival"


def settled(page) -> None:
    """The run the edit started has ended, and the presenter's script has had time to place the result."""
    wait_idle(page)
    page.wait_for_timeout(1000)


def snap(page, name: str) -> None:
    page.mouse.move(0, 0)  # no tooltip in the picture
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def edit_one_character(page, key: str) -> str:
    """Change the last character of the box ``key`` and commit it as a lecturer does (Enter; Ctrl+Enter in a
    text area, where Enter starts a new line). Returns the new text."""
    box = page.locator(f".st-key-{key} textarea, .st-key-{key} input").first
    box.scroll_into_view_if_needed()  # the lecturer scrolls to the box first
    old = box.input_value()
    new = old[:-1] + ("！" if old[-1] != "！" else "。")
    box.click()
    box.fill(new)
    box.press("Control+Enter" if box.evaluate("(el) => el.tagName") == "TEXTAREA" else "Enter")
    return new


FIELD_JS = """(key) => {
  const r = document.querySelector(`.st-key-${key} input, .st-key-${key} textarea`).getBoundingClientRect();
  return {top: r.top, bottom: r.bottom};
}"""


def box_beside(page, key: str, result: dict) -> tuple[bool, bool]:
    """Whether the sentence box ``key`` (its field, not its label) and its ``result`` (its box, as
    :func:`result_box` gives it) fit on the screen below the bar together, and whether the box is in view."""
    edited = page.evaluate(FIELD_JS, key)
    both = max(edited["bottom"], result["bottom"]) - min(edited["top"], result["top"])
    # the screen below the scene bar itself (a pinned box is the top of the screen a result is placed in)
    fits = both <= result["height"] - result["scene_bar"] - 16  # the presenter keeps 8 px clear at each end
    return fits, edited["top"] >= result["scene_bar"] - 1 and edited["bottom"] <= result["height"] + 1


def edit_sentence_boxes(page, server, lang: str, size: str, boxes=SENTENCE_BOXES) -> tuple[dict, dict, list]:
    """Each scene's sentence box in ``boxes`` edited at ``size``: the scenes whose result is then not wholly in
    view, those whose box is out of view though it fits beside its result, and those where both fit."""
    out_of_view, box_out, fitted = {}, {}, []
    for scene_id, key, result in boxes:
        open_scene(page, server, scene_id, lang)
        new = edit_one_character(page, key)
        settled(page)
        check_healthy(page)
        box = in_view_soon(page, result)
        if box is not None:
            out_of_view[scene_id] = box
        else:
            fits, in_view = box_beside(page, key, result_box(page, result))
            fitted += [scene_id] if fits else []
            if fits and not in_view:
                box_out[scene_id] = page.evaluate(FIELD_JS, key)
        assert page.locator(f".st-key-{key} textarea, .st-key-{key} input").first.input_value() == new
        assert current_slide(page) == scene_id, f"{scene_id}: the edit changed the scene"
        snap(page, f"live-{lang}-{size}-{scene_id}-{key}")
    return out_of_view, box_out, fitted


@pytest.mark.parametrize("lang", LANGS)
def test_an_edited_sentence_keeps_its_result_in_view(page, warm_server, lang):
    """7 of 7 scenes with a sentence box: after the edit, the result the box drives lies wholly in view below
    the bar (before #37 the page stayed where the box was: 0 of 7), and the box keeps the new text. At 1280×720
    no box fits on the screen beside its result (box to result's end: 771–2290 px for 624), so the result wins."""
    page.set_viewport_size({"width": 1280, "height": 720})
    out_of_view, _, _ = edit_sentence_boxes(page, warm_server, lang, "720p")
    assert not out_of_view, f"edited, the result is not wholly in view: {out_of_view}"


def test_an_edited_sentence_box_stays_in_view_beside_its_result_where_both_fit(page, warm_server):
    """A 1920×1080 projector, where the box and its result fit on the screen together on the bilm, deep and
    objective scenes: after the edit both are in view, so the next sentence can be typed at once (the page
    moves only as far as the result needs)."""
    page.set_viewport_size({"width": 1920, "height": 1080})
    fitting = [box for box in SENTENCE_BOXES if box[0] in ("bilm", "deep", "objective")]
    out_of_view, box_out, fitted = edit_sentence_boxes(page, warm_server, "zh", "1080p", fitting)
    assert not out_of_view, f"edited, the result is not wholly in view: {out_of_view}"
    assert fitted, "no box fits beside its result at 1080p: this test would check nothing"
    assert not box_out, f"edited, the box is out of view though it fits beside its result: {box_out}"


@pytest.mark.parametrize("lang", LANGS)
def test_a_slider_a_radio_and_a_tab_keep_their_result_in_view(page, warm_server, lang):
    """γ moved by the keyboard (worked example), the distance measure and the evidence page's section (radios):
    their results lie wholly in view; a tab (attention): its content too, or where it is taller than the screen, it
    starts just below the bar."""
    page.set_viewport_size({"width": 1280, "height": 720})
    out_of_view = {}

    open_scene(page, warm_server, "worked", lang)
    page.locator(".st-key-elmo_gamma input[type='range']").first.focus()
    page.keyboard.press("ArrowRight")
    settled(page)
    if (box := in_view_soon(page, "elmo_s_result")) is not None:
        out_of_view["worked: γ"] = box
    snap(page, f"live-{lang}-worked-elmo_gamma")

    open_scene(page, warm_server, "deep", lang)
    radio = page.locator(".st-key-obj_metric label").filter(has_text=translate(lang, "obj.metric.l2")).first
    radio.scroll_into_view_if_needed()
    radio.click()
    settled(page)
    if (box := in_view_soon(page, "obj_deep_result")) is not None:
        out_of_view["deep: distance"] = box
    snap(page, f"live-{lang}-deep-obj_metric")

    open_scene(page, warm_server, "evidence", lang)
    senses = translate(lang, "evidence.section.senses")
    page.locator(".st-key-_ev_section label").filter(has_text=senses).first.click()
    settled(page)
    if (box := in_view_soon(page, "evidence_result")) is not None:
        out_of_view["evidence: senses"] = box
    assert senses in page.locator(".st-key-_ev_section").inner_text()
    snap(page, f"live-{lang}-evidence-_ev_section")

    open_scene(page, warm_server, "attention", lang)
    tab = page.locator(".st-key-att_result [role='tab']").nth(2)
    tab.scroll_into_view_if_needed()
    tab.click()
    settled(page)
    wait_for(page, lambda: wholly_in_view(result_box(page, "att_result")) or placed_below_the_bar(page, "att_result"),
             "attention: the open tab in view, or starting below the bar", timeout_s=20)
    snap(page, f"live-{lang}-attention-att_tab")
    assert not out_of_view, f"changed, the result is not wholly in view: {out_of_view}"


@pytest.mark.parametrize("lang", LANGS)
def test_a_fill_step_brings_its_candidates_into_view(page, warm_server, lang):
    """The iterative scene (#51): the step's button does not read like the scene bar's "Next" beside it, and its
    press brings the step's evidence (its text and the candidates' bars: 书 vs 图) wholly into view, where the
    section's top stood in view before and the bars below the screen."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_scene(page, warm_server, "iterative", lang)
    step_next = page.locator(".st-key-fill_next button").first
    bar_next = page.locator(".st-key-present_next button").first.inner_text().strip()
    assert translate(lang, "fill.next") in step_next.inner_text() and bar_next != step_next.inner_text().strip()
    step_next.click()
    settled(page)
    check_healthy(page)
    assert page.locator(".st-key-fill_step_result .st-key-fill_step_probs").count() == 1
    assert (box := in_view_soon(page, "fill_step_result")) is None, f"the step's bars are not in view: {box}"
    assert current_slide(page) == "iterative"
    snap(page, f"live-{lang}-iterative-fill_next")


def test_the_elmo_pages_sentences_bring_their_chart_into_view(page, warm_server):
    """The syntax scene (#51): the ELMo page's sentences, edited, bring the live chart they drive into view (it
    stayed 1,712 px below), wholly or, taller than the screen, starting just below the sentences pinned under the bar,
    which stay in view for the next sentence."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_scene(page, warm_server, "syntax", "zh")
    edit_one_character(page, "vec_text")
    settled(page)
    check_healthy(page)
    wait_for(page, lambda: wholly_in_view(result_box(page, "elmo_live_result"))
             or starts_below_the_bar(page, "elmo_live_result"), "syntax: the live chart in view", timeout_s=20)
    field, screen = page.evaluate(FIELD_JS, "vec_text"), result_box(page, "elmo_live_result")
    assert field["top"] >= 0 and field["bottom"] <= screen["bar"] + 1, f"syntax: the pinned box left the screen {field}"
    assert current_slide(page) == "syntax"
    snap(page, "live-zh-syntax-vec_text")


# (scene, sentence box, the result it drives): the scenes whose sentence box is pinned under the scene bar
PINNED_BOXES = (
    ("pair", "vec_text", "static_result"),
    ("senses", "vec_text", "static_result"),
    ("oov", "vec_text", "static_result"),
    ("fill", "fill_sentence", "fill_topk"),
)


@pytest.mark.parametrize("lang", LANGS)
def test_a_pinned_sentence_box_shares_the_screen_with_its_result(page, warm_server, lang):
    """Issue #51 item 1 at 1280×720: on the static page's three scenes the sentences and the word, on the fill scene
    the sentence with [MASK], are pinned under the scene bar, so after the edit the box and the result it drives are
    on one screen (before: the static page's box stood 1,960–2,620 px below its result, fill-mask's 750 px above)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    out_of_view, box_out, fitted = edit_sentence_boxes(page, warm_server, lang, "720p-pinned", PINNED_BOXES)
    assert not out_of_view, f"edited, the result is not wholly in view: {out_of_view}"
    assert fitted == [scene for scene, _, _ in PINNED_BOXES], f"box and result do not fit one screen: {fitted}"
    assert not box_out, f"edited, the box is out of view: {box_out}"
