"""How the sessions of one server share its CPU: the one place that decides it.

Streamlit runs every session's script in a thread of one process. Measured on the 2-core lab machine
(``python -m benchmarks.classroom_load``, 30 sessions each typing its own sentence; ``py-spy`` on the
server), page runs are bound by Python work under the GIL (building and serialising figures, widgets),
not by the models' forward passes, which took a few percent of the samples. Hence:

- each model call computes on ``torch_threads()`` intra-op threads (1 unless ``LAB_TORCH_THREADS``
  says otherwise), so two sessions compute side by side instead of waiting for each other's cores;
- numpy's and scipy's BLAS (OpenBLAS) compute on ``blas_threads()`` threads (1 unless ``LAB_BLAS_THREADS`` says
  otherwise): the pages' matrices are small (a PCA of a hundred points), and OpenBLAS's default two threads spin
  waiting for each other on a busy 2-core box; one 110 × 256 SVD took 160 ms of CPU with two threads under load
  and 6 ms with one (issue #50);
- up to ``inference_slots()`` forward passes of one model run at once (one per core unless
  ``LAB_INFERENCE_SLOTS`` says otherwise): an eval-mode forward pass is thread-safe and releases the GIL
  while it computes, so a per-model lock would only queue sessions behind each other;
- calls of one model's tokenizer take turns: a fast (Rust) tokenizer is borrowed mutably while a call
  sets its padding and truncation, and a concurrent call fails with "Already borrowed";
- the page runs themselves take turns (:func:`page_run`): one at a time unless ``LAB_PAGE_RUN_SLOTS`` says
  otherwise, a run stepping aside while it waits for a model's load or a heavy job (:func:`step_aside`);
- a class larger than one process serves well runs several processes behind a reverse proxy with sticky
  sessions (``deploy/``, docs/classroom.md "A lecture hall").
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager


def torch_threads() -> int:
    return max(1, int(os.environ.get("LAB_TORCH_THREADS", "1")))


def inference_slots() -> int:
    return max(1, int(os.environ.get("LAB_INFERENCE_SLOTS", str(os.cpu_count() or 1))))


def page_run_slots() -> int:
    return max(1, int(os.environ.get("LAB_PAGE_RUN_SLOTS", "1")))


class PageRuns:
    """Page runs of one process in turn, ``slots`` at a time, the others waiting in order. The runs are bound by
    Python under the GIL, so thirty run side by side take as long as thirty in turn, plus the GIL's switching,
    and all finish near the end; in turn, the first finish first (classroom benchmark, issue #50)."""

    def __init__(self, slots: int | None = None):
        self.slots = slots or page_run_slots()
        self._free = threading.BoundedSemaphore(self.slots)
        self._holding = threading.local()  # .slot: the calling thread holds one

    def held(self) -> bool:
        return getattr(self._holding, "slot", False)

    @contextmanager
    def run(self) -> Iterator[None]:
        """One slot for the calling thread's run; re-entrant (a fragment drawn inside a full run takes no
        second slot)."""
        if self.held():
            yield
            return
        with self._free:
            self._holding.slot = True
            try:
                yield
            finally:
                self._holding.slot = False

    @contextmanager
    def step_aside(self) -> Iterator[None]:
        """The slot given back while the calling run waits for something slow that is not its Python (a model
        being loaded, a heavy job): the class goes on meanwhile; the run queues again afterwards."""
        if not self.held():
            yield
            return
        self._holding.slot = False
        self._free.release()
        try:
            yield
        finally:
            self._free.acquire()
            self._holding.slot = True


PAGE_RUNS = PageRuns()  # the app's: every page run and fragment rerun of this server process
page_run = PAGE_RUNS.run
step_aside = PAGE_RUNS.step_aside


def blas_threads() -> int:
    return max(1, int(os.environ.get("LAB_BLAS_THREADS", "1")))


# The modules whose BLAS libraries were limited already (numpy loads one OpenBLAS, scipy another).
_BLAS_LIMITED: set[str] = set()
_BLAS_MODULES = ("numpy", "scipy.linalg", "sklearn", "torch")


def limit_blas() -> None:
    """Limit every loaded BLAS library to ``blas_threads()`` threads, process-wide (OpenBLAS's setting is
    global), once per newly loaded library: a check of ``sys.modules`` on later calls."""
    loaded = {name for name in _BLAS_MODULES if name in sys.modules}
    if loaded <= _BLAS_LIMITED:
        return
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    threadpool_limits(limits=blas_threads(), user_api="blas")
    _BLAS_LIMITED.update(loaded)


def configure_thread() -> None:
    """Give the calling thread the intra-op thread count (torch's setting is per thread: Streamlit starts a
    new thread for each script run, so the app calls this on every run; it is cheap), and the BLAS libraries
    loaded so far their thread count (:func:`limit_blas`). It does not import torch (seconds): before torch is
    imported there is nothing to set, and the app imports it (``ui.cache``) before calling this on a page with a
    model."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(torch_threads())
    limit_blas()


class ModelGate:
    """What one loaded model lets run at once: ``slots`` forward passes, one tokenizer call."""

    def __init__(self, slots: int | None = None):
        self.slots = slots or inference_slots()
        self._forward = threading.BoundedSemaphore(self.slots)
        self._tokenizer = threading.Lock()

    @contextmanager
    def forward(self) -> Iterator[None]:
        with self._forward:
            yield

    @contextmanager
    def tokenize(self) -> Iterator[None]:
        with self._tokenizer:
            yield


HEAVY_JOBS: set = set()  # every core function a browser control may start that runs for minutes (see ``heavy``)


def heavy(func):
    """Marks ``func`` as a job that trains or recomputes for minutes: the app starts it only through its one
    gate (``ui.training_gate.run``: off unless the presenter allows it, one run per process), and
    ``tests/test_security.py`` checks that no page calls it any other way."""
    HEAVY_JOBS.add(func)
    return func


def release_memory() -> None:
    """Give the memory of a finished job back to the operating system: the collector frees its objects, and
    glibc's ``malloc_trim`` returns the freed arenas, which glibc otherwise keeps (a quick evidence recompute:
    RSS 698 MB before, 1,071 MB at its peak, 1,002 MB after it and a collection, 815 MB after this)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing more to give back
        ctypes.CDLL("libc.so.6").malloc_trim(0)
