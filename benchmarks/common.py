"""What every benchmark of ``python -m benchmarks.run`` shares: the configuration, the result objects,
interleaved timing, the ratio-over-a-net-time decision, the test sentences and model loading.

A result is ``{"name", "value", "limit", "ratio_to_limit", "pass", "target", "unit", "skipped",
"details"}``. Besides a measured figure it can be skipped (cannot run here: ``pass`` None), an error
(ran but broke: ``pass`` False) or inconclusive (ran, but the noise of the measurement exceeds its
signal: ``value`` and ``pass`` None, the numbers in ``reason`` and ``details``).
"""
from __future__ import annotations

import json
import os
import random
import socket
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO

ROOT = Path(__file__).resolve().parent.parent
WORD = "苹果"


@dataclass
class Config:
    quick: bool = False
    bert_model: str = DEFAULT_BERT
    elmo_model: str = DEFAULT_ELMO
    fillmask_reps: int = 200
    embed_sentences: int = 2000
    embed_reps: int = 3
    embed_warmup: bool = True  # one untimed 1-sentence CLI run first (warms the page cache)
    batch_size: int = 32
    slider_sentences: int = 20
    slider_moves: int = 200
    coldstart_runs: int = 3
    coldstart_timeout: float = 120.0
    chromium: str = "/usr/bin/chromium"
    threads: int | None = None  # torch threads here and in subprocesses (None: torch's default)
    only: tuple[str, ...] | None = None  # benchmark keys to run (None: all)
    extra: dict = field(default_factory=dict)

    @classmethod
    def for_mode(cls, quick: bool, **overrides) -> Config:
        base = cls(quick=quick)
        if quick:
            base.fillmask_reps, base.embed_sentences, base.slider_moves, base.coldstart_runs = 40, 200, 50, 1
        for key, value in overrides.items():
            if value is not None:
                setattr(base, key, value)
        return base


# ---- results ---------------------------------------------------------------------------------------

def make_result(name: str, value: float, limit: float, *, higher_is_better: bool = False, unit: str = "",
                details: dict | None = None) -> dict:
    """A measured figure; ratio_to_limit = value / limit (None when the limit is 0)."""
    if limit:
        ratio = round(value / limit, 4)
    else:
        ratio = 0.0 if value == 0 else None
    passed = value >= limit if higher_is_better else value <= limit
    return {"name": name, "value": _round(value), "limit": limit, "ratio_to_limit": ratio, "pass": bool(passed),
            "target": ">=" if higher_is_better else "<=", "unit": unit, "skipped": False,
            "details": details or {}}


def skipped_result(name: str, limit: float, reason: str, *, higher_is_better: bool = False, unit: str = "") -> dict:
    return {"name": name, "value": None, "limit": limit, "ratio_to_limit": None, "pass": None,
            "target": ">=" if higher_is_better else "<=", "unit": unit, "skipped": True, "reason": reason,
            "details": {}}


def error_result(name: str, limit: float, reason: str, *, higher_is_better: bool = False, unit: str = "") -> dict:
    """The benchmark ran but broke: counts as a failure, with the reason."""
    out = skipped_result(name, limit, reason, higher_is_better=higher_is_better, unit=unit)
    out.update(skipped=False, error=True, **{"pass": False})
    return out


def inconclusive_result(name: str, limit: float, reason: str, *, higher_is_better: bool = False, unit: str = "",
                        details: dict | None = None) -> dict:
    """The benchmark ran, but its noise exceeds its signal: neither a pass nor a failure, no value."""
    out = skipped_result(name, limit, reason, higher_is_better=higher_is_better, unit=unit)
    out.update(skipped=False, inconclusive=True, details=details or {})
    return out


def _round(x):
    return round(float(x), 6) if isinstance(x, float) else x


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def print_report(report: dict, path: Path | None) -> None:
    """The report as JSON on stdout, and in ``path`` when given."""
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n", encoding="utf-8")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# ---- timing ----------------------------------------------------------------------------------------

def interleaved(paths: dict[str, Callable[[], object]], reps: int, *, label: str | None = None
                ) -> dict[str, list[float]]:
    """Time each path ``reps`` times, rotating the order every repetition (A B C, B C A, ...), so
    that slow phases of the background load hit every path alike. With ``label``, log each
    repetition's times (for the slow benchmarks)."""
    names = list(paths)
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            t0 = time.perf_counter()
            paths[name]()
            times[name].append(time.perf_counter() - t0)
        if label:
            log(f"{label}: repetition {rep + 1}/{reps}: "
                + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in names))
    return times


@dataclass(frozen=True)
class NetRatio:
    """median(reference) / net, where net = median(full) − median(base); ``value`` None = inconclusive."""

    value: float | None
    net_s: float
    spread_s: float | None  # None with fewer than 2 repetitions: the noise cannot be estimated
    point_estimate: float | None  # the ratio as computed, also when inconclusive (None when net ≤ 0)
    reason: str | None = None


def net_ratio(reference: Sequence[float], full: Sequence[float], base: Sequence[float]) -> NetRatio:
    """The ratio of a reference time to the net time ``full − base`` from their repetitions, or
    inconclusive when the net time is not larger than its spread.

    The spread is range(full) + range(base): every difference of one ``full`` and one ``base``
    repetition lies in an interval that wide, so a net time inside it cannot be told apart from
    the run-to-run jitter of what was subtracted (e.g. process start). One repetition gives no
    spread, hence no verdict either.
    """
    net = statistics.median(full) - statistics.median(base)
    point = statistics.median(reference) / net if net > 0 else None
    reps = min(len(full), len(base))
    if reps < 2:
        return NetRatio(None, net, None, point, f"net {net:.3f} s from {reps} repetition: its spread cannot be "
                                                "estimated")
    spread = (max(full) - min(full)) + (max(base) - min(base))
    if net <= spread:
        estimate = "no ratio" if point is None else f"ratio {point:.3g} is noise"
        return NetRatio(None, net, spread, point,
                        f"net {net:.3f} s ≤ spread {spread:.3f} s over {reps} repetitions: {estimate}")
    return NetRatio(point, net, spread, point)


# ---- inputs ----------------------------------------------------------------------------------------

_SUBJECTS = ("我", "妈妈", "他", "她", "小明", "老师", "奶奶", "我们", "孩子们", "邻居")
_TIMES = ("今天", "昨天", "早上", "中午", "晚上", "周末", "刚才", "上午", "下午", "每天")
_PLACES = ("在家里", "在学校", "在公司", "在路上", "在商场")
_TEMPLATES = (  # (sense, template)
    ("水果", "{s}{t}{p}吃了一个苹果"),
    ("水果", "{s}{t}{p}削了一个又红又甜的苹果"),
    ("水果", "{s}{t}{p}把几个苹果洗干净了"),
    ("水果", "{s}{t}{p}送给朋友一袋苹果"),
    ("水果", "{s}{t}{p}用苹果做了一杯果汁"),
    ("公司", "{s}{t}{p}买了一台新的苹果电脑"),
    ("公司", "{s}{t}{p}看了苹果的新品发布会"),
    ("公司", "{s}{t}{p}听说苹果的股价又上涨了"),
    ("公司", "{s}{t}{p}下载了苹果系统的更新"),
    ("公司", "{s}{t}{p}用苹果手机拍了很多照片"),
)


def make_labelled_sentences(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` distinct, deterministic (sense, sentence) pairs, each sentence containing 苹果 exactly once."""
    combos = [(sense, tpl.format(s=s, t=t, p=p))
              for (sense, tpl), s, t, p in product(_TEMPLATES, _SUBJECTS, _TIMES, _PLACES)]
    random.Random(seed).shuffle(combos)
    if n > len(combos):
        raise ValueError(f"at most {len(combos)} distinct sentences, asked for {n}")
    return combos[:n]


def make_sentences(n: int, seed: int = 0) -> list[str]:
    """The sentences of :func:`make_labelled_sentences` (both senses of 苹果)."""
    return [sentence for _, sentence in make_labelled_sentences(n, seed)]


# ---- subprocesses and models -----------------------------------------------------------------------

def child_env(cfg: Config, **extra: str) -> dict:
    """Environment of the subprocesses: offline, and the same thread count as this process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}
    if cfg.threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(cfg.threads)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def load_encoder(name: str, kind: str):
    """(encoder, None) or (None, reason to skip). ``kind`` "bert" needs a masked LM, "layers" more
    than one layer."""
    from core.guard.errors import LabError
    from core.models import cache, catalogue

    if name in catalogue.EMBEDDED:
        info = next(i for i in catalogue.list_models() if i.name == name)
        if not info.available:
            return None, f"model {name} unavailable: {info.reason}"
    try:
        encoder = cache.load_encoder(name)
    except LabError as err:
        return None, f"model {name} cannot be loaded: {err.message('en')}"
    if kind == "bert" and getattr(encoder, "kind", None) != "bert":
        return None, f"model {name} is not a BERT-family masked LM"
    if kind == "layers" and getattr(encoder, "kind", None) == "static":
        return None, f"model {name} has a single (static) layer, nothing to mix"
    return encoder, None
