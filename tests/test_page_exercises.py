"""The lecture's two exercises: tolerant parsing, checks against scalar_mix, the page's every control."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.compute.mixing import scalar_mix
from core.content import exercises as ex
from core.guard.errors import LabError
from core.guard.safe_text import md_escape

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "app_pages" / "exercise_cards" / "page.py")


# ---- core ----------------------------------------------------------------------------------------------
def test_expected_answer_is_scalar_mix_and_the_lecture():
    expected = ex.formula_expected("lecture")
    assert np.allclose(expected, scalar_mix(np.identity(3), [0.2, 0.3, 0.5], 2.0))
    assert np.allclose(expected, [0.4, 0.6, 1.0])  # the lecture's reference answer
    assert np.allclose(ex.formula_expected("syntax"), [1.0, 0.8, 0.2])  # the lecture's code output
    assert np.allclose(ex.formula_expected("semantics"), [0.2, 0.6, 1.2])
    assert np.allclose(ex.formula_expected("lecture", scaled=False), [0.2, 0.3, 0.5])


@pytest.mark.parametrize("text", [
    "0.4,0.6,1", "[0.4, 0.6, 1.0]", "(0.4 0.6 1)", " 0.4 ; 0.6 ; 1 ", "０.４，０.６，１", "[0.4，0.6，1.0]",
    "2/5, 3/5, 1", ".4, .6, 1.", "4e-1 6E-1 1", "【0.4、0.6、1】",
])
def test_parse_vector_is_tolerant(text):
    assert np.allclose(ex.parse_vector(text), [0.4, 0.6, 1.0])


@pytest.mark.parametrize("text,code,params", [
    ("abc", "bad_vector", {"item": "abc"}),
    ("0.4, x, 1", "bad_vector", {"item": "x"}),
    ("0.4, 0.6", "vector_length", {"count": 2}),
    ("0.4 0.6 1 2", "vector_length", {"count": 4}),
    ("", "vector_length", {"count": 0}),
    ("1/0, 1, 1", "bad_vector", {"item": "1/0"}),
    ("nan, 1, 1", "bad_vector", {"item": "nan"}),
])
def test_parse_vector_rejects_with_a_clear_message(text, code, params):
    with pytest.raises(LabError) as info:
        ex.parse_vector(text)
    assert info.value.code == code
    for key, value in params.items():
        assert info.value.params[key] == value
    assert info.value.message("zh") and info.value.message("en")


@pytest.mark.parametrize("answer,hint", [
    ([0.4, 0.6, 1.0], "correct"), ([0.40, 0.60, 1.00], "correct"), ([0.41, 0.6, 1.0], "correct"),
    ([0.2, 0.3, 0.5], "forgot_gamma"), ([1.0, 0.6, 0.4], "reversed"), ([0.1, 0.15, 0.25], "sum_not_scaled"),
    ([0.5, 0.6, 1.0], "wrong"),
])
def test_check_formula_names_the_slip(answer, hint):
    verdict = ex.check_formula(answer, "lecture")
    assert verdict.hint == hint and verdict.correct == (hint == "correct")
    assert verdict.expected == pytest.approx([0.4, 0.6, 1.0])


def test_check_concept():
    answers = {"frozen": "feature", "updated": "feature", "as_input": None}
    verdict = ex.check_concept(answers, ex.CONCEPT_STATEMENTS)
    assert verdict["frozen"] is True and verdict["updated"] is False and verdict["as_input"] is None
    assert ex.CONCEPT_MODELS == {"elmo": "feature", "bert": "finetune", "gpt": "finetune"}


# ---- the page -----------------------------------------------------------------------------------------------
def page(lang="zh", query=None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["lang"] = lang
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_formula_card_accepts_tolerant_input_and_checks_it():
    at = page()
    assert at.title[0].value == "动手练一练"
    assert not at.success and not at.error
    at.text_input(key="ex_formula_answer").set_value("[0.4, 0.6, 1.0]").run()  # Enter checks
    assert [s.value for s in at.success] == ["正确！[0.4, 0.6, 1.0] 就是 γ · Σⱼ sⱼ hⱼ。"]
    at.text_input(key="ex_formula_answer").set_value("0.2,0.3,0.5").run()
    assert not at.success and "γ" in at.warning[0].value and "别忘了" in at.warning[0].value
    at.text_input(key="ex_formula_answer").set_value("0.4, zero, 1").run()
    # Markdown source: the example's dots are escaped, the page shows "0.1, 0.2, 0.3"
    example = md_escape("0.1, 0.2, 0.3")
    assert [e.value for e in at.error] == [f"无法识别「zero」：请输入 3 个数字，用逗号或空格分隔，例如 {example}。"]
    assert at.text_input(key="ex_formula_answer").value == "0.4, zero, 1"  # the text stays in its box
    at.text_input(key="ex_formula_answer").set_value("0.4 0.6").run()
    assert "2" in at.error[0].value and "3" in at.error[0].value
    at.text_input(key="ex_formula_answer").set_value("0.4,0.6,1").run()
    at.button(key="ex_formula_check").click().run()
    assert at.success


def test_formula_reveal_shows_the_lecture_answer():
    at = page()
    shown = ([m.value for m in at.markdown] + [e.help or "" for e in at.text_input]
             + [e.placeholder or "" for e in at.text_input])
    assert not any("0.4" in text and "0.6" in text for text in shown)  # nothing gives the answer away before reveal
    at.button(key="ex_formula_reveal").click().run()
    assert any(m.value == "因此，该词符的最终 ELMo 向量为 **[0.4, 0.6, 1.0]**。" for m in at.markdown)
    assert any("[0.4,\\ 0.6,\\ 1.0]" in l.value for l in at.latex)


def test_formula_variants_and_url():
    at = page(query={"variant": "syntax"})
    assert at.session_state["ex_variant"] == "syntax"
    at.text_input(key="ex_formula_answer").set_value("1, 0.8, 0.2").run()
    assert at.success
    at.selectbox(key="ex_variant").set_value("semantics").run()
    assert at.query_params["variant"] == "semantics"
    assert not at.success  # a new question: the old verdict is cleared
    at.button(key="ex_formula_reveal").click().run()
    assert any("[0.2, 0.6, 1.2]" in m.value for m in at.markdown)
    at.selectbox(key="ex_variant").set_value("lecture").run()
    assert "variant" not in at.query_params
    assert page(query={"variant": "bogus"}).session_state["ex_variant"] == "lecture"


def test_concept_card_every_control():
    at = page()
    radios = {r.key: r for r in at.radio}
    assert set(radios) == {f"ex_c_{k}" for k in ex.CONCEPT_STATEMENTS} | {f"ex_m_{k}" for k in ex.CONCEPT_MODELS}
    assert all(r.value is None for r in radios.values())
    at.text_area(key="ex_concept_text").set_value("特征式冻结参数，微调更新全部参数")
    for item, truth in ex.CONCEPT_STATEMENTS.items():
        at.radio(key=f"ex_c_{item}").set_value(truth)
    at.radio(key="ex_m_elmo").set_value("feature")
    at.radio(key="ex_m_bert").set_value("feature")  # wrong on purpose
    at.run()
    assert not any("答对" in m.value for m in at.markdown)  # predict first: no verdict before reveal
    at.button(key="ex_concept_reveal").click().run()
    assert any(m.value == "**答对 7 / 9 项。**" for m in at.markdown)
    assert any("还有 1 项没有作答" in c.value for c in at.caption)  # GPT left open
    assert any("例子：**ELMo**" in m.value for m in at.markdown)
    assert at.text_area(key="ex_concept_text").value == "特征式冻结参数，微调更新全部参数"
    at.radio(key="ex_m_gpt").set_value("finetune").run()
    assert any(m.value == "**答对 8 / 9 项。**" for m in at.markdown)
    at.button(key="ex_concept_reset").click().run()
    assert all(r.value is None for r in at.radio)
    assert at.text_area(key="ex_concept_text").value == ""
    assert not any("答对" in m.value for m in at.markdown)


def test_english():
    at = page("en")
    assert at.title[0].value == "Exercises"
    at.text_input(key="ex_formula_answer").set_value("0.4;0.6;1").run()
    assert at.success[0].value.startswith("Correct!")
    at.text_input(key="ex_formula_answer").set_value("a b c").run()
    assert at.error[0].value.startswith("Cannot read")


@pytest.mark.parametrize("path, key", [("exercise_cards/page.py", "ex.qa"), ("home/page.py", "home.qa")])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_page_opens_with_its_question_and_plain_answer(path, key, lang):
    """A student at home (issue #44): the question and its answer come right below the title; on the projector
    the lecturer says them (and the exercises keep their one-line intro there)."""
    from ui.i18n import translate

    at = AppTest.from_file(str(ROOT / "app_pages" / path), default_timeout=60)
    at.session_state["lang"] = lang
    at.run()
    assert not at.exception
    assert at.markdown[0].value == translate(lang, key)
    assert at.markdown[0].value.startswith("**问题**" if lang == "zh" else "**Question**")
    at.session_state["present"] = True
    at.run()
    assert translate(lang, key) not in [m.value for m in at.markdown]
    if path == "exercise_cards/page.py":
        assert at.markdown[0].value == translate(lang, "ex.intro")
