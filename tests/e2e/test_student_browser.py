"""A student alone at home (issue #44): five everyday sentences of their own, typed into the pages, each get a
result with its plain reading, and a first answer the model is not sure of carries the warning; on a narrow
screen, choosing a page in the sidebar closes it."""
from __future__ import annotations

import pytest

from core import fill_confidence as fc
from core import fill_examples as fx
from core.fill_view import fill_view
from core.models.cache import load_encoder
from tests.e2e.conftest import alerts, body_text, check_healthy, open_page, page_url, wait_for, wait_idle

pytestmark = pytest.mark.browser

# (the sentence with its gap, the sentence as written): none of them is in the project's check sets
SENTENCES = (("今天三十八度，太[MASK]了。", "今天三十八度，太热了。"),
             ("妈妈做了一盘红烧[MASK]。", "妈妈做了一盘红烧肉。"),
             ("周末我想去图书馆看[MASK]。", "周末我想去图书馆看书。"),
             ("我每天骑自行车去[MASK][MASK]。", "我每天骑自行车去学校。"),
             ("他在网上发了一条[MASK][MASK]。", "他在网上发了一条消息。"))


def _type(page, key: str, text: str, enter: str = "Enter") -> None:
    box = page.locator(f".st-key-{key} input, .st-key-{key} textarea").first
    box.fill(text)
    box.press(enter)
    page.wait_for_timeout(500)
    wait_idle(page)


def test_five_sentences_of_a_student(page, warm_server):
    assert not any(fx.lookup(masked) for masked, _ in SENTENCES)  # not the project's own sentences
    calibration = fc.load()
    encoder = load_encoder("mini-bert-zh")
    open_page(page, page_url(warm_server, "fill-mask"))
    assert "个日常句子上，它的第一个答案只有" in body_text(page)  # the model's record, in one visible line
    for masked, _ in SENTENCES:
        _type(page, "fill_sentence", masked)
        check_healthy(page)
        signal = fill_view(encoder, "masked", sentence=masked, top_k=20).signals[0]
        level = calibration.level(signal)
        shown = alerts(page, "Info" if level == "sure" else "Warning")
        assert any(f"「{signal.answer}」" in text and "检查句" in text for text in shown), (masked, level, shown)
        if level != "sure":  # the plain warning, on the page
            assert any("不太确定" in text or "这个小模型在这里没有把握" in text for text in shown)

    open_page(page, page_url(warm_server, "attention-heatmap"))
    for _, plain in SENTENCES:
        _type(page, "att_sentence", plain)
        check_healthy(page)
        text = wait_for(page, lambda: body_text(page), "the attention page")
        assert "本句的读数" in text and "看得最多的是" in text and "别期待太多" in text

    open_page(page, page_url(warm_server, "static-vs-contextual"))
    _type(page, "vec_text", "\n".join(plain for _, plain in SENTENCES), enter="Control+Enter")
    _type(page, "vec_word", "天")  # 今天, 每天: two occurrences
    check_healthy(page)
    text = body_text(page)
    assert "问题" in text and "怎么读余弦" in text and "基线" in text


def test_choosing_a_page_closes_the_sidebar_on_a_narrow_screen(browser, warm_server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    try:
        page = context.new_page()
        open_page(page, page_url(warm_server, "overview"))
        page.locator('[data-testid="stExpandSidebarButton"]').click()
        sidebar = page.locator('[data-testid="stSidebar"]')
        wait_for(page, lambda: sidebar.bounding_box()["x"] >= 0, "the sidebar opened")
        page.locator('[data-testid="stSidebarNav"] a[href$="/fill-mask"]').click()
        wait_idle(page)
        wait_for(page, lambda: "fill-mask" in page.url and sidebar.bounding_box()["x"] < 0, "the sidebar closed")
    finally:
        context.close()
