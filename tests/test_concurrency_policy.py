"""core.runtime.concurrency: one model serves several sessions' forward passes at once, its tokenizer one call at a
time, and results under concurrency are those computed alone."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from core.guard.errors import LabError
from core.models import cache, loaders
from core.models.cache import load_encoder
from core.runtime import concurrency
from core.runtime.concurrency import ModelGate, PageRuns, inference_slots
from ui import cache as ui_cache


def test_forward_passes_of_one_model_overlap_up_to_its_slots():
    gate = ModelGate(slots=2)
    inside = threading.Barrier(2, timeout=10)  # both must be inside at once: a per-model lock would break it

    def forward():
        with gate.forward():
            inside.wait()

    threads = [threading.Thread(target=forward) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not inside.broken


def test_a_third_forward_pass_waits_for_a_free_slot():
    gate = ModelGate(slots=2)
    entered = threading.Event()

    def third():
        with gate.forward():
            entered.set()

    with gate.forward():
        with gate.forward():
            waiting = threading.Thread(target=third)
            waiting.start()
            assert not entered.wait(0.5)  # both slots taken (a slow box could only make this pass wrongly)
        assert entered.wait(10)  # one slot free: it goes in
    waiting.join(10)


def test_slots_follow_the_environment(monkeypatch):
    monkeypatch.setenv("LAB_INFERENCE_SLOTS", "3")
    assert inference_slots() == 3 and ModelGate().slots == 3


def started(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_page_runs_take_turns_and_a_fragment_inside_a_run_takes_no_second_slot():
    runs = PageRuns(slots=1)
    entered = threading.Event()

    def other_session():
        with runs.run():
            entered.set()

    with runs.run():
        with runs.run():  # a fragment drawn inside the full run: re-entrant, no deadlock
            waiting = started(other_session)
            assert not entered.wait(0.5)  # the one slot is taken
        assert not entered.wait(0.2)  # still inside the outer run
    assert entered.wait(10)
    waiting.join(10)


def test_a_run_steps_aside_while_it_waits_and_queues_again_after():
    runs = PageRuns(slots=1)
    other_in, other_may_leave, back_in = threading.Event(), threading.Event(), threading.Event()

    def other_session():
        with runs.run():
            other_in.set()
            other_may_leave.wait(10)

    def slow_wait():
        with runs.run():
            with runs.step_aside():
                assert not runs.held()
                started(other_session)
                assert other_in.wait(10)  # the class goes on while this run waits
            back_in.set()
            assert runs.held()

    thread = started(slow_wait)
    assert other_in.wait(10)
    assert not back_in.wait(0.5)  # it queues behind the run that went in meanwhile
    other_may_leave.set()
    assert back_in.wait(10)
    thread.join(10)
    with runs.step_aside():  # outside a run: nothing to give back
        assert not runs.held()


def test_a_model_load_gives_the_page_run_slot_back(monkeypatch):
    """While one session's run loads a model (a hub model: minutes), the other sessions' page runs go on."""
    loading, load_may_end, other_ran = threading.Event(), threading.Event(), threading.Event()

    def slow_load(key):
        loading.set()
        load_may_end.wait(10)
        raise LabError("unknown_model", name=key)

    monkeypatch.setattr(loaders, "load", slow_load)
    runs = concurrency.PAGE_RUNS  # the app's own, which ui.cache steps aside from

    def first_session():
        with runs.run(), pytest.raises(LabError):
            ui_cache.model("some-org/slow-model")  # what a page asks for first

    def second_session():
        with runs.run():
            other_ran.set()

    first = started(first_session)
    assert loading.wait(10)
    started(second_session)
    assert other_ran.wait(runs.slots * 10)  # went in while the first run waited for its model
    load_may_end.set()
    first.join(10)
    cache.clear()


@pytest.mark.realmodel
@pytest.mark.parametrize("name", ["mini-bert-zh", "mini-elmo-zh"])
def test_concurrent_sessions_get_what_each_would_get_alone(name):
    encoder = load_encoder(name)
    sentences = [f"{who}{when}吃了一个苹果" for who in ("小明", "老师", "妈妈", "邻居") for when in ("昨天", "今天")]
    alone = [encoder.encode([s])[0].layers for s in sentences]
    with ThreadPoolExecutor(max_workers=8) as pool:  # tokenizer calls and forward passes interleave
        together = list(pool.map(lambda s: encoder.encode([s])[0].layers, sentences * 3))
    for i, layers in enumerate(together):
        np.testing.assert_allclose(layers, alone[i % len(sentences)], rtol=1e-5, atol=1e-5)
