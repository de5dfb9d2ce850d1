"""AppTest of app_pages/objectives/page.py on the embedded models: the numbers shown are core.views.objectives',
ELMo's forward half stays at 0 while BERT moves, every control and URL parameter, bad input where it is
typed, a hub-like BERT from the sidebar."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest

from apptest_support import assert_no_exception, chart, page_app, plotly_array, texts, zh_message
from core.content.budgets import load_budgets, token_ratio
from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO
from core.views import objectives as obj
from ui.i18n import translate

PAGE = str(Path(__file__).resolve().parent.parent / "app_pages" / "objectives" / "page.py")
PAIR = ("苹果昨天发布了新手机", "苹果昨天掉在了地上")
_app = partial(page_app, PAGE)
pytestmark = pytest.mark.usefixtures("embedded_elmo_and_bert")


def zh(key: str, **params) -> str:
    return translate("zh", key, **params)

RTOL = 1e-5  # float32: the page's single-thread torch and the test's sum in a different order


def _bars(spec: dict) -> list[dict]:
    return [trace for trace in spec["data"] if trace["type"] == "bar"]


def _curves(spec: dict) -> list[np.ndarray]:
    return [plotly_array(trace["y"]).astype(float) for trace in spec["data"] if trace.get("name") and
            trace.get("mode") != "lines"]


def _shows_the_real_character(spec: dict, predictions: list[obj.Prediction], token: str) -> None:
    """Both panels on one probability scale, and each with a bar for the real character labelled with its rank
    (after the top k when it ranks below them: 苹 from the left alone)."""
    assert len({tuple(spec["layout"][axis]["range"]) for axis in spec["layout"] if axis.startswith("xaxis")}) == 1
    for bars, prediction in zip(_bars(spec), predictions):
        axis = spec["layout"]["yaxis" + bars["yaxis"][1:]]
        real = [i for i, tick in enumerate(axis["ticktext"]) if tick == zh("obj.true_tick", token=token,
                                                                           rank=prediction.rank)]
        assert len(real) == 1
        assert float(plotly_array(bars["x"])[real[0]]) == pytest.approx(prediction.actual, rel=RTOL)
    assert any(p.rank > 5 for p in predictions)  # the case the panels once left out


def test_default_page_shows_the_models_numbers(elmo, bert):
    at = _app(DEFAULT_BERT).run()
    assert_no_exception(at)
    assert not at.error and not at.warning
    assert at.title[0].value == zh("nav.objectives")
    assert len(at.get("latex")) == 3  # the forward LM, the backward LM, the joint objective
    assert any("ELMo 的前向 LM 代替 GPT 演示" in i for i in texts(at, "info"))
    # ① the biLM: log-likelihoods, the real character's probability per position, top-k at 苹
    reading = obj.bilm_reading(elmo, "我吃了一个苹果")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[zh("obj.ll.forward")] == f"{reading.log_likelihood('forward'):.2f}"
    assert metrics[zh("obj.ll.backward")] == f"{reading.log_likelihood('backward'):.2f}"
    forward, backward = _bars(chart(at, "obj_prob_chart"))
    np.testing.assert_allclose(plotly_array(forward["y"]), [p.actual for p in reading.forward], rtol=RTOL)
    np.testing.assert_allclose(plotly_array(backward["y"]), [p.actual for p in reading.backward], rtol=RTOL)
    assert at.selectbox(key="obj_pos").value == 5
    topk = chart(at, "obj_topk_chart")
    for bars, prediction in zip(_bars(topk), (reading.forward[5], reading.backward[5])):
        np.testing.assert_allclose(plotly_array(bars["x"])[:5], [c.score for c in prediction.candidates[:5]],
                                   rtol=RTOL)
    _shows_the_real_character(topk, [reading.forward[5], reading.backward[5]], "苹")
    assert len(at.dataframe[0].value) == 7
    # ② ELMo's forward half does not move, its backward half and every BERT layer do
    moved = obj.measure_right_context(elmo, bert, *PAIR)
    fwd, bwd, deep = _curves(chart(at, "obj_move_chart"))
    assert np.all(fwd == 0.0) and len(fwd) == 3
    # the metrics read the curves of the character shown (苹), from layer 1 up (they once took every character)
    assert metrics[zh("obj.m.forward", token="苹")] == "0"
    assert metrics[zh("obj.m.backward", token="苹")] == f"{bwd[1:].min():.3f}" != "0.000"
    assert metrics[zh("obj.m.bert", token="苹")] == f"{deep[1:].min():.3f}" != "0.000"
    np.testing.assert_allclose(bwd, moved.elmo_backward["cosine"][:, 0], rtol=RTOL)
    np.testing.assert_allclose(deep, moved.bert["cosine"][:, 0], rtol=RTOL)
    assert np.all(deep[1:] > 0) and np.all(bwd[1:] > 0)
    heat = chart(at, "obj_move_heatmap")["data"][0]
    assert np.asarray(plotly_array(heat["z"]), dtype=float).shape == (4, 2 + 2 + 4)
    # ③ left to right vs masked at 苹
    masked = obj.masked_reading(bert, "我吃了一个苹果", (5, 6), "苹")
    gpt = chart(at, "obj_gpt_chart")
    left_bars, masked_bars = _bars(gpt)
    np.testing.assert_allclose(plotly_array(masked_bars["x"])[:5], [c.score for c in masked.candidates[:5]],
                               rtol=RTOL)
    np.testing.assert_allclose(plotly_array(left_bars["x"])[:5],
                               [c.score for c in reading.forward[5].candidates[:5]], rtol=RTOL)
    _shows_the_real_character(gpt, [reading.forward[5], masked], "苹")
    assert chart(at, "obj_gpt_strip") is not None
    # the count of positions where BERT is surer, computed over the whole sentence (not "most positions")
    every = obj.masked_readings(bert, "我吃了一个苹果", tuple(reading.offsets), tuple(reading.tokens))
    surer, others = obj.surer_positions(reading.forward, every)
    count = zh("obj.gpt.count", model=DEFAULT_BERT, surer=len(surer), n=len(surer) + len(others))
    if others:
        count += "  \n" + zh("obj.gpt.count_left", chars=" ".join(reading.tokens[k] for k in others))
    assert count in texts(at, "markdown")
    # the two models' training budgets beside the comparison, from training.json
    budgets = load_budgets()
    ratio = token_ratio(budgets, DEFAULT_BERT, DEFAULT_ELMO)
    note = [c for c in texts(at, "caption") if zh("budget.ratio", larger=DEFAULT_BERT, smaller=DEFAULT_ELMO,
                                                    ratio=f"{ratio:.0f}") in c]
    assert len(note) == 1 and f"{budgets[DEFAULT_ELMO].cpu_minutes:.0f}" in note[0]
    assert dict(at.query_params) == {"sentence": "我吃了一个苹果", "top_k": "5", "pos": "5", "a": PAIR[0],
                                     "b": PAIR[1], "token": "0", "gpt_sentence": "我吃了一个苹果", "mask": "5"}


def test_controls_and_url_state(elmo, bert):
    query = {"sentence": "我吃了一个苹果派", "top_k": "3", "pos": "7", "a": "我吃了一个苹果", "b": "我吃了一个苹果派",
             "metric": "l2", "token": "6", "gpt_sentence": "我吃了一个苹果派", "mask": "6"}
    at = _app(DEFAULT_BERT, query=query).run()
    assert_no_exception(at)
    assert not at.error
    assert at.text_input(key="obj_sentence").value == "我吃了一个苹果派" and at.slider(key="obj_top_k").value == 3
    assert at.selectbox(key="obj_pos").value == 7 and at.selectbox(key="obj_mask_pos").value == 6
    assert at.radio(key="obj_metric").value == "l2" and at.selectbox(key="obj_token").value == 6
    moved = obj.measure_right_context(elmo, bert, "我吃了一个苹果", "我吃了一个苹果派")
    fwd, bwd, deep = _curves(chart(at, "obj_move_chart"))
    assert np.all(fwd == 0.0)
    np.testing.assert_allclose(deep, moved.bert["l2"][:, 6], rtol=RTOL)
    typed = obj.bilm_reading(elmo, "我吃了一个苹果派")
    # the top 3, and the real character (派) below them where it ranks lower
    assert [len(trace["x"]) for trace in _bars(chart(at, "obj_topk_chart"))] == [
        3 + (p.rank > 3) for p in (typed.forward[7], typed.backward[7])]
    # every selector moves its view and its URL parameter
    at.selectbox(key="obj_pos").set_value(0)
    at.selectbox(key="obj_token").set_value(0)
    at.selectbox(key="obj_mask_pos").set_value(0)
    at.radio(key="obj_metric").set_value("cosine")
    at.slider(key="obj_top_k").set_value(4).run()
    assert_no_exception(at)
    top = _bars(chart(at, "obj_topk_chart"))
    np.testing.assert_allclose(plotly_array(top[1]["x"])[:4], [c.score for c in typed.backward[0].candidates[:4]],
                               rtol=RTOL)
    np.testing.assert_allclose(_curves(chart(at, "obj_move_chart"))[2], moved.bert["cosine"][:, 0], rtol=RTOL)
    left_bars, _ = _bars(chart(at, "obj_gpt_chart"))
    np.testing.assert_allclose(plotly_array(left_bars["x"])[:4], [c.score for c in typed.forward[0].candidates[:4]],
                               rtol=RTOL)
    assert at.query_params["pos"] == "0" and at.query_params["mask"] == "0" and at.query_params["token"] == "0"
    assert at.query_params["top_k"] == "4" and "metric" not in at.query_params
    # a shorter sentence keeps the position selectors inside it; each part has its own sentence box
    at.text_input(key="obj_sentence").set_value("苹果").run()
    assert_no_exception(at)
    assert at.selectbox(key="obj_pos").value == 0 and len(at.selectbox(key="obj_mask_pos").options) == 8
    at.text_input(key="obj_gpt_sentence").set_value("下雨").run()
    assert_no_exception(at)
    assert at.query_params["gpt_sentence"] == "下雨" and at.query_params["sentence"] == "苹果"
    assert len(at.selectbox(key="obj_mask_pos").options) == 2 and len(at.selectbox(key="obj_pos").options) == 2
    left_bars, _ = _bars(chart(at, "obj_gpt_chart"))
    np.testing.assert_allclose(plotly_array(left_bars["x"])[:4],
                               [c.score for c in obj.bilm_reading(elmo, "下雨").forward[0].candidates[:4]], rtol=RTOL)
    odd = _app(DEFAULT_BERT, query={"pos": "99", "top_k": "0", "metric": "nope", "token": "-1", "mask": "x"}).run()
    assert_no_exception(odd)
    assert odd.selectbox(key="obj_pos").value == 5 and odd.slider(key="obj_top_k").value == 5  # 99: the default
    assert odd.radio(key="obj_metric").value == "cosine" and odd.selectbox(key="obj_mask_pos").value == 5


def test_bad_input_is_reported_where_it_is_typed():
    at = _app(DEFAULT_BERT).run()
    at.text_input(key="obj_sentence").set_value("").run()
    assert_no_exception(at)
    assert texts(at, "error") == [zh_message("empty_input")]
    assert chart(at, "obj_move_chart") is not None and chart(at, "obj_prob_chart") is None
    assert chart(at, "obj_gpt_chart") is not None  # ③ reads its own sentence
    at.text_input(key="obj_gpt_sentence").set_value("").run()
    assert texts(at, "error") == [zh_message("empty_input")] * 2 and chart(at, "obj_gpt_chart") is None
    at.text_input(key="obj_gpt_sentence").set_value("我吃了一个苹果")
    at.text_input(key="obj_sentence").set_value("我吃了一个[mask]").run()
    assert texts(at, "error") == [zh_message("special_in_text", token="[mask]")]
    at.text_input(key="obj_sentence").set_value("I ate an apple.").run()
    assert_no_exception(at)
    assert zh("obj.latin_note") in texts(at, "info") and not at.error
    at.text_input(key="obj_sentence").set_value("我吃了一个🍎<b>苹果</b>").run()
    assert_no_exception(at)
    assert any("🍎" in w for w in texts(at, "warning")) and not at.error
    at.text_input(key="obj_sentence").set_value("我吃了一个苹果")
    at.text_input(key="obj_text_b").set_value(PAIR[0]).run()
    assert texts(at, "error") == [zh_message("same_text")]
    assert chart(at, "obj_prob_chart") is not None and chart(at, "obj_move_chart") is None
    at.text_input(key="obj_text_b").set_value("今天天气很好").run()
    assert texts(at, "error") == [zh_message("no_shared_prefix")]
    assert at.text_input(key="obj_text_b").value == "今天天气很好"


def test_a_model_that_is_not_a_masked_lm():
    at = _app(DEFAULT_ELMO).run()
    assert_no_exception(at)
    message = zh_message("not_masked_lm", name=DEFAULT_ELMO, model_type="elmo")
    assert texts(at, "error") == [message, message]  # ② and ③; ① needs no BERT
    assert chart(at, "obj_prob_chart") is not None


def test_hub_like_bert_from_the_sidebar(tiny_bert_dir):
    at = _app(str(tiny_bert_dir), lang="en").run()
    assert_no_exception(at)
    assert not at.error
    assert at.title[0].value == "Pre-training objectives"
    assert any("ELMo's forward LM stands in for GPT" in i for i in texts(at, "info"))
    fwd, bwd, deep = _curves(chart(at, "obj_move_chart"))
    assert np.all(fwd == 0.0) and len(deep) == 3 and np.all(deep[1:] > 0)


def _answer_agrees_with_the_metrics(at, elmo, bert, pair: tuple[str, str], token: int, metric: str) -> None:
    """The answer box's reading states ②'s three figures, of the character ② shows, and they are
    core.views.objectives.deep_reading's on that pair (its flip is tested in test_objectives)."""
    moved = obj.measure_right_context(elmo, bert, *pair)
    reading = obj.deep_reading(moved, metric, token)
    char = moved.tokens[token]
    metrics = {m.label: m.value for m in at.metric}
    shown = [metrics[zh(f"obj.m.{part}", token=char)] for part in ("forward", "backward", "bert")]
    assert shown == [f"{reading.forward:.3g}", f"{reading.backward:.3f}", f"{reading.bert:.3f}"]
    values = [m.value for m in at.markdown]
    answer = values[values.index(zh("obj.qa")) + 1]
    assert all(f" {figure}" in answer for figure in shown), (shown, answer)  # the same numbers as the metrics
    assert answer == zh(f"obj.qa.reading.{reading.verdict}", a=pair[0], b=pair[1], shared=moved.shared, token=char,
                        metric=zh(f"obj.metric.{metric}"), forward=shown[0], backward=shown[1], bert=shown[2])


def test_the_plain_answer_gives_the_figures_of_the_pair_and_character_below(elmo, bert):
    """A student reads one number for one claim: the answer above the page states the figures ②'s metrics show
    (it gave the smallest movement over every character while the metrics gave 苹's alone), on the lecture's
    pair, after ② is given other sentences, another character and the other metric; none on the projector."""
    at = _app(DEFAULT_BERT).run()
    assert_no_exception(at)
    _answer_agrees_with_the_metrics(at, elmo, bert, PAIR, 0, "cosine")
    edited = ("我吃了一个苹果", "我吃了一个苹果派")
    at.text_input(key="obj_text_a").set_value(edited[0])
    at.text_input(key="obj_text_b").set_value(edited[1]).run()
    _answer_agrees_with_the_metrics(at, elmo, bert, edited, 0, "cosine")
    at.selectbox(key="obj_token").set_value(5)
    at.radio(key="obj_metric").set_value("l2").run()
    _answer_agrees_with_the_metrics(at, elmo, bert, edited, 5, "l2")
    at.session_state["present"] = True
    at.run()
    assert zh("obj.qa") not in [m.value for m in at.markdown]
