"""Reference mode: a BERT-family model put in the local Hugging Face cache once is offered by the sidebar and
loads offline. The cache is a temporary one, laid out as huggingface_hub writes it, holding a tiny randomly
initialised BERT (tests/conftest.py), a GPT-2 config and a pickle-only BERT (neither offered)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import huggingface_hub.constants
import pytest
from streamlit.testing.v1 import AppTest

from conftest import build_tiny_bert
from core.models import hub_cache

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "0" * 40


def cache_repo(cache: Path, repo_id: str, source: Path) -> Path:
    """``source``'s files as the ``main`` snapshot of ``repo_id`` in the cache ``cache``."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT, encoding="utf-8")
    shutil.copytree(source, repo / "snapshots" / COMMIT)
    return repo


@pytest.fixture(scope="module")
def hub_cache_dir(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("hub")
    cache = work / "cache"
    cache_repo(cache, "lab-test/tiny-bert", build_tiny_bert(work / "tiny"))
    gpt = work / "gpt"
    gpt.mkdir()
    (gpt / "config.json").write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    (gpt / "model.safetensors").write_bytes(b"")
    cache_repo(cache, "lab-test/not-a-masked-lm", gpt)
    pickled = build_tiny_bert(work / "pickled")
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    cache_repo(cache, "lab-test/pickle-only", pickled)
    return cache


@pytest.fixture
def default_cache(hub_cache_dir, clean_model_cache, monkeypatch):
    """The temporary cache as this process's default HF cache, with no remembered scan."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache_dir))
    return hub_cache_dir


def test_only_safetensors_masked_lms_are_listed(hub_cache_dir, tmp_path):
    models = hub_cache.cached_masked_lms(hub_cache_dir)
    assert [(m.name, m.kind, m.available, m.num_layers) for m in models] == [("lab-test/tiny-bert", "bert", True, 3)]
    assert hub_cache.cached_masked_lms(tmp_path / "no-cache-here") == []


def test_the_sidebar_offers_cached_models(default_cache):
    def app():
        from ui.sidebar import render_sidebar

        render_sidebar()

    at = AppTest.from_function(app, default_timeout=60).run()
    assert not at.exception
    box = at.selectbox(key="_w_model")
    assert box.options[:2] == ["mini-bert-zh", "lab-test/tiny-bert"]
    box.select("lab-test/tiny-bert").run()
    assert at.session_state["bert_model"] == "lab-test/tiny-bert" and not at.exception


@pytest.mark.subprocess
def test_a_cached_model_loads_offline(hub_cache_dir):
    env = {**os.environ, "HF_HUB_CACHE": str(hub_cache_dir), "HF_HUB_OFFLINE": "1", "LAB_LANG": "en"}
    done = subprocess.run([sys.executable, "-m", "core", "fill-mask", "--model", "lab-test/tiny-bert", "我[MASK]"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["masks"][0]["candidates"]) == 5
