"""Presentation mode: the scene list matches the pages, the stepper moves to the right page with the
right parameters (and resets a page visited before), the chrome-hiding stylesheet is constant."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import page_files
from ui import PAGES
from ui import lecture_scenes as pres
from ui import presentation as ui_pres

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 180  # scene pages load models (ELMo, BERT) on their first run
pytestmark = pytest.mark.realmodel  # the scenes run their pages on the shipped models
PATHS = {spec.url_path: spec.path for spec in PAGES}


# ---- the scene list ------------------------------------------------------------------------------------
def test_scenes_name_real_pages_and_parameters_the_pages_read():
    assert len({s.id for s in pres.SCENES}) == len(pres.SCENES) >= 10
    for scene in pres.SCENES:
        assert scene.url_path in PATHS, scene
        source = "\n".join(f.read_text(encoding="utf-8") for f in page_files(ROOT / PATHS[scene.url_path]))
        for key, _ in scene.params:  # a field's parameter (ui.state.Field) or one read by hand
            param = re.escape(key)
            assert re.search(rf"""Field\(\s*["'][^"']+["'],\s*["']{param}["']|url_param\(\s*["']{param}["']""",
                             source), (scene.id, key)


def test_scene_texts_exist_in_both_languages():
    for lang in ("zh", "en"):
        table = json.loads((ROOT / "assets" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        for scene in pres.SCENES:
            assert table.get(scene.title_key) and table.get(scene.note_key), (lang, scene.id)


def test_lecture_values_in_scenes():
    q = {s.id: s.query for s in pres.SCENES}
    assert q["pair"]["scene"] == "lecture_apple"
    assert q["worked"]["w"] == "[0.2,0.3,0.5]" and q["worked"]["gamma"] == "2.0" and q["worked"]["mode"] == "direct"
    assert q["syntax"]["w"] == "[0.5,0.4,0.1]" and q["semantics"]["w"] == "[0.1,0.3,0.6]"
    assert q["fill"]["sentence"] == "我吃了一个[MASK][MASK]。"
    assert q["attention"]["sentence"] == "苹果昨天发布了新手机"
    assert q["bilm"]["sentence"] == q["objective"]["gpt_sentence"] == "我吃了一个苹果"
    assert q["deep"]["a"] != q["deep"]["b"] and q["deep"]["a"][:4] == q["deep"]["b"][:4] == "苹果昨天"
    assert all(s.query[pres.SLIDE_PARAM] == s.id for s in pres.SCENES)
    order = [s.id for s in pres.SCENES]
    assert order[0] == "home" and order[-3:] == ["transfer", "lora", "exercises"]
    # lecture order: the biLM before the scalar mix; deep bidirectionality before BERT's MLM, which is
    # then set against left-to-right prediction
    assert order.index("oov") < order.index("bilm") < order.index("worked")
    # the presets, then learned s
    assert order.index("semantics") + 1 == order.index("learned") < order.index("evidence")
    assert order.index("evidence") < order.index("deep") < order.index("fill") < order.index("iterative") \
        < order.index("objective") < order.index("attention")


def test_scene_index_and_neighbours():
    assert pres.scene_index("senses", "static-vs-contextual") == 2
    assert pres.scene_index(None, "static-vs-contextual") == 1  # first scene of the page
    assert pres.scene_index("senses", "fill-mask") == pres.scene_index(None, "fill-mask")  # slide of another page
    assert pres.scene_index(None, "nowhere") is None
    assert pres.neighbours(None) == (None, pres.SCENES[0])
    assert pres.neighbours(0) == (None, pres.SCENES[1])
    assert pres.neighbours(len(pres.SCENES) - 1) == (pres.SCENES[-2], None)


def test_stylesheet_is_constant_and_hides_the_chrome():
    css = ui_pres.PRESENT_CHROME_CSS
    assert "{" in css and "stSidebar" in css and "stHeader" in css and "display: none" in css
    assert "http" not in css and "@import" not in css and "url(" not in css  # nothing fetched
    assert ui_pres.SHORTCUTS_SUPPORTED  # streamlit 1.67 has st.button(shortcut=...)


# ---- the stepper in the app -------------------------------------------------------------------------------
def app(query: dict | None = None, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def click(at: AppTest, key: str) -> AppTest:
    """Click a stepper button and follow the page switch: AppTest runs the new page once after
    st.switch_page but would run the old page again next time, unlike a browser."""
    at.button(key=key).click().run()
    assert not at.exception, [e.value for e in at.exception]
    slide = at.query_params[pres.SLIDE_PARAM] if pres.SLIDE_PARAM in at.query_params else None
    if slide in pres.BY_ID:
        at.switch_page(PATHS[pres.BY_ID[slide].url_path])
    return at


def bar_text(at: AppTest) -> str:
    return next((m.value for m in at.markdown if "场景" in m.value or "Scene" in m.value), "")


def test_present_mode_off_has_no_stepper():
    at = app()
    assert "present_next" not in [b.key for b in at.button]
    assert not any("stSidebar" in m.value for m in at.markdown)


def test_start_presenting_from_home_and_the_bar():
    at = app()
    at.button(key="home_present").click().run()
    assert at.session_state["present"] is True and at.query_params["present"] == "1"
    assert bar_text(at).startswith("**场景 1/19 · 三条演进主线**")
    assert any(ui_pres.PRESENT_CHROME_CSS.strip() in m.value for m in at.markdown)
    assert at.button(key="present_prev").disabled and not at.button(key="present_next").disabled
    assert at.button(key="present_next").proto.shortcut.lower() == "pagedown"
    assert at.button(key="present_prev").proto.shortcut.lower() == "pageup"
    # the bar shows the note's first words (CSS cuts the line); the whole note is in its popover
    note = json.loads((ROOT / "assets" / "i18n" / "zh.json").read_text(encoding="utf-8"))["present.note.home"]
    assert sum(m.value == note for m in at.markdown) == 1
    # the language button switches the whole page, the exit button leaves presentation mode
    at.button(key="present_lang").click().run()
    assert at.session_state["lang"] == "en" and bar_text(at).startswith("**Scene 1/19 · Three threads of evolution**")
    assert at.title[0].value == "From static word vectors to ELMo to BERT"
    at.button(key="present_exit").click().run()
    assert at.session_state["present"] is False and "present" not in at.query_params
    assert "present_next" not in [b.key for b in at.button]


def test_step_back_and_forth_between_light_pages():
    at = app({"present": "1"}, page=PATHS["exercises"])
    assert bar_text(at).startswith("**场景 19/19 · 动手练一练**")
    assert at.button(key="present_next").disabled
    click(at, "present_prev")
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[pres.SLIDE_PARAM] == "lora"
    assert at.title[0].value == "特征式（feature-based） vs 微调（fine-tuning）"
    assert bar_text(at).startswith("**场景 18/19 · 今天怎么做：LoRA，实测**")
    click(at, "present_prev")  # the same page, its first scene
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[pres.SLIDE_PARAM] == "transfer"
    assert bar_text(at).startswith("**场景 17/19 · 特征式 vs 微调，实测**")
    click(at, "present_next")
    click(at, "present_next")
    assert at.query_params[pres.SLIDE_PARAM] == "exercises" and at.title[0].value == "动手练一练"
    # jump through the list of all scenes
    click(at, "present_go_home")
    assert at.title[0].value == "从静态词向量到 ELMo 再到 BERT" and at.query_params[pres.SLIDE_PARAM] == "home"


def test_fill_mask_scenes_reset_the_page_state():
    """A scene opens with its own sentence; one the teacher typed there comes back with the scene."""
    at = app({"present": "1"}, page=PATHS["exercises"])
    click(at, "present_go_fill")
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params["sentence"] == "我吃了一个[MASK][MASK]。"
    assert at.session_state["fill_sentence"] == "我吃了一个[MASK][MASK]。"
    at.text_input(key="fill_sentence").set_value("今天天气很[MASK]。").run()  # the teacher edits the scene
    assert at.session_state["fill_sentence"] == "今天天气很[MASK]。"
    click(at, "present_next")  # → iterative: same page, the new scene's sentence
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[pres.SLIDE_PARAM] == "iterative"
    assert at.session_state["fill_sentence"] == "他去[MASK][MASK]馆借了三本书。"
    assert bar_text(at).startswith("**场景 14/19")
    click(at, "present_next")  # → objective: another page, from the scene's sentence and position
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["obj_gpt_sentence"] == "我吃了一个苹果" and at.session_state["obj_mask_pos"] == 5
    click(at, "present_next")  # → attention
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["att_sentence"] == "苹果昨天发布了新手机"
    click(at, "present_prev")  # back to objective
    click(at, "present_prev")  # back to iterative, as it was left
    assert at.session_state["fill_sentence"] == "他去[MASK][MASK]馆借了三本书。"
    click(at, "present_prev")  # back to fill: the teacher's sentence is kept (#51), in the URL too
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[pres.SLIDE_PARAM] == "fill"
    assert at.session_state["fill_sentence"] == at.query_params["sentence"] == "今天天气很[MASK]。"
    click(at, "present_next")  # and the next scene of the same page still opens with its own sentence
    assert at.session_state["fill_sentence"] == "他去[MASK][MASK]馆借了三本书。"


def test_static_scenes_pair_then_senses():
    at = app({"present": "1"})
    click(at, "present_next")
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[pres.SLIDE_PARAM] == "pair" and at.session_state["vec_scene"] == "lecture_apple"
    click(at, "present_next")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["vec_scene"] == "apple" and at.session_state["static_ctx"] == "elmo"
    if "static_layer" in at.session_state:  # the layer scrubber exists once ELMo is available
        assert at.session_state["static_layer"] == 0


def test_elmo_weight_scenes_set_the_sliders():
    at = app({"present": "1"}, page=PATHS["exercises"])
    click(at, "present_go_syntax")
    assert not at.exception, [e.value for e in at.exception]
    ss = at.session_state
    assert ss["elmo_mode"] == "direct" and ss["elmo_gamma"] == 2.0
    assert [ss[f"elmo_w_elmo_direct_{j}"] for j in range(3)] == [0.5, 0.4, 0.1]
    click(at, "present_next")
    assert [at.session_state[f"elmo_w_elmo_direct_{j}"] for j in range(3)] == [0.1, 0.3, 0.6]


def test_scene_links_on_home_carry_the_scene():
    at = app()
    links = [el.proto for el in at.get("page_link")]
    by_label = {p.label: p for p in links}
    row = by_label["看演示：特征式 vs 微调，实测"]
    assert row.page.endswith("feature-vs-finetune") or "transfer" in row.page
    assert "slide=transfer" in row.query_string
    pair = by_label["看演示：同一个「苹果」，两个向量"]
    assert "slide=pair" in pair.query_string and "scene=lecture_apple" in pair.query_string
    task = by_label["看演示：ELMo 的双向语言模型 vs BERT 的掩码预测"]  # the row "pre-training task"
    assert task.page.endswith("pretraining-objectives") or "objectives" in task.page
    assert "slide=bilm" in task.query_string


def test_how_it_is_computed_stays_off_the_projector():
    """Developer details (files, modules, commands) sit in a collapsed part that presentation mode leaves out."""
    how, from_file = "这是怎么算的", "结果来自预先计算的 assets/transfer_results.json"
    normal = app(page=PATHS["feature-vs-finetune"])
    details = " ".join(c.value for e in normal.expander if e.label == how for c in e.caption)
    assert from_file in details and "LoraConfig(task_type=SEQ_CLS" in details
    assert not any("LoraConfig" in m.value for m in normal.markdown)  # the LoRA text itself is for the class
    presenting = app({"present": "1"}, page=PATHS["feature-vs-finetune"])
    assert how not in [e.label for e in presenting.expander]
    shown = " ".join(m.value for m in presenting.markdown) + " ".join(c.value for c in presenting.caption)
    assert from_file not in shown and "LoraConfig" not in shown


@pytest.mark.parametrize("slide,expected", [("exercises", True), ("pair", False), ("bogus", False)])
def test_arrive_only_for_a_scene_of_this_page(slide, expected):
    at = app({"slide": slide}, page=PATHS["exercises"])
    applied = at.session_state[ui_pres.APPLIED_KEY] if ui_pres.APPLIED_KEY in at.session_state else None
    assert (applied == "exercises") is expected


def test_every_result_key_belongs_to_a_scene_and_only_title_pages_have_none():
    """Which element a scene scrolls into view is declared with the scene (ui.lecture_scenes: UI data, not core's)."""
    from ui.lecture_scenes import BY_ID, SCENES
    from ui.presentation import SCENE_RESULTS, result_key

    assert set(SCENE_RESULTS) <= set(BY_ID)
    # pages that open at their top: the exercises (the class board's live part is placed, #49)
    assert [s.id for s in SCENES if result_key(s) is None] == ["exercises"]


def test_a_scene_hides_the_exercise_answer_again():
    """Session-only values are declared too: arriving at the worked example hides an answer shown before."""
    at = app({"present": "1"}, page=PATHS["exercises"])
    click(at, "present_go_worked")
    at.toggle(key="elmo_reveal").set_value(True).run()
    assert at.session_state["elmo_reveal"] is True
    click(at, "present_next")
    click(at, "present_go_worked")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["elmo_reveal"] is False


def test_every_live_input_drives_a_result_its_page_draws():
    """ui.presentation.INPUT_RESULTS names pages, inputs and results that exist: a renamed key would leave an
    edit on the projector with its result out of view, silently."""
    root = Path(__file__).resolve().parent.parent
    source = "\n".join(path.read_text(encoding="utf-8") for folder in ("app_pages", "ui")
                       for path in sorted((root / folder).rglob("*.py")) if path.name != "presentation.py")
    made = re.findall(r'key=f"([a-z_]+)\{', source)  # keys built from a name: key=f"elmo_preset_{name}"
    paths = {spec.url_path for spec in PAGES}
    for url_path, drives in ui_pres.INPUT_RESULTS.items():
        assert url_path in paths, url_path
        for key in {*drives, *drives.values()}:
            assert f'key="{key}"' in source or any(key.startswith(prefix) for prefix in made), key


def _typed_boxes(url_path: str) -> set[str]:
    """The keys of the text boxes (st.text_input, st.text_area) on the page at ``url_path``: its files and the ui
    modules they import (the shared sentence inputs), less the sidebar's, which the projector hides."""
    import ast

    keys = set()
    for path in page_files(ROOT / PATHS[url_path]):
        if path.name == "sidebar.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("text_input", "text_area"):
                key = next((k.value for k in node.keywords if k.arg == "key"), None)
                assert isinstance(key, ast.Constant), (path, node.lineno)  # a box's key is a name, not built
                keys.add(key.value)
    return keys


# The class board's boxes are the students' form and the lecturer's board form: its layout is the class-board issue's.
NOT_MAPPED_PAGES = {"class-board"}


def test_every_sentence_box_of_every_scene_drives_a_result():
    """A sentence typed on the projector brings its result into view: every text box of a scene's page is in
    INPUT_RESULTS (the ELMo page's sentences were not, so their chart stayed far below after Ctrl+Enter)."""
    pages = {s.url_path for s in pres.SCENES if s.result} - NOT_MAPPED_PAGES
    assert "elmo-weights" in pages and "fill-mask" in pages
    found = set()
    for url_path in sorted(pages):
        boxes = _typed_boxes(url_path)
        found |= boxes
        missing = boxes - set(ui_pres.INPUT_RESULTS.get(url_path, {}))
        assert not missing, (url_path, sorted(missing))
    assert {"vec_text", "fill_sentence", "fill_cands", "att_sentence", "obj_gpt_sentence"} <= found


def test_the_step_buttons_are_told_from_the_scene_bar_and_drive_the_step_evidence():
    """On the iterative scene the step's "next" stands beside the bar's "Next": they read differently in both
    languages, and a step's press brings that step's evidence (its candidates' bars), not the section's top, into
    view."""
    for lang in ("zh", "en"):
        table = json.loads((ROOT / "assets" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        bar, step_next, step_prev = table["present.next"], table["fill.next"], table["fill.prev"]
        assert bar not in step_next and step_next not in bar and bar not in step_prev, lang
        assert ("空" if lang == "zh" else "[MASK]") in step_next  # it names what it fills
        assert f"「{step_next}」" in table["present.note.iterative"] or f'"{step_next}"' in \
            table["present.note.iterative"], lang  # the note names the button by its label
        assert step_next in table["fill.step0"], lang
    drives = ui_pres.INPUT_RESULTS["fill-mask"]
    assert {drives[k] for k in ("fill_next", "fill_prev", "fill_step")} == {"fill_step_result"}
    source = (ROOT / "app_pages" / "fill_mask" / "sections.py").read_text(encoding="utf-8")
    replay = source[source.index("def replay("):source.index("def _resample(")]
    # the bars are drawn inside that result
    assert replay.index('key="fill_step_result"') < replay.index('"fill_step_probs"')


def test_a_sentence_typed_on_a_scene_comes_back_with_the_scene():
    """PageDown then PageUp brings the biLM scene back with the sentence the lecturer typed there, not the scene's
    own (#51); every scene keeps its own: the objective scene on the same page still opens with its sentence."""
    at = app({"present": "1"}, page=PATHS["exercises"])
    click(at, "present_go_bilm")
    assert at.session_state["obj_sentence"] == "我吃了一个苹果"
    at.text_input(key="obj_sentence").set_value("他在图书馆看书").run()
    assert not at.exception, [e.value for e in at.exception]
    click(at, "present_next")  # → worked, on the ELMo weights page
    assert at.query_params[pres.SLIDE_PARAM] == "worked"
    click(at, "present_prev")  # ← bilm
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[pres.SLIDE_PARAM] == "bilm"
    assert at.session_state["obj_sentence"] == at.query_params["sentence"] == "他在图书馆看书"
    click(at, "present_go_objective")
    assert at.session_state["obj_gpt_sentence"] == "我吃了一个苹果"
