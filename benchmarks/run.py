"""Performance benchmarks of the ELMo→BERT Lab, each reported as a ratio against its limit.

    python -m benchmarks.run [--quick] [--json out.json]

JSON goes to stdout (and to ``--json``), a short table and progress lines to stderr. Compared code
paths are measured side by side in one run: their repetitions are interleaved (the order rotates
every repetition) and medians are compared, so that background load hits both paths alike.

Every result is ``{"name", "value", "limit", "ratio_to_limit", "pass", ...}`` with ``target``
("<=" or ">="), ``unit`` and ``details``; a benchmark that cannot run here (model not trained yet,
no browser) has ``"skipped": true``, ``"pass": null`` and a ``reason``. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORD = "苹果"
# 30 characters of text, one of them the [MASK] (counted as one character): 32 tokens with [CLS]/[SEP].
FILL_MASK_SENTENCE = "今天下午我和朋友一起去公园散步，看见湖边有很多老人在[MASK]鱼呢。"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
COLD_START_PAGE = ("static-vs-contextual", "app_pages/static_vs_contextual.py")
FALLBACK_PAGE = "home"
ALL = ("fillmask", "embed", "slider", "coldstart")


@dataclass
class Config:
    quick: bool = False
    bert_model: str = "mini-bert-zh"
    elmo_model: str = "mini-elmo-zh"
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
    only: tuple[str, ...] = ALL
    extra: dict = field(default_factory=dict)

    @classmethod
    def for_mode(cls, quick: bool, **overrides) -> "Config":
        base = cls(quick=quick)
        if quick:
            base.fillmask_reps, base.embed_sentences, base.slider_moves, base.coldstart_runs = 40, 200, 50, 1
        for key, value in overrides.items():
            if value is not None:
                setattr(base, key, value)
        return base


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------

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


def _round(x):
    return round(float(x), 6) if isinstance(x, float) else x


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def interleaved(paths: dict[str, Callable[[], object]], reps: int, *, label: str | None = None
                ) -> dict[str, list[float]]:
    """Time each path ``reps`` times, rotating the order every repetition (A B C, B C A, ...).
    With ``label``, log each repetition's times (for the slow benchmarks)."""
    names = list(paths)
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            t0 = time.perf_counter()
            paths[name]()
            times[name].append(time.perf_counter() - t0)
        if label:
            _log(f"{label}: repetition {rep + 1}/{reps}: "
                 + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in names))
    return times


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"cpu_model": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
    try:
        info["load_average_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        info["load_average_start"] = None
    try:
        meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        info["memory_total_gb"] = round(int(meminfo["MemTotal"].split()[0]) * 1024 / 1e9, 1)
    except (OSError, KeyError, ValueError):
        pass
    for module in ("torch", "transformers", "streamlit", "numpy"):
        try:
            info[f"{module}_version"] = __import__(module).__version__
        except Exception:  # noqa: BLE001 - version info is best effort
            pass
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
    except Exception:  # noqa: BLE001
        pass
    return info


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------

_SUBJECTS = ("我", "妈妈", "他", "她", "小明", "老师", "奶奶", "我们", "孩子们", "邻居")
_TIMES = ("今天", "昨天", "早上", "中午", "晚上", "周末", "刚才", "上午", "下午", "每天")
_PLACES = ("在家里", "在学校", "在公司", "在路上", "在商场")
_TEMPLATES = (
    "{s}{t}{p}吃了一个苹果",
    "{s}{t}{p}削了一个又红又甜的苹果",
    "{s}{t}{p}把几个苹果洗干净了",
    "{s}{t}{p}送给朋友一袋苹果",
    "{s}{t}{p}用苹果做了一杯果汁",
    "{s}{t}{p}买了一台新的苹果电脑",
    "{s}{t}{p}看了苹果的新品发布会",
    "{s}{t}{p}听说苹果的股价又上涨了",
    "{s}{t}{p}下载了苹果系统的更新",
    "{s}{t}{p}用苹果手机拍了很多照片",
)


def make_sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct, deterministic sentences, each containing 苹果 exactly once (both senses)."""
    combos = [tpl.format(s=s, t=t, p=p) for tpl, s, t, p in product(_TEMPLATES, _SUBJECTS, _TIMES, _PLACES)]
    random.Random(seed).shuffle(combos)
    if n > len(combos):
        raise ValueError(f"at most {len(combos)} distinct sentences, asked for {n}")
    return combos[:n]


def _child_env(cfg: Config, **extra: str) -> dict:
    """Environment of the subprocesses: offline, and the same thread count as this process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}
    if cfg.threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(cfg.threads)
    return env


def _load(name: str, kind: str):
    """(encoder, None) or (None, reason to skip)."""
    from core import registry
    from core.errors import LabError

    if name in registry.EMBEDDED:
        info = next(i for i in registry.list_models() if i.name == name)
        if not info.available:
            return None, f"model {name} unavailable: {info.reason}"
    try:
        encoder = registry.load_encoder(name)
    except LabError as err:
        return None, f"model {name} cannot be loaded: {err.message('en')}"
    if kind == "bert" and getattr(encoder, "kind", None) != "bert":
        return None, f"model {name} is not a BERT-family masked LM"
    if kind == "layers" and getattr(encoder, "kind", None) == "static":
        return None, f"model {name} has a single (static) layer, nothing to mix"
    return encoder, None


# ---------------------------------------------------------------------------------------------
# 1. fill-mask: app path vs bare forward
# ---------------------------------------------------------------------------------------------

def bench_fillmask(cfg: Config) -> list[dict]:
    name, limit = "fillmask_app_vs_bare_forward", 1.3
    encoder, reason = _load(cfg.bert_model, "bert")
    if encoder is None:
        return [skipped_result(name, limit, reason, unit="x")]
    import torch

    from core.fillmask import fill_mask

    sentence = FILL_MASK_SENTENCE.replace("[MASK]", encoder.mask_token)
    model, tokenizer = encoder.model, encoder.tokenizer

    def app():
        fill_mask(encoder, sentence)

    def bare():
        with torch.inference_mode():
            inputs = tokenizer(sentence, return_tensors="pt")
            model(**inputs)

    for _ in range(5):  # warm-up: first calls allocate, JIT-free but cache-cold
        app(), bare()
    gc.collect()
    times = interleaved({"app": app, "bare": bare}, cfg.fillmask_reps)
    app_med, bare_med = statistics.median(times["app"]), statistics.median(times["bare"])
    paired = statistics.median(a / b for a, b in zip(times["app"], times["bare"]))
    return [make_result(name, app_med / bare_med, limit, unit="x", details={
        "sentence": sentence, "sentence_chars": len(FILL_MASK_SENTENCE) - len("[MASK]") + 1,
        "tokens": len(tokenizer(sentence)["input_ids"]), "model": cfg.bert_model, "reps": cfg.fillmask_reps,
        "app_median_ms": _ms(app_med), "bare_median_ms": _ms(bare_med),
        "app_p90_ms": _ms(_quantile(times["app"], 0.9)), "bare_p90_ms": _ms(_quantile(times["bare"], 0.9)),
        "paired_ratio_median": round(paired, 4)})]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ---------------------------------------------------------------------------------------------
# 2. batch embedding: CLI vs bare batched forward vs one-at-a-time loop
# ---------------------------------------------------------------------------------------------

def bench_embed(cfg: Config) -> list[dict]:
    names = ("embed_cli_vs_batched_throughput", "embed_cli_vs_loop_speedup")
    limits = (0.7, 5.0)
    encoder, reason = _load(cfg.bert_model, "bert")
    if encoder is None:
        return [skipped_result(n, l, reason, higher_is_better=True, unit="x") for n, l in zip(names, limits)]
    import torch

    sentences = make_sentences(cfg.embed_sentences)
    model, tokenizer, bs = encoder.model, encoder.tokenizer, cfg.batch_size
    work = Path(tempfile.mkdtemp(prefix="lab-bench-embed-"))
    full_in, one_in, out_path = work / "sentences.txt", work / "one.txt", work / "out.jsonl"
    full_in.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    one_in.write_text(sentences[0] + "\n", encoding="utf-8")
    env = _child_env(cfg, LAB_LANG="en")
    last: dict = {}

    def cli(path: Path):
        with open(out_path, "wb") as out:
            done = subprocess.run([sys.executable, "-m", "core", "embed", "--model", cfg.bert_model, "--word", WORD,
                                   "--input", str(path)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.PIPE,
                                  timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"python -m core embed exited {done.returncode}: "
                               f"{done.stderr.decode('utf-8', 'replace').strip()[-500:]}")
        last[path.name] = sum(1 for _ in open(out_path, "rb"))

    def batched():
        with torch.inference_mode():
            for i in range(0, len(sentences), bs):
                inputs = tokenizer(sentences[i:i + bs], padding=True, return_tensors="pt")
                model(**inputs, output_hidden_states=True)

    def loop():
        with torch.inference_mode():
            for sentence in sentences:
                inputs = tokenizer(sentence, return_tensors="pt")
                model(**inputs, output_hidden_states=True)

    try:
        _log(f"embed: warm-up ({len(sentences)} sentences)")
        if cfg.embed_warmup:
            cli(one_in)  # warms the page cache for the interpreter, torch and the weights
        with torch.inference_mode():
            for s in sentences[:bs]:
                model(**tokenizer(s, return_tensors="pt"), output_hidden_states=True)
        gc.collect()
        _log(f"embed: {cfg.embed_reps} interleaved repetitions")
        times = interleaved({"cli_one": lambda: cli(one_in), "cli_full": lambda: cli(full_in),
                             "batched": batched, "loop": loop}, cfg.embed_reps, label="embed")
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        return [error_result(n, l, str(exc), higher_is_better=True, unit="x") for n, l in zip(names, limits)]
    finally:
        for path in (full_in, one_in, out_path):
            path.unlink(missing_ok=True)
        work.rmdir()

    med = {k: statistics.median(v) for k, v in times.items()}
    net = med["cli_full"] - med["cli_one"]
    n = len(sentences)
    details = {"model": cfg.bert_model, "sentences": n, "batch_size": bs, "reps": cfg.embed_reps,
               "cli_full_median_s": round(med["cli_full"], 3), "cli_startup_median_s": round(med["cli_one"], 3),
               "cli_net_s": round(net, 3), "batched_median_s": round(med["batched"], 3),
               "loop_median_s": round(med["loop"], 3),
               "cli_sentences_per_s": round(n / net, 1) if net > 0 else None,
               "batched_sentences_per_s": round(n / med["batched"], 1),
               "loop_sentences_per_s": round(n / med["loop"], 1),
               "batched_vs_loop_speedup": round(med["loop"] / med["batched"], 3),
               "cli_output_lines": last.get(full_in.name),
               "times_s": {k: [round(x, 3) for x in v] for k, v in times.items()}}

    def failed(reason: str) -> list[dict]:
        out = [error_result(nm, lim, reason, higher_is_better=True, unit="x") for nm, lim in zip(names, limits)]
        for result in out:
            result["details"] = details
        return out

    if details["cli_output_lines"] != n:
        return failed(f"CLI wrote {details['cli_output_lines']} vectors for {n} sentences")
    if net <= 0:
        return failed(f"CLI time minus startup is not positive ({net:.3f} s): the startup's run-to-run noise "
                      f"exceeds the work of {n} sentences; use more sentences or repetitions")
    return [make_result(names[0], med["batched"] / net, limits[0], higher_is_better=True, unit="x", details=details),
            make_result(names[1], med["loop"] / net, limits[1], higher_is_better=True, unit="x", details=details)]


# ---------------------------------------------------------------------------------------------
# 3. ELMo slider: re-mix + re-project from cached layers, no forward pass
# ---------------------------------------------------------------------------------------------

class ForwardCounter:
    """Counts model forward passes: top-level entries into the model's compute methods (nested calls
    such as layer_vectors → representations count once) and every submodule call as a safety net."""

    METHODS = ("forward", "layer_vectors", "representations", "lm_losses")

    def __init__(self, encoder):
        import torch.nn as nn

        self.model = encoder.model
        self.passes = 0
        self.module_calls = 0
        self._depth = 0
        self._wrapped: list[tuple[object, str]] = []
        self._handles = []
        # Embedding runs the encoder alone (base_model), fill-mask the whole model: count both entries.
        base = getattr(self.model, "base_model", None)
        targets = [self.model] + ([base] if base is not None and base is not self.model else [])
        for target in targets:
            for name in self.METHODS:
                original = getattr(target, name, None)
                if callable(original):
                    target.__dict__[name] = self._wrap(original)
                    self._wrapped.append((target, name))
        if isinstance(self.model, nn.Module):
            self._handles = [m.register_forward_pre_hook(self._hook) for m in self.model.modules()]

    def _wrap(self, original):
        def counted(*args, **kwargs):
            if self._depth == 0:
                self.passes += 1
            self._depth += 1
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1
        return counted

    def _hook(self, module, args):
        self.module_calls += 1

    def reset(self) -> None:
        self.passes = self.module_calls = 0

    def remove(self) -> None:
        for target, name in self._wrapped:
            target.__dict__.pop(name, None)
        for handle in self._handles:
            handle.remove()


def slider_positions(num_layers: int, moves: int) -> list[tuple[list[float], float]]:
    """Normalised weights s (sum 1) and γ as a teacher drags the sliders: the top layer's share
    sweeps 0 → 1 while the rest split the remainder, γ sweeps 0.5 → 2."""
    out = []
    for i in range(moves):
        x = i / max(1, moves - 1)
        top = x if num_layers > 1 else 1.0
        rest = [(1.0 - top) / (num_layers - 1)] * (num_layers - 1) if num_layers > 1 else []
        weights = rest + [top]
        weights[0] += 1.0 - sum(weights)  # exact sum 1
        out.append((weights, 0.5 + 1.5 * x))
    return out


def bench_slider(cfg: Config) -> list[dict]:
    names, limits = ("elmo_slider_remix_ms", "elmo_slider_forward_passes"), (20.0, 0)
    encoder, reason = _load(cfg.elmo_model, "layers")
    if encoder is None:
        return [skipped_result(names[0], limits[0], reason, unit="ms"),
                skipped_result(names[1], limits[1], reason, unit="passes")]
    from core.geometry import project
    from core.mixing import scalar_mix
    from core.occurrences import word_vectors

    sentences = make_sentences(cfg.slider_sentences, seed=1)
    vectors = word_vectors(encoder, sentences, WORD)  # computed once, as ui.cache.encode caches it
    stack = vectors.stacked()  # (num_layers, n_occ, dim)
    positions = slider_positions(stack.shape[0], cfg.slider_moves)

    def move(weights, gamma):
        mixed = scalar_mix(stack, weights, gamma)
        return project(mixed)

    for weights, gamma in positions[:5]:
        move(weights, gamma)
    counter = ForwardCounter(encoder)
    try:
        times = []
        for weights, gamma in positions:
            t0 = time.perf_counter()
            move(weights, gamma)
            times.append(time.perf_counter() - t0)
        passes, module_calls = counter.passes, counter.module_calls
        counter.reset()
        encoder.encode([sentences[0]])  # proves the counter sees a real forward pass
        verified = counter.passes > 0 or counter.module_calls > 0
    finally:
        counter.remove()
    med = statistics.median(times)
    details = {"model": cfg.elmo_model, "sentences": len(sentences), "occurrences": int(stack.shape[1]),
               "stack_shape": list(stack.shape), "moves": len(positions), "median_ms": _ms(med),
               "p95_ms": _ms(_quantile(times, 0.95)), "max_ms": _ms(max(times))}
    count_details = {"model_forward_passes": passes, "submodule_calls": module_calls,
                     "counter_verified": verified, "wrapped_methods": [f"{type(t).__name__}.{n}" for t, n in counter._wrapped]}
    counted = make_result(names[1], passes + module_calls, limits[1], unit="passes", details=count_details)
    if not verified:
        counted.update({"pass": False, "error": True,
                        "reason": "the counter did not register a deliberate forward pass"})
    return [make_result(names[0], med * 1000.0, limits[0], unit="ms", details=details), counted]


# ---------------------------------------------------------------------------------------------
# 4. cold start: streamlit run → first page fully rendered in headless Chromium
# ---------------------------------------------------------------------------------------------

_PAGE_STATE_JS = """() => {
  const w = document.querySelector('[data-testid="stStatusWidget"]');
  const running = !!(w && (w.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
                           || /running|connecting|正在运行/i.test(w.innerText || '')));
  return {running, plot: !!document.querySelector('.js-plotly-plot'),
          heading: !!document.querySelector('[data-testid="stMain"] h1, [data-testid="stMainBlockContainer"] h1'),
          exception: !!document.querySelector('[data-testid="stException"]')};
}"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _status_kb(pid: int, field_name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _rss_bytes(pid: int, field_name: str) -> int:
    """Sum of a /proc status field (VmRSS or VmHWM) over the process and its children, in bytes."""
    try:
        import psutil  # noqa: F401 - preferred when installed
    except ImportError:
        psutil = None
    pids = [pid] + _descendants(pid)
    if psutil is not None and field_name == "VmRSS":
        total = 0
        for p in pids:
            try:
                total += psutil.Process(p).memory_info().rss
            except psutil.Error:
                pass
        return total
    return sum(_status_kb(p, field_name) for p in pids) * 1024


def _page_choice() -> tuple[str, bool, str | None]:
    """(url path, expects a plot, fallback note)."""
    url_path, script = COLD_START_PAGE
    path = ROOT / script
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        return FALLBACK_PAGE, False, f"{script} does not exist yet: measured the home page instead"
    if "under_construction" in source or "Placeholder page" in source:
        return FALLBACK_PAGE, False, f"{script} is still a placeholder: measured the home page instead"
    return url_path, True, None


def cold_start_once(cfg: Config, url_path: str, expect_plot: bool) -> dict:
    from playwright.sync_api import sync_playwright

    port = _free_port()
    env = _child_env(cfg, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    log = tempfile.TemporaryFile()
    url = f"http://127.0.0.1:{port}/{url_path}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=cfg.chromium, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                 "--server.port", str(port), "--server.fileWatcherType", "none",
                                 "--browser.gatherUsageStats", "false"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        peak = {"rss": 0}
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak["rss"] = max(peak["rss"], _rss_bytes(proc.pid, "VmRSS"))
                stop.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out: dict = {"url_path": url_path, "port": port}
        try:
            deadline = t0 + cfg.coldstart_timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {proc.returncode}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as resp:
                        if resp.status == 200:
                            break
                except OSError:
                    pass
                if time.perf_counter() > deadline:
                    raise TimeoutError("server health check timed out")
                time.sleep(0.05)
            out["health_s"] = round(time.perf_counter() - t0, 3)
            page.goto(url, wait_until="domcontentloaded", timeout=cfg.coldstart_timeout * 1000)
            ready_since = None
            state: dict = {}
            while True:
                now = time.perf_counter()
                state = page.evaluate(_PAGE_STATE_JS)
                ok = not state["running"] and (state["plot"] if expect_plot else state["heading"])
                if state["exception"]:
                    raise RuntimeError("the page shows a Python exception (st.exception)")
                if ok:
                    ready_since = ready_since or now
                    if now - ready_since >= 1.0:  # stays idle and rendered: not a gap between reruns
                        break
                else:
                    ready_since = None
                if now > deadline:
                    raise TimeoutError(f"page not rendered within {cfg.coldstart_timeout:.0f} s (last state {state})")
                time.sleep(0.1)
            out["rendered_s"] = round(ready_since - t0, 3)
            out["state"] = state
            hwm = _rss_bytes(proc.pid, "VmHWM")
            stop.set()
            sampler.join()
            out["peak_rss_bytes_vmhwm"] = hwm
            out["peak_rss_bytes_sampled"] = peak["rss"]
            out["children"] = len(_descendants(proc.pid))
        finally:
            stop.set()
            browser.close()
            _stop_server(proc)
            log.seek(0)
            out["server_log_tail"] = log.read().decode("utf-8", "replace")[-800:]
            log.close()
    return out


def _stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the server's own process group (start_new_session)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def bench_coldstart(cfg: Config) -> list[dict]:
    names, limits = ("cold_start_seconds", "cold_start_peak_rss_gb"), (10.0, 1.5)
    units = ("s", "GB")

    def skip(reason):
        return [skipped_result(n, l, reason, unit=u) for n, l, u in zip(names, limits, units)]

    if not Path(cfg.chromium).exists():
        return skip(f"no Chromium at {cfg.chromium} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return skip("playwright (python) is not installed")
    if not (ROOT / "app.py").exists():
        return skip("app.py does not exist yet")
    url_path, expect_plot, note = _page_choice()
    runs, errors = [], []
    for i in range(cfg.coldstart_runs):
        _log(f"coldstart: run {i + 1}/{cfg.coldstart_runs} ({url_path})")
        try:
            runs.append(cold_start_once(cfg, url_path, expect_plot))
        except Exception as exc:  # noqa: BLE001 - reported as the benchmark's failure
            errors.append(f"{type(exc).__name__}: {exc}")
    if not runs:
        return [error_result(n, l, "; ".join(errors), unit=u) for n, l, u in zip(names, limits, units)]
    secs = statistics.median(r["rendered_s"] for r in runs)
    hwm = max(r["peak_rss_bytes_vmhwm"] for r in runs)
    details = {"page": url_path, "fallback": note is not None, "note": note,
               "page_wait": ".js-plotly-plot present and no running status" if expect_plot
               else "title rendered and no running status",
               "runs": [{k: v for k, v in r.items() if k != "server_log_tail"} for r in runs],
               "errors": errors, "health_median_s": statistics.median(r["health_s"] for r in runs),
               "rss_method": "max over runs of VmHWM (/proc/<pid>/status) of the server plus its children; "
                             "sampled VmRSS every 0.1 s in runs[].peak_rss_bytes_sampled",
               "psutil": _has_psutil()}
    results = [make_result(names[0], secs, limits[0], unit="s", details=details),
               make_result(names[1], hwm / 1e9, limits[1], unit="GB", details={"peak_rss_mb": round(hwm / 1e6, 1),
                                                                                "page": url_path})]
    if errors:
        for r in results:
            r["pass"] = False
            r["reason"] = f"{len(errors)} of {cfg.coldstart_runs} runs failed: {'; '.join(errors)}"
    if note:
        for r in results:
            r["note"] = note
    return results


def _has_psutil() -> bool:
    try:
        import psutil  # noqa: F401
        return True
    except ImportError:
        return False


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------

BENCHMARKS: dict[str, Callable[[Config], list[dict]]] = {
    "fillmask": bench_fillmask, "embed": bench_embed, "slider": bench_slider, "coldstart": bench_coldstart}


def run_benchmarks(cfg: Config) -> dict:
    started = _dt.datetime.now().astimezone()
    if cfg.threads:
        import torch

        torch.set_num_threads(cfg.threads)
    machine = machine_info()
    results = []
    for key in cfg.only:
        _log(f"running {key}")
        t0 = time.perf_counter()
        try:
            produced = BENCHMARKS[key](cfg)
        except Exception as exc:  # noqa: BLE001 - a broken benchmark is a failed result, not a crash
            produced = [error_result(key, 0, f"{type(exc).__name__}: {exc}")]
        for result in produced:
            result["benchmark"] = key
            result["elapsed_s"] = round(time.perf_counter() - t0, 2)
        results.extend(produced)
    try:
        machine["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        machine["load_average_end"] = None
    load = machine.get("load_average_start") or [0.0]
    cores = machine.get("cores") or 1
    measured = [r for r in results if not r["skipped"]]
    return {
        "date": started.isoformat(timespec="seconds"),
        "mode": "quick" if cfg.quick else "full",
        "machine": machine,
        "loaded": load[0] >= 0.5 * cores,
        "load_note": (f"load average {load[0]} on {cores} cores at start: measured while the machine was loaded"
                      if load[0] >= 0.5 * cores else f"load average {load[0]} on {cores} cores at start"),
        "config": {k: v for k, v in cfg.__dict__.items() if k != "extra"} | {"only": list(cfg.only)},
        "results": results,
        "summary": {"measured": len(measured), "passed": sum(1 for r in measured if r["pass"]),
                    "failed": [r["name"] for r in measured if r["pass"] is False],
                    "skipped": [r["name"] for r in results if r["skipped"]]},
    }


def format_table(report: dict) -> str:
    rows = [("benchmark", "value", "limit", "ratio", "result")]
    for r in report["results"]:
        unit = r.get("unit", "")
        value = "—" if r["value"] is None else f"{r['value']:.3g} {unit}".strip()
        limit = f"{r['target']} {r['limit']:g} {unit}".strip()
        ratio = "—" if r["ratio_to_limit"] is None else f"{r['ratio_to_limit']:.3g}"
        verdict = ("SKIP" if r["skipped"] else "PASS" if r["pass"] else "FAIL")
        if r.get("reason"):
            verdict += f" ({r['reason'][:90]})"
        elif r.get("note"):
            verdict += f" ({r['note'][:90]})"
        rows.append((r["name"], value, limit, ratio, verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4] for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    m = report["machine"]
    lines.append(f"{report['date']}  {m.get('cpu_model')} ×{m.get('cores')}  {report['load_note']}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, Config]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (200 sentences, fewer repetitions)")
    parser.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    parser.add_argument("--only", help=f"comma-separated subset of {','.join(ALL)}")
    parser.add_argument("--bert-model", help="BERT model for fill-mask and embedding (default mini-bert-zh)")
    parser.add_argument("--elmo-model", help="layered model for the slider benchmark (default mini-elmo-zh)")
    parser.add_argument("--sentences", type=int, help="sentences for the embedding benchmark")
    parser.add_argument("--embed-reps", type=int)
    parser.add_argument("--fillmask-reps", type=int)
    parser.add_argument("--slider-moves", type=int)
    parser.add_argument("--coldstart-runs", type=int)
    parser.add_argument("--chromium", help="Chromium executable (default /usr/bin/chromium)")
    parser.add_argument("--threads", type=int, help="pin torch threads (here and in the CLI / streamlit "
                        "subprocesses via OMP_NUM_THREADS); default: torch's own choice")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a measured figure misses its target")
    args = parser.parse_args(argv)
    only = tuple(s.strip() for s in args.only.split(",") if s.strip()) if args.only else ALL
    unknown = [s for s in only if s not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(ALL)}")
    cfg = Config.for_mode(args.quick, bert_model=args.bert_model, elmo_model=args.elmo_model,
                          embed_sentences=args.sentences, embed_reps=args.embed_reps,
                          fillmask_reps=args.fillmask_reps, slider_moves=args.slider_moves,
                          coldstart_runs=args.coldstart_runs, chromium=args.chromium, only=only,
                          threads=args.threads)
    for name in ("fillmask_reps", "embed_sentences", "embed_reps", "slider_moves", "coldstart_runs", "threads"):
        if getattr(cfg, name) is not None and getattr(cfg, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args, cfg


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # runs the finally blocks: temp files removed, Streamlit server stopped


def main(argv: list[str] | None = None) -> int:
    import signal

    args, cfg = parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if in_main_thread else None
    try:
        report = run_benchmarks(cfg)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
    text = json.dumps(report, ensure_ascii=False, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    print(format_table(report), file=sys.stderr)
    return 1 if args.strict and report["summary"]["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
