"""Smoke tests: the app and every page run without an exception and without an error or warning that a run on good
input must not show; the language switch works. The pages run on the tiny stand-ins of the embedded models (the app's
handling: fast tier); every page also runs on the shipped models (realmodel tier)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import unexpected_messages
from ui import PAGES

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240  # generous: CI machines have 2 cores and the first run loads three models
pytestmark = pytest.mark.usefixtures("tiny_embedded")

# the warnings a page's default run may show, as verdicts computed from the model's numbers: a random model answers
# wrongly and unsurely, and the transfer page's results were computed on other weights than the stand-ins'
RANDOM_MODEL_VERDICTS = ("fill.conf.unsure", "fill.conf.guess", "fill.conf.wrong", "fill.answer_miss", "fill.nsp_wrong",
                         "transfer.results.stale")
# mini-bert-zh is unsure of the first sentence
SHIPPED_MODEL_VERDICTS = ("fill.conf.unsure", "fill.conf.guess", "fill.conf.wrong")


def app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    assert not unexpected_messages(at, RANDOM_MODEL_VERDICTS)
    return at


def test_app_runs_home_by_default():
    at = app()
    assert [x.value for x in at.title] == ["从静态词向量到 ELMo 再到 BERT"]
    assert at.session_state["lang"] == "zh"
    assert at.query_params["lang"] == "zh"


@pytest.mark.parametrize("setting, threads", [(None, 1), ("3", 3)])
def test_app_sets_torch_threads_at_startup(monkeypatch, setting, threads):
    """One intra-op thread per model call unless LAB_TORCH_THREADS says otherwise: set by app.py, not as a
    side effect of importing a module."""
    import torch

    calls = []
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    if setting is None:
        monkeypatch.delenv("LAB_TORCH_THREADS", raising=False)
    else:
        monkeypatch.setenv("LAB_TORCH_THREADS", setting)
    app()
    assert calls == [threads]


# The app in a fresh interpreter: which libraries its first page imported, then torch's thread count after a page
# with a model.
FIRST_PAGE = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=240)
at.run()
home = {"titles": [t.value for t in at.title], "exceptions": len(at.exception),
        "heavy": sorted({"torch", "transformers", "sklearn"} & set(sys.modules))}
at.switch_page(sys.argv[2]).run()
import torch
print(json.dumps({**home, "page_exceptions": len(at.exception), "threads": torch.get_num_threads()}))
"""


@pytest.mark.subprocess
def test_first_page_imports_no_model_library_and_torch_still_gets_the_thread_count(monkeypatch):
    """Start-up: the home page needs no model, so the app's cold start does not wait for torch, transformers or
    scikit-learn (seconds of imports); the first page with a model imports them and computes on
    LAB_TORCH_THREADS."""
    monkeypatch.setenv("LAB_TORCH_THREADS", "3")
    fill_mask = next(spec.path for spec in PAGES if spec.url_path == "fill-mask")
    done = subprocess.run([sys.executable, "-c", FIRST_PAGE, str(ROOT / "app.py"), fill_mask], cwd=ROOT,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["titles"] == ["从静态词向量到 ELMo 再到 BERT"] and result["exceptions"] == 0
    assert result["heavy"] == []
    assert result["page_exceptions"] == 0 and result["threads"] == 3


@pytest.mark.subprocess
def test_serve_py_imports_no_model_library_before_the_server_listens():
    """serve.py's module is run before the server listens; torch and transformers are imported by its warm-up
    thread (tests/e2e/test_serve.py checks that the models are then loaded), so the home page is served meanwhile."""
    script = ("import runpy, sys; runpy.run_path(sys.argv[1]); "
              "print(sorted({'torch', 'transformers'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", script, str(ROOT / "serve.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "[]"


def test_switch_to_english_changes_title():
    at = app()
    zh_title = at.title[0].value
    at.sidebar.radio[0].set_value("en").run()
    assert not unexpected_messages(at, RANDOM_MODEL_VERDICTS)
    assert at.session_state["lang"] == "en"
    assert at.title[0].value != zh_title
    assert at.title[0].value == "From static word vectors to ELMo to BERT"
    assert at.query_params["lang"] == "en"


@pytest.mark.parametrize("models", ["tiny", pytest.param("shipped", marks=pytest.mark.realmodel)])
@pytest.mark.parametrize("path", [spec.path for spec in PAGES])
def test_each_page_through_app(path, models, request):
    if models == "shipped":
        request.getfixturevalue("shipped_models")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    at.switch_page(path).run()
    assert not unexpected_messages(at, SHIPPED_MODEL_VERDICTS if models == "shipped" else RANDOM_MODEL_VERDICTS)
    assert at.title, f"{path} shows no title"
    for chart in at.get("plotly_chart"):  # every figure goes through ui.page.chart: as built, as downloaded
        assert chart.proto.theme == "", f"{path}: a chart in Streamlit's theme"
        assert json.loads(chart.proto.config)["displaylogo"] is False


QUESTION_PAGES = ("static_vs_contextual", "objectives", "elmo_weights", "fill_mask", "attention", "transfer")


@pytest.mark.parametrize("path", [spec.path for spec in PAGES])
def test_each_page_file_alone(path):
    """Each page runs by itself; a student at home reads a question page's question and its plain answer first,
    and the projector leaves them to the lecturer (issue #44)."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    at.session_state["lang"] = "zh"
    at.run()
    assert not unexpected_messages(at, RANDOM_MODEL_VERDICTS)
    if Path(path).parent.name not in QUESTION_PAGES:
        return
    first = at.main.children[1]  # after the title
    assert first.type == "flex_container" and "**问题**" in first.children[0].value, path
    at.session_state["present"] = True
    at.run()
    assert not any("**问题**" in m.value for m in at.markdown), path


def test_url_state_is_read_and_choices_survive_page_switch():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = "en"
    at.query_params["present"] = "1"
    at.query_params["model"] = "some-org/some-bert"
    at.run()
    assert not at.exception
    assert at.session_state["lang"] == "en"
    assert at.session_state["present"] is True
    assert at.session_state["bert_model"] == "some-org/some-bert"
    at.switch_page(PAGES[3].path).run()
    assert not at.exception
    assert at.session_state["lang"] == "en" and at.session_state["bert_model"] == "some-org/some-bert"
    assert at.query_params["model"] == "some-org/some-bert" and at.query_params["present"] == "1"


@pytest.mark.parametrize("path, key, typed", [
    ("app_pages/fill_mask/page.py", "fill_sentence", "他每天早上都喝一杯[MASK]奶。"),
    ("app_pages/fill_mask/page.py", "fill_nsp_a", "今天下雨了。"),  # kept out of the URL: only the session keeps it
    ("app_pages/fill_mask/page.py", "fill_cands", "牛, 羊"),
    ("app_pages/attention/page.py", "att_sentence", "老师在黑板上写字"),
    ("app_pages/objectives/page.py", "obj_sentence", "下雨了记得带伞"),
])
def test_what_a_student_typed_is_there_after_visiting_another_page(path, key, typed):
    """Streamlit keeps the page's widget values (persist_state="session"): nothing typed is lost on a page switch,
    also where the URL does not carry it."""
    at = app()
    at.switch_page(path).run()
    at.text_input(key=key).set_value(typed).run()
    at.switch_page(PAGES[0].path).run()
    at.switch_page(path).run()
    assert not unexpected_messages(at, RANDOM_MODEL_VERDICTS)
    assert at.text_input(key=key).value == typed


def test_an_error_a_page_did_not_catch_is_a_message_where_the_page_was(monkeypatch):
    """app.py's one outer boundary: an unexpected failure in a page is a translated line, never a traceback."""
    from core.views import status

    def broken(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(status, "transfer_results_summary", broken)  # the overview calls it unguarded
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert any("RuntimeError" in e.value and "disk on fire" not in e.value for e in at.error)
    assert at.title  # the page's title and what came before the failure stay
