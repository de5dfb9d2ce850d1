"""A student alone at home (issue #44): five everyday sentences of their own, typed into the pages, each get a
result with its plain reading, and a first answer the model is not sure of carries the warning; on a narrow
screen, choosing a page in the sidebar closes it."""
from __future__ import annotations

import pytest

from core.fillmask import confidence as fc
from core.fillmask import examples as fx
from core.fillmask.view import fill_view
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
        assert any(f"「{signal.answer}」" in text and "定门槛时没见过的日常句子" in text for text in shown), \
            (masked, level, shown)
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


# every text of the chart ``ui.page.chart`` showed under a key: cells, row names, legend, as boxes on the screen
CHART_TEXTS = """(key) => [...document.querySelectorAll(`.st-key-${key} .js-plotly-plot text`)]
  .filter((t) => t.textContent.trim()).map((t) => { const r = t.getBoundingClientRect();
    return [t.textContent, r.left, r.top, r.right, r.bottom]; })"""


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_objective_strip_is_legible_on_a_phone(browser, warm_server, lang):
    """③'s strip on a 390×844 phone: the row names beside the cells left them a sliver (seven characters in 34 px,
    drawn over each other) and, in English, overlapped each other; no two of the strip's texts may overlap, and
    each stays on the screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN", is_mobile=True,
                                  has_touch=True)
    try:
        page = context.new_page()
        open_page(page, page_url(warm_server, "pretraining-objectives", lang=lang))
        # the layout a reader sees: the same boxes in two reads a second apart (plotly redraws after a resize)
        seen: list = []

        def settled():
            seen.append(page.evaluate(CHART_TEXTS, "obj_gpt_strip"))
            return seen[-1] if len(seen) > 1 and seen[-1] and seen[-1] == seen[-2] else None

        texts = wait_for(page, settled, "the strip's texts, settled")
        assert {"[MASK]", "？"} <= {text for text, *_ in texts} and len(texts) > 14
        for i, (a, *box_a) in enumerate(texts):
            assert 0 <= box_a[0] and box_a[2] <= 390, (a, box_a)
            for b, *box_b in texts[i + 1:]:
                apart = (box_a[2] <= box_b[0] + 1 or box_b[2] <= box_a[0] + 1 or box_a[3] <= box_b[1] + 1
                         or box_b[3] <= box_a[1] + 1)
                assert apart, (a, box_a, b, box_b)
    finally:
        context.close()


# the x domains of the first chart's subplots: side by side, the second starts right of the middle
DOMAINS = """() => { const plot = document.querySelector('.js-plotly-plot');
  if (!plot || !plot.layout) return null;
  return Object.keys(plot.layout).filter(k => /^xaxis\\d*$/.test(k)).sort().map(k => plot.layout[k].domain); }"""


def test_a_narrow_window_stacks_side_by_side_charts_by_its_width(browser, warm_server):
    """Stacking goes by the window's width, not only a phone's User-Agent (issue #44): a desktop browser's window
    600 px wide stacks the static page's two spaces and folds the ELMo page's secondary sections, and widened to
    1280 px puts the spaces side by side again."""
    context = browser.new_context(viewport={"width": 600, "height": 900}, locale="zh-CN")
    try:
        page = context.new_page()
        assert "Mobi" not in page.evaluate("() => navigator.userAgent")
        open_page(page, page_url(warm_server, "static-vs-contextual"))
        stacked = wait_for(page, lambda: (d := page.evaluate(DOMAINS)) and all(x[0] == 0 for x in d) and d,
                           "the two spaces stacked")
        assert len(stacked) == 2
        open_page(page, page_url(warm_server, "elmo-weights"))  # its diagram and results sections fold too
        switches = '[class*="st-key-elmo_show_"] input'
        wait_for(page, lambda: page.locator(switches).count() == 3, "the ELMo page's three switches")
        assert page.evaluate(f"() => [...document.querySelectorAll('{switches}')].map(i => i.checked)") == [False] * 3
        open_page(page, page_url(warm_server, "static-vs-contextual"))
        page.set_viewport_size({"width": 1280, "height": 900})
        wait_for(page, lambda: (d := page.evaluate(DOMAINS)) and d[1][0] > 0.4, "the two spaces side by side")
        check_healthy(page)
    finally:
        context.close()


# every page a student opens: its answer box's key and what its question says (zh, en); the class board is the
# lecturer's and has none
QUESTIONS = {
    "overview": ("home_qa", "从 word2vec 到 ELMo 再到 BERT，变的是什么？", "what changed from word2vec to ELMo"),
    "static-vs-contextual": ("static_qa", "同一个词出现在不同句子里", "when one word appears in different sentences"),
    "pretraining-objectives": ("obj_qa", "ELMo 和 BERT 的预训练目标有什么不同？", "how do ELMo's and BERT's"),
    "elmo-weights": ("elmo_qa", "ELMo 怎样把各层的表示变成一个词向量？", "how does ELMo turn its layers into one word"),
    "fill-mask": ("fill_qa", "BERT 预训练时做的「完形填空」是什么？", "what is the “fill in the blank” BERT"),
    "attention-heatmap": ("att_qa", "一个字在计算自己的新表示时", "when a character computes its new representation"),
    "feature-vs-finetune": ("transfer_qa", "把预训练好的模型用到新任务上", "to use a pretrained model on a new task"),
    "exercises": ("ex_qa", "学完这一节，我能自己做什么？", "what should I be able to do myself"),
    "layer-evidence": ("evidence_qa", "在我们自己的小模型上也是这样吗？", "Is that so on our own small models?")}
ANSWERS = {"pretraining-objectives": ("在下面 ② 的两句上量一量", "Measured on the pair of ② below"),
           "elmo-weights": ("本实验室的两个任务各自学到的 s", "The s each of this lab's two tasks learned"),
           "layer-evidence": ("答案（在我们的 mini-elmo-zh 上）", "Answer (on our mini-elmo-zh)")}


def test_every_page_opens_with_its_question_and_answer_in_both_languages(page, warm_server):
    """Each of the nine pages a student opens starts with its question and plain answer, in Chinese and in English,
    the computed ones with their computed line (issue #44)."""
    for lang, index in (("zh", 0), ("en", 1)):
        for path, (key, *question) in QUESTIONS.items():
            open_page(page, page_url(warm_server, path, lang=lang))
            check_healthy(page)
            box = page.locator(f".st-key-{key}")
            text = wait_for(page, lambda b=box: b.inner_text() if b.count() else "", f"the plain answer of {path}")
            assert question[index] in text, (lang, path, text[:200])
            if path in ANSWERS:
                assert ANSWERS[path][index] in text, (lang, path, text)


def test_the_objectives_answer_follows_the_pair_below(page, warm_server):
    """② is a fragment: a sentence typed there reruns it alone, and it writes its reading into the answer box at the
    page's top, which must then state ②'s new figures (the answer gave other numbers than the metrics)."""
    open_page(page, page_url(warm_server, "pretraining-objectives"))
    answer = page.locator(".st-key-obj_qa")
    figures = '.st-key-obj_deep_result [data-testid="stMetricValue"]'
    seen = []
    for typed in (None, "苹果昨天被我吃掉了"):
        if typed:
            _type(page, "obj_text_b", typed)
        check_healthy(page)
        shown = wait_for(page, lambda: page.locator(figures).all_inner_texts(), "②'s figures")
        text = answer.inner_text()
        assert all(f" {figure}" in text for figure in shown) and (typed or "苹果昨天掉在了地上") in text, (shown, text)
        seen.append(shown)
    assert seen[0] != seen[1]


def test_five_sentences_on_the_pages_that_take_sentences(page, warm_server):
    """The objectives and ELMo pages take the student's five sentences and show a result (issue #44)."""
    open_page(page, page_url(warm_server, "pretraining-objectives"))
    for _, plain in SENTENCES:
        _type(page, "obj_sentence", plain)
        check_healthy(page)
        assert "前向对数似然" in body_text(page) and "在下面 ② 的两句上量一量" in body_text(page)
    open_page(page, page_url(warm_server, "elmo-weights"))
    _type(page, "vec_text", "\n".join(plain for _, plain in SENTENCES), enter="Control+Enter")
    _type(page, "vec_word", "天")  # 今天, 每天: two occurrences
    check_healthy(page)
    text = body_text(page)
    assert "本实验室的两个任务各自学到的 s" in text and "当前 s = " in text


RESULT_TOP_JS = """(key) => {
  const el = document.querySelector('.st-key-' + key);
  if (!el) return null;
  const box = el.getBoundingClientRect();
  const header = document.querySelector('header');
  return {top: box.top, bottom: box.bottom, below: header ? header.getBoundingClientRect().bottom : 0,
          height: window.innerHeight};
}"""


@pytest.mark.parametrize("screen", ["laptop", "phone"])
def test_a_students_result_comes_into_view_after_enter(browser, warm_server, screen):
    """Outside presentation mode too (issue #54): after Enter in the fill-mask sentence box the predictions the box
    drives stand in the window, starting below the header, on a 768 px laptop and an 844 px phone."""
    size = {"laptop": {"viewport": {"width": 1366, "height": 768}},
            "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}}[screen]
    page = browser.new_context(**size).new_page()
    open_page(page, page_url(warm_server, "fill-mask"))
    _type(page, "fill_sentence", SENTENCES[1][0])
    def in_view():  # wholly in the window, or (taller than it) starting just below the header
        b = page.evaluate(RESULT_TOP_JS, "fill_topk")
        return b if b and b["top"] >= b["below"] and (b["bottom"] <= b["height"] or b["top"] <= b["below"] + 20) \
            else None
    wait_for(page, in_view, "the predictions in view after Enter", timeout_s=60)
    check_healthy(page)
    page.context.close()
