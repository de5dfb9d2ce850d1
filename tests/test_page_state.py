"""``ui.state``: a page's declared fields (``seed``) start from the URL, keep what the user changed (across runs
and page switches), drop a kept value their cast refuses, and start again from the URL when a scene arrives; a
``KeptChoice`` keeps a widget's choice by its name while the widget's rows or labels change."""
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


def _app(script=_page, **query) -> AppTest:
    at = AppTest.from_function(script)
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


# ---- KeptChoice: a choice kept by its name while the widget holds a row or a label -------------------------
def _choice_page():
    import streamlit as st

    from ui.state import Field, KeptChoice, start_scene

    if st.session_state.pop("arrive", False):
        start_scene()
    words = st.session_state.get("words", ["苹果", "发布", "了", "新", "手机", "了"])
    near = next((i for i, w in enumerate(words) if w.startswith("苹")), 0)  # the page's own fuzzy match
    name = KeptChoice("demo_row", Field("_demo_word", "word", "苹果")).place(
        range(len(words)), words, near=lambda wanted: words.index(wanted) if wanted in words else near)
    st.selectbox("word", list(range(len(words))), key="demo_row", format_func=words.__getitem__)
    st.session_state["shown"] = name
    lang = st.session_state.get("lang", "en")
    labels = [{"en": "One", "zh": "一"}[lang], {"en": "Two", "zh": "二"}[lang]]
    KeptChoice("demo_tab", Field("_demo_tab", "tab", "one")).place(labels, ["one", "two"])
    st.radio("tab", labels, key="demo_tab")


def test_a_kept_choice_starts_from_the_url_and_follows_its_name_to_another_row():
    at = _app(_choice_page, word="手机")
    assert at.selectbox(key="demo_row").value == 4 and at.session_state["shown"] == "手机"
    at.session_state["words"] = ["他", "买", "了", "新", "手机"]  # another sentence, 手机 still on row 4
    at.run()
    assert at.selectbox(key="demo_row").value == 4
    at.session_state["words"] = ["新", "手机", "了"]  # 手机 moved to row 1: the choice follows it
    at.run()
    assert at.selectbox(key="demo_row").value == 1 and at.session_state["shown"] == "手机"
    at.session_state["words"] = ["苹", "果", "了"]  # gone: the near match, kept by its own name from now on
    at.run()
    assert at.selectbox(key="demo_row").value == 0 and at.session_state["_demo_word"] == "苹"


def test_a_picked_row_is_read_against_the_options_it_was_picked_from():
    at = _app(_choice_page)
    at.selectbox(key="demo_row").set_value(5).run()  # the second 了: the same row stays, not the first 了
    assert at.selectbox(key="demo_row").value == 5 and at.session_state["_demo_word"] == "了"
    at.session_state["words"] = ["了", "苹果", "了"]  # the row's name was picked from the old sentence: 了, first row
    at.run()
    assert at.selectbox(key="demo_row").value == 0


def test_a_kept_choice_survives_a_relabel_and_yields_to_a_scene():
    at = _app(_choice_page)
    at.radio(key="demo_tab").set_value("Two").run()
    at.session_state["lang"] = "zh"  # the labels change, the choice (by id) stays
    at.run()
    assert at.radio(key="demo_tab").value == "二" and at.session_state["_demo_tab"] == "two"
    at.selectbox(key="demo_row").set_value(4).run()
    at.query_params["word"], at.query_params["tab"] = "发布", "one"
    at.session_state["arrive"] = True  # a scene: its names win over what the widgets held
    at.run()
    assert at.selectbox(key="demo_row").value == 1 and at.radio(key="demo_tab").value == "一"


# ---- follow: a box that belongs to its source starts again when the source changes -------------------------
def _follow_page():
    import streamlit as st

    from ui.state import follow

    source = st.session_state.get("source", "我吃了一个[MASK]果")
    follow("demo_box", source, f"words for {source}")
    st.text_input("box", key="demo_box")


def test_a_following_box_keeps_the_edit_until_its_source_changes():
    at = _app(_follow_page)
    assert at.text_input(key="demo_box").value == "words for 我吃了一个[MASK]果"
    at.text_input(key="demo_box").set_value("苹,桃").run()
    at.run()
    assert at.text_input(key="demo_box").value == "苹,桃"
    at.session_state["source"] = "他喝了[MASK]"
    at.run()
    assert at.text_input(key="demo_box").value == "words for 他喝了[MASK]"
