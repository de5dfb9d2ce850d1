"""The class board in two real browsers: the lecturer's projector at 1280×720 and a student's phone at 390×844.

A sentence sent from the phone appears on the projector without anyone touching it; the lecturer hides it; the
student never sees a moderation control; and after kill -9 of the server and a restart the board is as it was.
"""
from __future__ import annotations

import json
import signal
import time

import pytest

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
        lecturer = browser.new_context(viewport=PROJECTOR, locale="zh-CN").new_page()
        open_page(lecturer, server.url("class-board", present="1"))
        lecturer.get_by_label("老师密钥", exact=True).fill(SECRET)
        lecturer.keyboard.press("Enter")
        lecturer.get_by_role("button", name="开看板").click()
        wait_for(lecturer, lambda: "view=projector" in lecturer.url, "the projector view")
        board_id = dict(p.split("=") for p in lecturer.url.split("?")[1].split("&"))["board"]

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

        # the lecturer hides it: gone from the projector
        lecturer.get_by_text("老师控制").click()
        lecturer.get_by_role("button", name="隐藏").click()  # the first sentence is the one picked
        wait_for(lecturer, lambda: len(scatter_sentences(lecturer)) == 1, "the hidden sentence gone")
        assert "【苹果】发布了新手机" in scatter_sentences(lecturer)[0]

        # kill -9 and a restart on the same data folder: the board is as it was
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=30)
        server = start_server(board_env)
        projector = browser.new_context(viewport=PROJECTOR, locale="zh-CN").new_page()
        open_page(projector, server.url("class-board", board=board_id, view="projector"))
        wait_for(projector, lambda: len(scatter_sentences(projector)) == 1, "the board restored, the hidden one hidden")
        assert "老师控制" not in body_text(projector)  # a new session without the secret: no moderation
        phone_context.close()
    finally:
        server.stop()
