"""The model cache (core.models.cache): one entry per model whatever the spelling, a bound on the hub / directory
models kept, a lock per model (a slow load blocks only its own model) and failed loads remembered for a
while instead of retried on every rerun; open sessions do not keep evicted models in memory, a hub that
never answers fails after a deadline, the failure bookkeeping is bounded. Loads are observed through the
loader it calls (``model_loads``) and its public bookkeeping, never through how long something took."""
from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from core.guard.errors import LabError
from core.models import cache, catalogue, hub, loaders

ROOT = Path(__file__).resolve().parent.parent


def wait_until(condition, timeout_s: float = 30) -> bool:
    """Whether ``condition()`` came true within ``timeout_s``: a guard against a hang, not a measurement."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_spellings_of_one_directory_share_one_entry(clean_model_cache, model_loads, tiny_bert_dir):
    base = str(tiny_bert_dir)
    spellings = [base, base + "/", base + "//", base.replace("/", "//"), base + "/.",
                 base + "/../" + tiny_bert_dir.name]
    encoders = {id(cache.load_encoder(name)) for name in spellings}
    assert len(encoders) == 1 and model_loads == {str(tiny_bert_dir.resolve()): 1}
    assert cache.bookkeeping().loaded == (str(tiny_bert_dir.resolve()),)


@pytest.mark.realmodel
def test_embedded_model_by_path_is_the_embedded_model(clean_model_cache, model_loads):
    if not next(m for m in catalogue.list_models() if m.name == catalogue.DEFAULT_STATIC).available:
        pytest.skip("word2vec-zh is not trained here")
    first = cache.load_encoder(catalogue.DEFAULT_STATIC)
    assert cache.load_encoder(str(catalogue.MODELS_DIR / catalogue.DEFAULT_STATIC) + "/") is first
    assert model_loads == {catalogue.DEFAULT_STATIC: 1}


def test_cache_keeps_a_bounded_number_of_other_models(clean_model_cache, model_loads, tiny_bert_dir, tmp_path):
    copies = [shutil.copytree(tiny_bert_dir, tmp_path / f"copy{i}") for i in range(cache.MAX_OTHER_MODELS + 1)]
    for directory in copies:
        cache.load_encoder(str(directory))
    keys = [str(d.resolve()) for d in copies]
    cache.load_encoder(str(copies[1]))  # a hit (no load) makes it the most recent
    cache.load_encoder(str(copies[0]))  # the least recently used one went: loaded again, now copies[2] is the oldest
    cache.load_encoder(str(copies[1]))  # still kept
    cache.load_encoder(str(copies[2]))  # gone: loaded again
    assert model_loads == {keys[0]: 2, keys[1]: 1, keys[2]: 2}


def test_a_slow_load_blocks_only_its_own_model(clean_model_cache, monkeypatch):
    release, started, calls = threading.Event(), threading.Event(), []

    def fake_load(key):
        calls.append(key)
        if key == "slow-org/slow":
            started.set()
            release.wait(30)
            raise LabError("hub_offline", name=key)
        return object()

    def load_in_thread(name: str, errors: list) -> threading.Thread:
        def load():
            try:
                cache.load_encoder(name)
            except LabError as err:
                errors.append(err.code)

        thread = threading.Thread(target=load)
        thread.start()
        return thread

    monkeypatch.setattr(loaders, "load", fake_load)
    errors: list[str] = []
    slow = load_in_thread("slow-org/slow", errors)
    assert started.wait(30)
    fast = load_in_thread("fast-org/fast", errors)  # another model, while the slow one is still loading
    fast.join(30)
    assert not fast.is_alive() and not release.is_set() and calls == ["slow-org/slow", "fast-org/fast"]
    waiter = load_in_thread("slow-org/slow", errors)  # the same model: waits for the one load and gets its failure
    assert wait_until(lambda: cache.bookkeeping().loading.get("slow-org/slow") == 2)  # queued on the slow load
    release.set()
    slow.join(30)
    waiter.join(30)
    assert errors == ["hub_offline", "hub_offline"] and calls.count("slow-org/slow") == 1  # no second attempt

    with pytest.raises(LabError) as info:  # the failure is remembered: no retry on the next rerun
        cache.load_encoder("slow-org/slow")
    assert info.value.code == "hub_offline" and calls.count("slow-org/slow") == 1

    monkeypatch.setattr(cache, "FAILURE_TTL_S", 0.0)  # … for FAILURE_TTL_S only
    with pytest.raises(LabError):
        cache.load_encoder("slow-org/slow")
    assert calls.count("slow-org/slow") == 2


def test_hub_probe_answers_no_and_remembers_it(clean_model_cache, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    connect, attempts = hub.socket.create_connection, []
    monkeypatch.setattr(hub.socket, "create_connection",
                        lambda address, **kwargs: attempts.append(address) or connect(address, **kwargs))
    assert hub.hub_reachable(timeout_s=1.0) is False and attempts == [("127.0.0.1", 9)]
    assert hub.hub_reachable(timeout_s=1.0) is False and len(attempts) == 1  # remembered: no second probe


def test_a_call_past_its_deadline_is_given_up():
    never = threading.Event()
    assert hub.within(0.1, never.wait) == (False, None)  # the probe and hub calls go through this
    never.set()  # frees the abandoned thread
    assert hub.within(30, lambda: 42) == (True, 42)
    with pytest.raises(ZeroDivisionError):  # the call's exception reaches the caller
        hub.within(30, lambda: 1 / 0)


# ---- bounded memory, hub deadlines, bounded bookkeeping ------------------------------------------------------
def live_directory_encoders() -> list[str]:
    """The names of the encoder objects alive in this process, other than the embedded models (after a
    collection; names only: a list of the objects would keep them alive)."""
    import gc

    from core.models.encoders import Encoder

    gc.collect()
    return sorted(o.name for o in gc.get_objects()
                  if issubclass(type(o), Encoder) and o.name not in catalogue.EMBEDDED)


def test_open_sessions_do_not_keep_evicted_models_alive(clean_model_cache, tiny_bert_dir, tmp_path):
    """Every session keeps its last run's page globals (its widget callbacks reach them): the model it used
    must not stay in memory once the cache has dropped it."""
    from apptest_support import assert_no_exception, page_app

    directories = [shutil.copytree(tiny_bert_dir, tmp_path / f"m{i}") for i in range(cache.MAX_OTHER_MODELS + 3)]
    sessions = []
    for directory in directories:
        at = page_app(str(ROOT / "app_pages" / "fill_mask" / "page.py"), str(directory))
        at.run()
        assert_no_exception(at)
        assert at.session_state["fill_sentence"]  # the page ran with its model
        sessions.append(at)  # the tab stays open
    mine = {str(d.resolve()) for d in directories}  # (a session-wide fixture may hold the tiny BERT itself)
    live = [name for name in live_directory_encoders() if name in mine]
    assert len(live) <= cache.MAX_OTHER_MODELS, live
    assert set(live) == set(cache.bookkeeping().loaded)
    sessions[0].run()  # an old session runs again: its model is loaded again, nothing breaks
    assert_no_exception(sessions[0])
    assert len([name for name in live_directory_encoders() if name in mine]) <= cache.MAX_OTHER_MODELS


def test_model_ref_follows_the_cache(clean_model_cache, model_loads, tiny_bert_dir, tmp_path):
    first, *others = [shutil.copytree(tiny_bert_dir, tmp_path / f"r{i}")
                      for i in range(cache.MAX_OTHER_MODELS + 1)]
    ref = cache.load_ref(str(first))
    layers = ref.encoder().layer_names
    for directory in others:  # first is evicted and, held by nobody but the ref, freed
        cache.load_encoder(str(directory))
    assert str(first.resolve()) not in live_directory_encoders()
    assert ref.encoder().layer_names == layers
    assert ref.encoder().encode(["我吃了一个苹果"])[0].layers.shape[0] == len(layers)
    assert model_loads[str(first.resolve())] == 2  # loaded again on use
    with pytest.raises(AttributeError):  # the handle is typed: the encoder's attributes are the encoder's
        ref.layer_names  # noqa: B018


def test_a_model_handle_is_one_key_for_every_spelling_and_caches_share_it(clean_model_cache, model_loads,
                                                                          tiny_bert_dir):
    """Pages pass models, not names: the handle is normalised once by the cache, hashable, equal for two
    spellings of one directory, and ui.cache's computations key on it (one entry, one computation)."""
    from ui import cache as ui_cache

    plain, slashed = cache.load_ref(str(tiny_bert_dir)), cache.load_ref(str(tiny_bert_dir) + "//")
    assert plain == slashed and hash(plain) == hash(slashed) and plain.key == str(tiny_bert_dir.resolve())
    assert slashed.name == str(tiny_bert_dir) + "//"  # messages name the model as the user typed it
    calls = []

    def tokens_of(encoder, text):
        calls.append(text)
        return encoder.tokens(text)

    text = "我吃了一个苹果"
    assert ui_cache.model_call(tokens_of, plain, text) == ui_cache.model_call(tokens_of, slashed, text)
    assert calls == [text]
    assert model_loads[plain.key] == 1


def test_failing_names_leave_no_bookkeeping_behind(clean_model_cache, monkeypatch):
    """A class typing one wrong name after another: the locks go when their load is over, the failures are
    bounded and expire."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # each load fails at once: not in the local cache
    monkeypatch.setattr(cache, "MAX_FAILURES", 20)
    clock = SimpleNamespace(now=1000.0)  # the cache's clock, moved by the test instead of waited for
    monkeypatch.setattr(cache, "time", SimpleNamespace(monotonic=lambda: clock.now))
    for i in range(60):
        with pytest.raises(LabError):
            cache.load_encoder(f"no-org/no-model-{i}")
    assert cache.bookkeeping().loading == {}
    assert cache.bookkeeping().failed == tuple(f"no-org/no-model-{i}" for i in range(40, 60))  # the newest 20
    clock.now += hub.FAILURE_TTL_S
    with pytest.raises(LabError):
        cache.load_encoder("no-org/one-more")
    assert cache.bookkeeping().failed == ("no-org/one-more",)  # the expired ones went


def test_a_hub_that_never_answers_fails_after_the_deadline(clean_model_cache, silent_hub, monkeypatch):
    _, accepted = silent_hub
    monkeypatch.setenv(hub.HUB_TIMEOUT_ENV, "2")
    from core.models import transformers_loading

    from_hub, hub_calls = transformers_loading.from_hub, []
    monkeypatch.setattr(transformers_loading, "from_hub",
                        lambda name, call: hub_calls.append(name) or from_hub(name, call))
    failures = []

    def visitor():
        with pytest.raises(LabError) as info:
            cache.load_encoder("silent-org/silent-model")
        failures.append(info.value.code)

    visitors = [threading.Thread(target=visitor) for _ in range(3)]  # the first loads, the others wait on its lock
    for thread in visitors:
        thread.start()
    for thread in visitors:
        thread.join(60)  # the 2 s deadline, not forever
    assert failures == ["hub_timeout"] * 3 and accepted, (failures, len(accepted))
    assert hub_calls == ["silent-org/silent-model"]  # one attempt: the waiting visitors got its failure
    with pytest.raises(LabError) as info:  # the failure is cached: no new attempt, no wait
        cache.load_encoder("silent-org/silent-model")
    assert info.value.code == "hub_timeout" and len(hub_calls) == 1
    assert "2" in info.value.message("zh") and cache.bookkeeping().loading == {}


def test_load_typed_gives_the_kind_asked_for_or_says_which_it_is(clean_model_cache, models_dir):
    from core.models.encoders import ElmoEncoder, StaticEncoder

    static = cache.load_typed(catalogue.DEFAULT_STATIC, StaticEncoder)
    assert static is cache.load_encoder(catalogue.DEFAULT_STATIC)
    with pytest.raises(TypeError, match="word2vec-zh is a StaticEncoder, not a ElmoEncoder"):
        cache.load_typed(catalogue.DEFAULT_STATIC, ElmoEncoder)


def test_clear_forgets_loaded_models(clean_model_cache, models_dir, model_loads):
    first = cache.load_encoder(catalogue.DEFAULT_STATIC)
    cache.clear()
    assert cache.load_encoder(catalogue.DEFAULT_STATIC) is not first and model_loads[catalogue.DEFAULT_STATIC] == 2
