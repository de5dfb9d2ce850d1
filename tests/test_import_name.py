"""One import name per process (#52): the lab is `core` in a clone and `elmo_bert_lab` installed; a process that
imports it under both names is refused, whichever comes first; the CLI's usage line and the offline message name
commands that exist."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from core.guard.errors import LabError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def second_name(tmp_path_factory) -> Path:
    """A folder where the clone's core/ is importable as `elmo_bert_lab` too, as an editable install makes it."""
    folder = tmp_path_factory.mktemp("installed")
    (folder / "elmo_bert_lab").symlink_to(ROOT / "core", target_is_directory=True)
    return folder


def _python(code: str, folder: Path) -> subprocess.CompletedProcess:
    path = f"{ROOT}:{folder}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=folder,
                          env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}, timeout=120)


@pytest.mark.subprocess
@pytest.mark.parametrize(("first", "second"), [("core", "elmo_bert_lab"), ("elmo_bert_lab", "core")])
def test_a_process_never_holds_the_lab_under_two_names(second_name, first, second):
    alone = _python(f"import {first}.guard.errors; print({first}.guard.errors.LabError.__module__)", second_name)
    assert alone.returncode == 0 and alone.stdout.strip() == f"{first}.guard.errors"
    both = _python(f"import {first}\nimport {second}", second_name)
    assert both.returncode != 0
    assert f"already imported the ELMo→BERT Lab as `{first}`" in both.stderr


@pytest.mark.subprocess
@pytest.mark.parametrize("name", ["core", "elmo_bert_lab"])
def test_the_usage_line_names_the_command_that_was_run(second_name, name):
    run = subprocess.run([sys.executable, "-m", name, "--help"], capture_output=True, text=True, cwd=second_name,
                         env={"PYTHONPATH": f"{ROOT}:{second_name}", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith(f"usage: python -m {name} ")


def test_the_offline_message_names_a_command_the_pinned_hub_client_has():
    scripts = {entry.name for entry in importlib.metadata.entry_points(group="console_scripts")}
    assert "hf" in scripts  # huggingface_hub's CLI; `huggingface-cli` is gone from the pinned version
    assert "huggingface-cli" not in scripts
    for lang in ("en", "zh"):
        text = LabError("hub_offline", name="bert-base-chinese").message(lang)
        assert "`hf download bert-base-chinese`" in text and "huggingface-cli" not in text
