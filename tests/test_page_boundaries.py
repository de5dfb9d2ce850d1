"""``ui.page.attempt`` and ``ui.page.experiment``: what goes wrong in one part of a page is a message where that
part stands, and the rest of the page still draws (AppTest reruns the whole script, so an experiment's own
fragment reruns are left to the browser tests)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from apptest_support import zh_message


def _page():
    import streamlit as st

    from core.guard.errors import LabError
    from ui.page import attempt, experiment

    def parse(text: str) -> str:
        if not text.strip():
            raise LabError("empty_input")
        return text.strip()

    @experiment
    def broken() -> None:
        st.text_input("broken input", key="broken_text", value="")
        st.markdown(f"parsed: {parse(st.session_state['broken_text'])}")

    @experiment
    def working() -> None:
        st.text_input("working input", key="working_text", value="苹果")
        st.markdown(f"parsed: {parse(st.session_state['working_text'])}")

    result = attempt(parse, "")
    st.markdown(f"result: {result}")
    broken()
    working()
    st.markdown("page end")


def test_a_failing_part_says_why_where_it_stands_and_the_rest_draws():
    at = AppTest.from_function(_page).run()
    assert not at.exception
    assert [e.value for e in at.error] == [zh_message("empty_input")] * 2  # attempt's and the broken experiment's
    texts = [m.value for m in at.markdown]
    assert texts == ["result: None", "parsed: 苹果", "page end"]


def test_an_experiment_recovers_when_its_input_is_mended():
    at = AppTest.from_function(_page).run()
    at.text_input(key="broken_text").set_value("我吃了一个苹果").run()
    assert "parsed: 我吃了一个苹果" in [m.value for m in at.markdown]
    assert [e.value for e in at.error] == [zh_message("empty_input")]  # only the page's own attempt now
