"""Every page in a real browser: opened directly by URL, key elements present, one control moved and
the view checked to have changed, no exception box and no "Traceback", a full-page screenshot each
(test-artifacts/screenshots/<url_path>.png). Plus ``?lang=en``, ``?present=1`` and an XSS probe.

One ``streamlit run`` server for the whole session (tests/e2e/conftest.py), one fresh browser
context (= Streamlit session) per test.
"""
from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from e2e.conftest import (
    DEFAULT_PAGE,
    ROOT,
    TIMEOUT_S,
    URL_PATHS,
    alerts,
    assert_local_only,
    body_text,
    check_healthy,
    open_page,
    page_url,
    plotly_data,
    plotly_layout_titles,
    screenshot,
    wait_for,
    wait_idle,
    watch_requests,
)
from ui import PAGES
from ui.i18n import translate
from ui.lecture_scenes import SCENES

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

TRANSFER_RESULTS = ROOT / "assets" / "transfer_results.json"
EXPERIMENT_RESULTS = ROOT / "assets" / "experiments.json"


def zh(key: str, **params) -> str:
    return translate("zh", key, **params)


def en(key: str, **params) -> str:
    return translate("en", key, **params)


def prefix(text: str, n: int = 12) -> str:
    """The start of a translated string, before any Markdown or placeholder."""
    return re.split(r"[*`{【「（(]", text, maxsplit=1)[0][:n]


# ---- small page helpers ----------------------------------------------------------------------------
def h1(page) -> str:
    return page.locator('[data-testid="stMain"] h1').first.inner_text().strip()


PLOTS = '[data-testid="stMain"] .js-plotly-plot'


def widget(page, testid: str, label: str):
    """The widget container whose label is exactly ``label`` (falls back to: contains ``label``)."""
    boxes = page.locator(f'[data-testid="stMain"] [data-testid="{testid}"]')
    for i in range(boxes.count()):
        box = boxes.nth(i)
        labels = box.locator('[data-testid="stWidgetLabel"]')
        if labels.count() and labels.first.inner_text().strip() == label:
            return box
    box = boxes.filter(has_text=label)
    assert box.count(), f"no {testid} labelled {label!r}"
    return box.first


SLIDER_THUMB = 'input[type="range"], [role="slider"]'  # react-aria: a visually hidden range input


def slider_value(box) -> str:
    thumb = box.locator(SLIDER_THUMB).first
    return thumb.get_attribute("aria-valuetext") or thumb.get_attribute("aria-valuenow") or thumb.input_value()


def press_slider(page, box, key: str, times: int = 1) -> None:
    """Focus the slider's thumb and press ``key`` (ArrowRight / ArrowLeft ...), like a keyboard user."""
    thumb = box.locator(SLIDER_THUMB).first
    thumb.focus()
    for _ in range(times):
        page.keyboard.press(key)
        page.wait_for_timeout(100)


def at_least(page, selector: str, n: int, what: str, timeout_s: float = 120) -> int:
    """Wait until ``selector`` matches at least ``n`` elements (lazily loaded widgets render late)."""
    return wait_for(page, lambda: (c := page.locator(selector).count()) >= n and c, what, timeout_s=timeout_s)


# ---- one checker per page --------------------------------------------------------------------------
def check_overview(page) -> None:
    assert h1(page) == zh("home.title")
    text = body_text(page)
    for key in ("home.threads.title", "home.table.title", "home.table.col.static", "home.table.col.elmo",
                "home.table.col.bert", "home.table.row.contextual", "home.table.row.task", "home.table.row.limits",
                "home.models.title"):
        assert zh(key) in text, key
    assert zh("home.table.task.bert") in text and zh("home.table.limits.static") in text, "table cells"
    at_least(page, '[data-testid="stMain"] [data-testid="stPageLink"] a', len(PAGES) - 1, "a link per experiment page")
    at_least(page, '[data-testid="stMain"] [data-testid="stTable"]', 1, "the model status table")
    # control: the sidebar's language switch re-renders the page in English
    page.locator('[data-testid="stSidebar"] [data-testid="stRadio"] label').filter(has_text="English").click()
    wait_for(page, lambda: h1(page) == en("home.title"), "the English title")
    wait_idle(page)  # the title comes first; below it the Chinese run may still show
    assert en("home.table.title") in body_text(page)
    assert "lang=en" in page.url


def check_static(page) -> None:
    assert h1(page) == zh("static.title")
    at_least(page, PLOTS, 2, "scatter (static | contextual) and the cosine heatmap")
    at_least(page, '[data-testid="stMain"] [data-testid="stDataFrame"]', 1, "the nearest-neighbour table")
    assert zh("static.nn_title", layer="")[:6] in body_text(page)
    box = widget(page, "stSlider", zh("static.layer"))
    before_data = wait_for(page, lambda: plotly_data(page, "static_scatter"), "the scatter's data")
    before_value = slider_value(box)
    press_slider(page, box, "ArrowLeft")  # the default is the top layer
    wait_for(page, lambda: plotly_data(page, "static_scatter") != before_data, "the scatter to move to another layer")
    assert slider_value(box) != before_value
    assert "layer=" in page.url


def check_objectives(page) -> None:
    assert h1(page) == zh("nav.objectives")
    keys = ("obj.bilm.title", "obj.deep.title", "obj.gpt.title", "obj.ll.forward", "obj.m.forward")
    # polled: once (CI, 2026-12-03) the text was read while the first section's metrics were not drawn yet
    wait_for(page, lambda: all(prefix(zh(key), 40) in body_text(page) for key in keys),
             "the three sections and their metrics")
    text = body_text(page)
    assert "ELMo 的前向 LM 代替 GPT 演示" in text, "the GPT stand-in is labelled as such"
    assert page.locator('[data-testid="stMain"] .katex').count() >= 3, "the biLM's likelihoods as formulas"
    at_least(page, PLOTS, 6, "probabilities, top-k, movement curve and heatmap, token strip, GPT vs BERT")
    values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    assert values[3].strip() == "0", f"ELMo's forward half must not move: {values}"
    assert all(float(v) > 0 for v in values[4:6]), values
    box = widget(page, "stSlider", zh("obj.top_k"))
    press_slider(page, box, "ArrowRight")  # top-k 5 -> 6

    def six_bars() -> bool:
        new = plotly_data(page, "obj_topk_chart")
        # six candidates, and the real character (苹) as a seventh bar where it ranks below them
        return bool(new) and all(len(t["x"]) in (6, 7) for t in json.loads(new) if t.get("type") == "bar")

    wait_for(page, six_bars, "six candidates per direction after top-k 5 -> 6")
    assert "top_k=6" in page.url


def check_elmo(page) -> None:
    assert h1(page) == zh("elmo.title")
    text = body_text(page)
    assert "[0.4, 0.6, 1.0]" not in text and zh("elmo.exercise.reveal") in text, "exercise 2: answer hidden"
    assert "[1.0, 0.8, 0.2]" in text and "[0.2, 0.6, 1.2]" in text, "the syntax / semantics presets"
    assert page.locator('[data-testid="stMain"] table').count() >= 1, "the preset table"
    at_least(page, PLOTS, 2, "the diagram and the weight bars")

    def s_now() -> str | None:
        match = re.search(re.escape(prefix(zh("elmo.s_now"), 20).strip()) + r"\s*(\[[^\]]*\])", body_text(page))
        return match.group(1) if match else None

    before = s_now()
    assert before == "[0.33, 0.33, 0.33]", before
    box = page.locator('[data-testid="stMain"] [data-testid="stSlider"]').filter(has_text="w0").first
    press_slider(page, box, "ArrowRight", times=10)  # w0: 0.00 -> 0.10
    after = wait_for(page, lambda: (s := s_now()) != before and s, "s to change after moving w0")
    weights = [float(x) for x in after.strip("[]").split(",")]
    assert weights[0] > weights[1] == pytest.approx(weights[2]) and sum(weights) == pytest.approx(1.0, abs=0.02)


def check_fill_mask(page) -> None:
    assert h1(page) == zh("nav.fill_mask")
    text = body_text(page)
    assert prefix(zh("fill.total_prob"), 8) in text and text.count("1.0000") >= 2, "probabilities sum to 1"
    data = wait_for(page, lambda: plotly_data(page, "fill_topk_chart"), "the top-k chart")
    assert '"bar"' in data
    bars = [t for t in json.loads(data) if t.get("type") == "bar"]
    assert len(bars) == 2, "one bar chart per [MASK] of 我吃了一个[MASK][MASK]。"
    for trace in bars:
        probs = [float(v) for v in trace["x"]]
        assert len(probs) == 5 and all(0 < p <= 1 for p in probs) and probs == sorted(probs, reverse=True)
    wait_for(page, lambda: any(m.strip().endswith("%") for m in
                               page.locator('[data-testid="stMetricValue"]').all_inner_texts()), "the NSP probability")
    box = widget(page, "stSlider", zh("fill.top_k"))
    press_slider(page, box, "ArrowRight")

    def six_bars() -> bool:
        new = plotly_data(page, "fill_topk_chart")
        return bool(new) and all(len(t["x"]) == 6 for t in json.loads(new) if t.get("type") == "bar")

    wait_for(page, six_bars, "six candidates per [MASK] after top-k 5 -> 6")
    assert "top_k=6" in page.url


def check_attention(page) -> None:
    assert h1(page) == zh("nav.attention")
    at_least(page, PLOTS, 1, "the attention heatmap")
    before = wait_for(page, lambda: plotly_data(page, "att_heatmap"), "the heatmap's data")
    assert '"heatmap"' in before
    assert zh("att.heatmap_title", l=1, h=1) in plotly_layout_titles(page, "att_heatmap")[0]
    box = widget(page, "stSlider", zh("att.layer"))
    press_slider(page, box, "ArrowRight")
    wait_for(page, lambda: zh("att.heatmap_title", l=2, h=1) in (plotly_layout_titles(page, "att_heatmap") or [""])[0],
             "the heatmap of layer 2")
    assert plotly_data(page, "att_heatmap") != before


def test_attention_keeps_its_tab_and_token_by_name(page, warm_server):
    """The open tab is kept by its id across a language switch (its label changes), the chosen token by its text
    across a sentence edit that moves it (ui.state.KeptChoice); both stay in the URL."""
    def open_tab() -> str:
        return page.locator('[data-testid="stMain"] [role="tab"][aria-selected="true"]').first.inner_text().strip()

    open_page(page, warm_server.url("attention-heatmap", tab="avg", token="手"))
    try:
        check_healthy(page)
        assert wait_for(page, lambda: open_tab() == zh("att.tab.avg") and open_tab(), "the head-average tab")
        box = page.get_by_role("combobox", name=zh("att.token"))
        assert wait_for(page, lambda: box.input_value() == "9: 手", "手 chosen, on row 9 ([CLS] is 0)")
        page.locator('[data-testid="stSidebar"] [data-testid="stRadio"] label').filter(has_text="English").click()
        assert wait_for(page, lambda: open_tab() == en("att.tab.avg"), "the same tab, now in English")
        assert "tab=avg" in page.url and "lang=en" in page.url
        sentence = page.get_by_label(en("att.sentence"), exact=True)
        sentence.fill("我的新手机很好。")
        sentence.press("Enter")
        box = page.get_by_role("combobox", name=en("att.token"))
        assert wait_for(page, lambda: box.input_value() == "4: 手", "手 followed to row 4 of the new sentence")
        assert open_tab() == en("att.tab.avg") and "token=手" in urllib.parse.unquote(page.url)
        check_healthy(page)
    finally:
        screenshot(page, "attention-kept-tab-and-token")


def check_transfer(page) -> None:
    assert h1(page) == zh("transfer.title")
    if TRANSFER_RESULTS.exists():
        at_least(page, PLOTS, 2, "accuracy charts")
        at_least(page, '[data-testid="stMain"] [data-testid="stMetric"]', 3, "three accuracies")
        before = wait_for(page, lambda: plotly_data(page, "transfer_acc"), "the accuracy chart's data")
        box = widget(page, "stSlider", zh("transfer.layer"))
        press_slider(page, box, "ArrowLeft")
        wait_for(page, lambda: plotly_data(page, "transfer_acc") != before, "the accuracy bars of another layer")
    else:
        assert any(prefix(zh("transfer.results.none"), 10) in a for a in alerts(page, "Info"))
        box = widget(page, "stSlider", zh("transfer.recompute.steps"))  # never press the recompute button
        before = slider_value(box)
        press_slider(page, box, "ArrowRight")
        wait_for(page, lambda: slider_value(box) != before, "the steps selector to move")


def check_exercises(page) -> None:
    assert h1(page) == zh("ex.title")
    box = widget(page, "stTextInput", zh("ex.formula.answer"))
    field = box.locator("input")
    field.fill("[0.4, 0.6, 1.0]")
    field.press("Enter")
    right = prefix(zh("ex.formula.right"), 3)
    wait_for(page, lambda: any(right in a for a in alerts(page, "Success")), "the answer to be marked right")
    assert field.input_value() == "[0.4, 0.6, 1.0]"
    field.fill("1, 1, 1")
    field.press("Enter")
    wait_for(page, lambda: alerts(page, "Warning") and not alerts(page, "Success"), "a wrong answer to be marked")


def check_evidence(page) -> None:
    assert h1(page) == zh("evidence.title")
    radio = page.locator('[data-testid="stMain"] [data-testid="stRadio"]').first
    if EXPERIMENT_RESULTS.exists():
        at_least(page, PLOTS, 1, "a layer-wise chart")
        before = plotly_layout_titles(page)
        radio.locator("label").filter(has_text=zh("evidence.section.senses")).click()
        wait_for(page, lambda: plotly_layout_titles(page) and plotly_layout_titles(page) != before,
                 "the word-sense chart")
    else:
        assert any(prefix(zh("evidence.no_results"), 8) in a for a in alerts(page, "Info"))
        radio.locator("label").filter(has_text=zh("evidence.section.recompute")).click()
        wait_for(page, lambda: zh("evidence.recompute.button") in body_text(page), "the recompute section")
    assert "section=" in page.url


def refuses_a_wrong_secret(page) -> None:
    """A wrong lecturer secret typed into the sign-in (``ui.lecturer``, one for the board and the presenter view) is
    refused where it was typed."""
    field = page.locator(".st-key-board_secret_box input")
    field.fill("not-the-secret")
    field.press("Enter")
    wait_for(page, lambda: alerts(page, "Error"), "a wrong secret to be refused")


def check_board(page) -> None:
    """Without a board the page says what the board is and asks for nothing: no secret box in front of the class
    (tests/e2e/test_class_board_browser.py runs a board). The secret is typed on the lecturer's own device
    (``?view=lecturer``): a wrong one is refused where it was typed, and no moderation control appears."""
    assert h1(page) == zh("board.title")
    assert not page.locator(".st-key-board_secret_box").count()
    assert page.locator('.st-key-board_result a[href*="static-vs-contextual"]').count()
    open_page(page, page.url.split("?")[0] + "?view=lecturer")
    refuses_a_wrong_secret(page)
    assert not page.locator(".st-key-board_close, .st-key-board_hide").count()
    open_page(page, page.url.split("?")[0])  # back to the page's healthy start


def check_presenter(page) -> None:
    """Without the lecturer secret: the sign-in only, nothing of the lecture's notes or controls; a wrong secret is
    refused where it was typed (tests/e2e/test_presenter_view_browser.py drives a projector from a signed-in one)."""
    assert h1(page) == zh("presenter.title")
    assert not page.locator(".st-key-presenter_note, .st-key-presenter_next").count()
    refuses_a_wrong_secret(page)
    assert not page.locator(".st-key-presenter_note, .st-key-presenter_next").count()
    open_page(page, page.url.split("?")[0])  # back to the page's healthy start


def check_generic(page) -> None:
    assert h1(page)


CHECKERS = {
    "overview": check_overview,
    "static-vs-contextual": check_static,
    "pretraining-objectives": check_objectives,
    "elmo-weights": check_elmo,
    "fill-mask": check_fill_mask,
    "attention-heatmap": check_attention,
    "feature-vs-finetune": check_transfer,
    "exercises": check_exercises,
    "layer-evidence": check_evidence,
    "class-board": check_board,
    "presenter": check_presenter,
}


# ---- the tests -------------------------------------------------------------------------------------
@pytest.mark.parametrize("url_path", URL_PATHS)
def test_page_in_browser(page, warm_server, url_path):
    """The page's own checks, and no request of the page (nor its screenshot's relayout) leaves localhost (what
    tests/e2e/test_offline.py checks with Markdown payloads)."""
    requests = watch_requests(page.context)
    open_page(page, page_url(warm_server, url_path))
    try:
        check_healthy(page)
        CHECKERS.get(url_path, check_generic)(page)
        check_healthy(page)
    finally:
        screenshot(page, url_path)
    assert_local_only(page, requests, warm_server.port, url_path)


def test_home_at_root_and_by_its_url_path(page, warm_server):
    for url in (warm_server.url(""), warm_server.url(DEFAULT_PAGE)):
        open_page(page, url)
        check_healthy(page)
        assert h1(page) == zh("home.title"), url


def test_english_ui(page, warm_server):
    open_page(page, warm_server.url("elmo-weights", lang="en"))
    try:
        check_healthy(page)
        assert h1(page) == en("elmo.title")
        text = body_text(page)
        assert en("elmo.example.title") in text and en("nav.fill_mask") in text  # page and navigation
        assert en("elmo.exercise.reveal") in text and "[0.4, 0.6, 1.0]" not in text  # exercise 2: predict, then reveal
        assert zh("elmo.example.title") not in text and zh("nav.fill_mask") not in text
        assert not re.search(r"[\u4e00-\u9fff]", h1(page))
    finally:
        screenshot(page, "elmo-weights-en")


def test_presentation_mode(page, warm_server):
    open_page(page, page_url(warm_server, DEFAULT_PAGE, present="1"))
    try:
        check_healthy(page)
        assert page.locator(".st-key-present_bar").is_visible(), "the scene stepper"
        assert not page.locator('[data-testid="stSidebar"]').is_visible(), "no sidebar on the projector"
        assert page.evaluate("() => getComputedStyle(document.documentElement).fontSize") == "24px"
        title = h1(page)
        screenshot(page, "overview-present")
        page.locator(".st-key-present_bar button").filter(has_text=zh("present.next")).first.click()
        page.wait_for_url(re.compile(r"[?&]slide="), wait_until="commit", timeout=TIMEOUT_S * 1000)
        assert "present=1" in page.url, "the switch itself keeps presentation mode in the address"
        wait_for(page, lambda: h1(page) != title, "the next scene")
        check_healthy(page)
        assert page.locator(".st-key-present_bar").is_visible() and "present=1" in page.url
    finally:
        page.mouse.move(0, 0)  # no tooltip in the picture
        screenshot(page, "present-next-scene")


def test_clicker_keys_and_escape_in_a_text_box(page, warm_server):
    """→ / ← change the scene like PageDown / PageUp; in a text box the arrows move the caret, PageDown
    still changes the scene, and Escape leaves the box so that the arrows change scenes again."""
    fill, iterative = (next(s for s in SCENES if s.id == i) for i in ("fill", "iterative"))
    open_page(page, page_url(warm_server, "fill-mask", present="1", slide="fill"))
    bar = page.locator(".st-key-present_bar")
    box = page.locator(".st-key-fill_sentence input")
    box.click()
    page.keyboard.press("ArrowLeft")  # caret, not a scene change
    page.wait_for_timeout(1500)
    assert "slide=fill" in page.url and box.input_value() == "我吃了一个[MASK][MASK]。"
    page.keyboard.press("Escape")
    assert page.evaluate("() => document.activeElement.tagName") != "INPUT"
    page.keyboard.press("ArrowRight")
    wait_for(page, lambda: zh(iterative.title_key) in bar.inner_text(), "→ goes to the next scene")
    wait_idle(page)
    page.locator(".st-key-fill_sentence input").click()
    page.keyboard.press("PageUp")  # from inside the text box
    wait_for(page, lambda: zh(fill.title_key) in bar.inner_text() and "slide=fill" in page.url,
             "PageUp in a text box goes back")
    check_healthy(page)


def test_user_text_is_not_html(page, warm_server):
    """Security (a): HTML typed into the text boxes is shown as text, never executed or rendered."""
    payload = '<img src=x onerror="window.__xss=1">'
    open_page(page, warm_server.url("static-vs-contextual"))
    try:
        before = wait_for(page, lambda: plotly_data(page, "static_scatter"), "the scatter's data")
        area = widget(page, "stTextArea", zh("static.sentences")).locator("textarea")
        area.fill("我吃了一个苹果" + payload + "\n苹果昨天发布了新手机\n" + payload)
        area.press("Control+Enter")
        wait_for(page, lambda: plotly_data(page, "static_scatter") != before, "the chart of the new sentences")
        check_healthy(page)
        # the target word (at most 20 characters) is echoed in a Markdown message: literally, not as HTML
        tag = "<b>香蕉</b>"
        word = widget(page, "stTextInput", zh("static.word")).locator("input")
        word.fill(tag)
        word.press("Enter")
        wait_for(page, lambda: any(tag in a for a in alerts(page, "Info")), "the word shown back as text")
        check_healthy(page)
        assert page.locator('[data-testid="stMain"] [data-testid="stAlertContentInfo"] b').count() == 0
        assert page.evaluate("() => typeof window.__xss") == "undefined"
        assert page.locator('img[src="x"]').count() == 0
        assert area.input_value().endswith(payload) and word.input_value() == tag
    finally:
        screenshot(page, "static-xss")



def go_by_sidebar(page, url_path: str) -> None:
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]').click()
    wait_for(page, lambda: page.url.split("?")[0].endswith("/" + url_path), f"the page {url_path}")
    wait_idle(page)
    check_healthy(page)


def test_sentences_follow_the_student_through_the_sidebar(page, warm_server):
    """The two vector pages share their sentences and word: what one shows, the other shows after a click
    in the sidebar, whether it came from the scene or was typed (their boxes differ in height, so Streamlit
    gives them other ids)."""
    area, box = page.locator(".st-key-vec_text textarea"), page.locator(".st-key-vec_word input")
    open_page(page, warm_server.url("static-vs-contextual"))
    # right after the first run settles the boxes were once read empty (a moment later they were filled)
    scene_text, scene_word = wait_for(page, lambda: area.input_value() and box.input_value() and
                                      (area.input_value(), box.input_value()), "the scene's sentences and word")
    go_by_sidebar(page, "elmo-weights")
    assert (area.input_value(), box.input_value()) == (scene_text, scene_word)

    text, word = "我今天买了三斤苹果\n他的苹果手机没电了", "手机"
    area.fill(text)
    area.press("Control+Enter")
    wait_idle(page)
    box.fill(word)
    box.press("Enter")
    wait_idle(page)
    go_by_sidebar(page, "static-vs-contextual")
    assert (area.input_value(), box.input_value()) == (text, word)
