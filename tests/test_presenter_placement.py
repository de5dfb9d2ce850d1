"""The presenter is told, not guessing (#52): what Python tells ``ui/presenter.js`` at the end of each run, the
decisions of ``ui/placement.mjs`` (unit-tested with node, outside the browser), and what the script no longer does
(timers, Streamlit's test attributes, clicking the bar's buttons). The browser tests in tests/e2e/test_presenter_*
check the same behaviour on the served app."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ui import lecture_scenes as pres
from ui import presentation as ui_pres

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [ROOT / "ui" / "presenter.js", ROOT / "ui" / "placement.mjs"]


@pytest.mark.subprocess
def test_the_placement_decisions_pass_their_unit_tests():
    node = shutil.which("node")
    assert node, "node is needed for the presenter's unit tests (apt-get install nodejs; .ci/run installs it)"
    done = subprocess.run([node, "--test", str(ROOT / "tests" / "js" / "placement.test.mjs")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", done.stdout, re.M) and re.search(r"^# fail 0$", done.stdout, re.M)


def test_the_script_guesses_nothing():
    """No timer, no poll, no Streamlit test attribute or internal class, no click on the bar's buttons: Python's
    end-of-run element and the bar's press state are the only ways in and out."""
    source = "\n".join(path.read_text(encoding="utf-8") for path in SCRIPTS)
    code = re.sub(r"//[^\n]*", "", source)  # the comments may name what is gone
    for banned in ("setTimeout", "setInterval", "requestAnimationFrame", "data-testid", "testScriptState",
                   "data-stale", ".click()", "Date.now() -"):
        assert banned not in code, banned
    # the only Streamlit classes read are the ones key= makes (documented): st-key-<our key>
    allowed = {"st-key-present_bar", "st-key-present_pinned", "st-key-presenter_console", "st-key-"}
    assert set(re.findall(r"\.(st-[a-z_-]+)", code)) <= allowed
    assert code.count("window.__lab") <= 1 and "win.__lab" not in code.replace("win.__labPresenter", "")


def test_changed_keys_are_the_presenters_edits():
    before = ui_pres.plain_values({"vec_text": "我吃了一个苹果", "elmo_gamma": 2.0, "fill_next": False,
                                   "att_words": ["苹", "果"], "model": object()})
    now = ui_pres.plain_values({"vec_text": "我吃了一个苹果！", "elmo_gamma": 2.0, "fill_next": True,
                                "att_words": ["苹"], "new_box": "x", "present_keys": {"press": {"id": "1"}},
                                ui_pres.HANDLED_KEY: "1"})
    assert "model" not in before and "present_keys" not in now and ui_pres.HANDLED_KEY not in now
    assert ui_pres.changed_keys(before, now) == ["att_words", "fill_next", "new_box", "vec_text"]
    assert ui_pres.changed_keys(now, now) == []


def test_what_the_end_of_a_run_tells():
    data = ui_pres.told_data(pres.BY_ID["objective"], "pretraining-objectives", 3, ["obj_gpt_sentence"], 7, "p-1",
                             "p-2", "objective")
    assert data["role"] == "told" and data["run"] == 7 and data["slide"] == "objective"
    assert data["handled"] == "p-1" and data["seen"] == "p-2"
    assert data["arrival"] == {"key": "obj_gpt_result", "token": "objective:3"}
    assert data["changed"] == ["obj_gpt_sentence"]
    assert data["drives"]["obj_gpt_sentence"] == "obj_gpt_result" and "obj_gpt_result" in data["results"]
    # off the scene list: the page top, no result
    assert ui_pres.told_data(None, "overview", 0, [], 1, None, None, None)["arrival"] == {"key": None, "token": ":0"}
    # a student's page: no arrival (only edits are placed: the first edit's result, not the page top)
    student = ui_pres.told_data(None, "fill-mask", 0, ["fill_sentence"], 1, None, None, None, presenting=False)
    assert student["arrival"] is None and student["drives"]["fill_sentence"] == "fill_topk"


def test_which_runs_end_by_telling():
    # the presenter view catches the clicker outside presentation mode: a press is sent again until a run's end
    # says it was handled, so a run there that changed nothing still tells (a press waited forever without it)
    assert ui_pres.wants_telling("presenter", [], presenting=False)
    assert ui_pres.wants_telling("overview", [], presenting=True)
    assert ui_pres.wants_telling("fill-mask", [], presenting=False)  # its inputs' listener comes with the element
    assert ui_pres.wants_telling("overview", ["lang"], presenting=False)
    assert not ui_pres.wants_telling("overview", [], presenting=False)
