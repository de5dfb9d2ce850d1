"""core.runtime.concurrency: one model serves several sessions' forward passes at once, its tokenizer one call at a
time, and results under concurrency are those computed alone."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from core.models.cache import load_encoder
from core.runtime.concurrency import ModelGate, inference_slots


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
