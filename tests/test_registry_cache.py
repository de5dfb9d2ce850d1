"""The model registry's cache (issue #17): one entry per model whatever the spelling, a bound on the
hub / directory models kept, a lock per model (a slow load blocks only its own model) and failed loads
remembered for a while instead of retried on every rerun."""
from __future__ import annotations

import shutil
import threading
import time

import pytest

from core import registry
from core.errors import LabError


@pytest.fixture
def clean_registry(monkeypatch):
    """The registry's caches emptied for the test and restored afterwards."""
    for name in ("_cache", "_failures", "_load_locks", "load_counts"):
        monkeypatch.setattr(registry, name, type(getattr(registry, name))())


def test_spellings_of_one_directory_share_one_entry(clean_registry, tiny_bert_dir):
    base = str(tiny_bert_dir)
    spellings = [base, base + "/", base + "//", base.replace("/", "//"), base + "/.", base + "/../" + tiny_bert_dir.name]
    encoders = {id(registry.load_encoder(name)) for name in spellings}
    assert len(encoders) == 1 and registry.load_counts == {str(tiny_bert_dir.resolve()): 1}
    assert list(registry._cache) == [str(tiny_bert_dir.resolve())]


def test_embedded_model_by_path_is_the_embedded_model(clean_registry):
    if not next(m for m in registry.list_models() if m.name == registry.DEFAULT_STATIC).available:
        pytest.skip("word2vec-zh is not trained here")
    first = registry.load_encoder(registry.DEFAULT_STATIC)
    assert registry.load_encoder(str(registry.MODELS_DIR / registry.DEFAULT_STATIC) + "/") is first
    assert registry.load_counts == {registry.DEFAULT_STATIC: 1}


def test_cache_keeps_a_bounded_number_of_other_models(clean_registry, tiny_bert_dir, tmp_path):
    copies = [shutil.copytree(tiny_bert_dir, tmp_path / f"copy{i}") for i in range(registry.MAX_OTHER_MODELS + 1)]
    for directory in copies:
        registry.load_encoder(str(directory))
    kept = [str(d.resolve()) for d in copies[1:]]
    assert list(registry._cache) == kept  # the least recently used one went
    registry.load_encoder(str(copies[1]))  # a hit makes it the most recent
    registry.load_encoder(str(copies[0]))  # loaded again: now copies[2] is the oldest
    assert list(registry._cache) == [kept[0], str(copies[0].resolve())]
    assert registry.load_counts[str(copies[0].resolve())] == 2


def test_a_slow_load_blocks_only_its_own_model(clean_registry, monkeypatch):
    release, started, calls = threading.Event(), threading.Event(), []

    def fake_load(key):
        calls.append(key)
        if key == "slow-org/slow":
            started.set()
            release.wait(30)
            raise LabError("hub_offline", name=key)
        return object()

    monkeypatch.setattr(registry, "_load", fake_load)
    errors = []
    slow = threading.Thread(target=lambda: errors.append(pytest.raises(LabError, registry.load_encoder, "slow-org/slow")))
    slow.start()
    assert started.wait(10)
    t0 = time.monotonic()
    registry.load_encoder("fast-org/fast")  # another model, while the slow one is still loading
    assert time.monotonic() - t0 < 1.0
    waiter = threading.Thread(target=lambda: errors.append(pytest.raises(LabError, registry.load_encoder, "slow-org/slow")))
    waiter.start()  # the same model: waits for the one load and gets its failure, no second attempt
    time.sleep(0.2)
    release.set()
    slow.join(10)
    waiter.join(10)
    assert len(errors) == 2 and calls.count("slow-org/slow") == 1

    t0 = time.monotonic()
    with pytest.raises(LabError) as info:  # the failure is remembered: no retry on the next rerun
        registry.load_encoder("slow-org/slow")
    assert info.value.code == "hub_offline" and time.monotonic() - t0 < 0.5 and calls.count("slow-org/slow") == 1

    monkeypatch.setattr(registry, "FAILURE_TTL_S", 0.0)  # … for FAILURE_TTL_S only
    release.set()
    with pytest.raises(LabError):
        registry.load_encoder("slow-org/slow")
    assert calls.count("slow-org/slow") == 2


def test_hub_probe_gives_up_quickly(monkeypatch):
    monkeypatch.setattr(registry, "_hub_probe", [])
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    t0 = time.monotonic()
    assert registry.hub_reachable(timeout_s=1.0) is False
    assert time.monotonic() - t0 < 2.0
