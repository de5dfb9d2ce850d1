"""The class board in real browsers: the lecturer's own device, the projector at 1280×720 and a student's phone at
390×844.

The lecturer opens a board on their device and the projector shows it by itself; a sentence sent from the phone
appears on the projector without anyone touching it; the lecturer hides it from their device; neither the
projector nor the student ever shows a moderation control; after kill -9 of the server and a restart the board
is as it was. At 1280×720 the projector shows QR code, count, layer switch, picture with axes and legend, and
the accuracy per layer, all inside the screen (#49).
"""
from __future__ import annotations

import json
import signal
import time

import pytest

from core.board import rules as board
from core.board.store import store
from e2e.conftest import (
    CHROMIUM,
    alerts,
    body_text,
    check_healthy,
    open_page,
    plotly_data,
    screenshot,
    start_server,
    wait_for,
)

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

SECRET = "e2e-lecturer-secret"
PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}


@pytest.fixture
def board_env(tmp_path, monkeypatch):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing")
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LAB_BOARD_SECRET", SECRET)
    return tmp_path


def scatter_sentences(page) -> list[str]:
    """The hover texts (the sentences, the word marked) of the projector's class picture."""
    data = plotly_data(page, "board_scatter")
    return [text for trace in json.loads(data) if data for text in trace.get("customdata") or []] if data else []


def test_a_phones_sentence_reaches_the_projector_and_survives_kill_9(browser, board_env):
    server = start_server(board_env)
    try:
        device = browser.new_context(viewport=PROJECTOR, locale="zh-CN").new_page()  # the lecturer's laptop
        open_page(device, server.url("class-board", view="lecturer"))
        device.get_by_label("老师密钥", exact=True).fill(SECRET)
        device.keyboard.press("Enter")
        wait_for(device, lambda: "key=" in device.url, "the lecturer link's token in the URL")
        device.get_by_role("button", name="开看板").click()
        wait_for(device, lambda: store().newest_board() is not None, "a board opened")
        board_id = store().newest_board().id
        lecturer = browser.new_context(viewport=PROJECTOR, locale="zh-CN").new_page()  # the projector
        open_page(lecturer, server.url("class-board", present="1", slide="board"))
        wait_for(lecturer, lambda: board_id in body_text(lecturer), "the projector follows the new board")

        phone_context = browser.new_context(locale="zh-CN", **PHONE)
        phone = phone_context.new_page()
        open_page(phone, server.url("class-board", board=board_id))
        assert "老师控制" not in body_text(phone) and phone.get_by_role("button", name="隐藏").count() == 0
        def send(sentence: str, sense: str, shown: int) -> float:
            """Send from the phone; seconds from the acknowledgement until the projector shows ``shown`` points."""
            phone.get_by_label("你的句子").fill(sentence)
            phone.get_by_text(sense, exact=True).click()
            phone.get_by_role("button", name="发送").click()
            wait_for(phone, lambda: any(f"第 {shown} 号" in a for a in alerts(phone, "Success")), "acknowledged",
                     interval_s=0.25)
            acknowledged = time.monotonic()
            # the projector picks it up by itself: its fragment reruns every second
            wait_for(lecturer, lambda: len(scatter_sentences(lecturer)) == shown, f"{shown} points", interval_s=0.25)
            return time.monotonic() - acknowledged

        send("我吃了一个<b>苹果</b>。", "水果", 1)  # the first one also loads the models
        assert send("苹果发布了新手机。", "公司", 2) < 5  # ~2 s when the machine is not shared
        assert any("&lt;b&gt;" in s for s in scatter_sentences(lecturer))  # escaped in the hover, never markup
        check_healthy(lecturer)
        phone.get_by_text("看全班的图").click()
        wait_for(phone, lambda: plotly_data(phone, "board_scatter"), "the phone's picture")
        assert any(t.get("name") == "我的句子" for t in json.loads(plotly_data(phone, "board_scatter")))
        screenshot(phone, "class-board-student-390")
        screenshot(lecturer, "class-board-projector")

        # the lecturer hides it from their own device: gone from the projector, which never shows the controls
        assert lecturer.get_by_role("button", name="隐藏").count() == 0 and "待通过" not in body_text(lecturer)
        device.reload()
        hide = device.locator(".st-key-board_hide button")  # by key: the CSV button's label says 含隐藏 too
        wait_for(device, lambda: hide.count() == 1, "the controls after a reload")
        hide.click()  # the first sentence is the one picked
        wait_for(lecturer, lambda: len(scatter_sentences(lecturer)) == 1, "the hidden sentence gone")
        assert "【苹果】发布了新手机" in scatter_sentences(lecturer)[0]

        # kill -9 and a restart on the same data folder: the board is as it was
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=30)
        server = start_server(board_env)
        projector = browser.new_context(viewport=PROJECTOR, locale="zh-CN").new_page()
        open_page(projector, server.url("class-board", board=board_id, view="projector"))
        wait_for(projector, lambda: len(scatter_sentences(projector)) == 1, "the board restored, the hidden one hidden")
        assert projector.get_by_role("button", name="隐藏").count() == 0  # no moderation on a projector
        phone_context.close()
    finally:
        server.stop()


# The part of the projector a box must lie in: below the scene bar, inside the window. Every plotly SVG and its
# texts (ticks, axis titles, legend, the labels over the points) count, as in test_presenter_bar_browser.
BOXES_JS = """(keys) => {
  const bar = document.querySelector('.st-key-present_bar');
  const top = bar ? bar.getBoundingClientRect().bottom : 0;
  const out = {top, height: window.innerHeight, width: window.innerWidth};
  for (const key of keys) {
    const el = document.querySelector('.st-key-' + key);
    if (!el) { out[key] = null; continue; }
    const rects = [el, ...el.querySelectorAll('.js-plotly-plot .main-svg, .js-plotly-plot svg text, img')]
      .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
    out[key] = [Math.min(...rects.map((r) => r.top)), Math.max(...rects.map((r) => r.bottom)),
                Math.min(...rects.map((r) => r.left)), Math.max(...rects.map((r) => r.right))];
  }
  out.legend = [...document.querySelectorAll('.st-key-board_scatter .legend')].length;
  out.qr = [...document.querySelectorAll('.st-key-board_result img')].map((i) => {
    const r = i.getBoundingClientRect(); return [r.top, r.bottom]; });
  return out;
}"""


def test_the_projector_at_1280x720_shows_the_board_whole(browser, board_env):
    """#49: at 1280×720 the picture spanned y 479–929 and the accuracy 906–1206, the page scrolled down to the
    moderation: now QR code, count, layer switch, picture with axes and legend, and accuracy per layer with its
    n lie inside the screen together, with no moderation anywhere on it."""
    b = board.open_board(store(), SECRET, "苹果", "水果，公司", "elmo")
    for i, (sense, sentence) in enumerate([("水果", "我吃了一个苹果。"), ("公司", "苹果发布了新手机。"),
                                           ("水果", "这个苹果很甜。"), ("公司", "苹果公司的股价上涨了。"),
                                           ("水果", "妈妈买了一斤苹果。"), ("公司", "他在苹果上班。")]):
        me = board.issue_identity(store(), b.id, None, f"10.0.0.{i}")  # as the join link issues it
        board.send(store(), b.id, me, f"10.0.0.{i}", sentence, sense)
    server = start_server(board_env)
    try:
        page = browser.new_context(viewport=PROJECTOR, locale="zh-CN").new_page()
        open_page(page, server.url("class-board", present="1", slide="board"))
        wait_for(page, lambda: plotly_data(page, "board_acc") and len(scatter_sentences(page)) == 6,
                 "the picture and the accuracy chart")
        time.sleep(2)  # the presenter's script places the result below the bar
        keys = ["board_result", "board_layer", "board_scatter", "board_acc"]
        boxes = page.evaluate(BOXES_JS, keys)
        screenshot(page, "class-board-projector-1280x720")
        for key in keys:
            top, bottom, left, right = boxes[key]
            assert top >= boxes["top"] - 1 and bottom <= boxes["height"] + 1, (key, boxes)
            assert left >= -1 and right <= boxes["width"] + 1, (key, boxes)
        assert boxes["legend"] and boxes["qr"] and all(bottom <= boxes["height"] for _, bottom in boxes["qr"])
        assert "已收到的句子" in body_text(page)  # the count
        title = page.evaluate("() => document.querySelector('.st-key-board_acc .gtitle')?.textContent")
        assert title and "n = 6" in title, title  # the accuracy's n
        assert page.get_by_role("button", name="隐藏").count() == 0 and page.get_by_label("老师密钥").count() == 0
        check_healthy(page)
    finally:
        server.stop()
