"""``ui.state.seed``: a page's declared fields start from the URL, keep what the user changed (across runs and
page switches), drop a kept value their cast refuses, and start again from the URL when a scene arrives."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from ui.state import Field, end_scene, in_range, seed, start_scene

    if st.session_state.pop("arrive", False):
        start_scene()
    if st.session_state.pop("leave", False):
        end_scene()
    top = st.session_state.get("top", 12)
    seed(Field("demo_text", "text", "我吃了一个苹果"), Field("demo_layer", "layer", 0, in_range(0, top)),
         Field("demo_flag", None, False, bool))
    st.text_input("text", key="demo_text")
    st.number_input("layer", key="demo_layer", min_value=0, max_value=12)
    st.toggle("flag", key="demo_flag")


def _app(**query) -> AppTest:
    at = AppTest.from_function(_page)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def test_fields_start_from_the_url_or_their_default():
    at = _app(text="苹果昨天发布了新手机", layer="3")
    assert at.session_state["demo_text"] == "苹果昨天发布了新手机" and at.session_state["demo_layer"] == 3
    assert at.session_state["demo_flag"] is False
    assert _app(layer="99").session_state["demo_layer"] == 0  # refused by the cast: the default


def test_a_changed_value_is_kept_until_a_scene_arrives():
    at = _app(text="苹果昨天发布了新手机")
    at.text_input(key="demo_text").set_value("他喝了一杯牛奶").run()
    at.toggle(key="demo_flag").set_value(True).run()
    at.run()
    assert at.session_state["demo_text"] == "他喝了一杯牛奶" and at.session_state["demo_flag"] is True
    at.session_state["arrive"] = True
    at.run()  # a scene: every field from the URL again, the session-only one from its default
    assert at.session_state["demo_text"] == "苹果昨天发布了新手机" and at.session_state["demo_flag"] is False
    at.text_input(key="demo_text").set_value("改过的场景").run()  # the teacher edits the scene: kept
    assert at.session_state["demo_text"] == "改过的场景"
    at.session_state["leave"] = True
    at.run()
    assert at.session_state["demo_text"] == "改过的场景"


def test_a_kept_value_the_cast_refuses_is_replaced():
    at = _app(layer="2")
    at.number_input(key="demo_layer").set_value(9).run()
    assert at.session_state["demo_layer"] == 9
    at.session_state["top"] = 5  # a model with fewer layers: 9 no longer fits, the URL's 2 does
    at.run()
    assert at.session_state["demo_layer"] == 2
