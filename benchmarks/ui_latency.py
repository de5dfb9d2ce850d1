"""What a lecturer waits for in the browser: a control's rerun, a scene change, a page's first visit.

    python -m benchmarks.ui_latency                 # 5 repetitions of each action
    python -m benchmarks.ui_latency --reps 3 --json out.json
    python -m benchmarks.ui_latency --walk-only     # only the walk through every scene

Two servers are started on free loopback ports, one after the other: ``streamlit run app.py`` (models
load on the first visit) and ``streamlit run serve.py`` (models load as the server starts; the
benchmark waits for its "embedded models ready" log line, as a lecturer starts the server before
class). Headless Chromium (Playwright, Debian's ``/usr/bin/chromium``) then measures on the second:

- ``control_rerun_s``: a control is used (a new fill-mask sentence + Enter, the attention page's
  "hide [CLS]/[SEP]" switch, the ELMo page's γ slider moved by one step with the arrow key) until the
  rerun it starts has finished: the time from the event until ``stApp``'s ``data-test-script-state``
  has gone to ``running`` and back to ``notRunning`` (a MutationObserver in the page, so the browser's
  own clock). Value = the slowest control's median.
- ``scene_change_s``: PageDown in presentation mode until the next scene's run has finished.
- ``scene_walk_median_s`` / ``scene_walk_max_s``: all 18 scenes walked by PageDown from the home page (a first
  walk visits every page once; the second is measured), from the key press until the scene has settled: its
  URL, no run, nothing stale, its result placed below the scene bar (``SETTLED_JS``); ``details`` has each
  scene's time, when its title appeared in the bar and when its page's run had ended, and the machine's load
  average at the end. ``--walk-only`` measures only these.
- ``first_visit_warm_s``: a fresh tab opening each page until its run has finished, on ``serve.py``
  after the warm-up (median over the pages), next to the same on ``app.py`` without warm-up
  (``details.first_visit_cold_s``; only the first page visited pays for loading there).

Timings depend on the machine's load: run it on an idle machine. JSON to stdout (and ``--json``),
progress to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.classroom_load import _log, start_server
from benchmarks.common import error_result, make_result, skipped_result

CHROMIUM = "/usr/bin/chromium"
TARGETS = {"control_rerun_s": 1.0, "scene_change_s": 1.5, "first_visit_warm_s": 3.0,
           "scene_walk_median_s": 1.0, "scene_walk_max_s": 2.5}
WALK_ONLY = ("scene_walk_median_s", "scene_walk_max_s")
PAGES = ("overview", "static-vs-contextual", "elmo-weights", "fill-mask", "attention-heatmap")

# Resolves with the seconds from installation until the script state went running → notRunning.
WATCH_RUN_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const start = performance.now();
  let running = false;
  window.__labRun = new Promise((resolve) => {
    // one callback may cover several changes (running and back): the records' old values keep them
    const observer = new MutationObserver((records) => {
      const state = app.dataset.testScriptState;
      if (state === 'running' || records.some((r) => r.oldValue === 'running')) running = true;
      if (running && state === 'notRunning') { observer.disconnect(); resolve((performance.now() - start) / 1000); }
    });
    observer.observe(app, {attributes: true, attributeOldValue: true, attributeFilter: ['data-test-script-state']});
  });
}"""
IDLE_JS = """() => { const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.dataset.testScriptState === 'notRunning' && !!document.querySelector('[data-testid="stMain"] h1')
    && !document.querySelector('[data-testid="stStatusWidget"]'); }"""


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for_line(log: Path, text: str, timeout_s: float = 300) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if text in log.read_text(errors="replace"):
            return time.monotonic() - start
        time.sleep(0.2)
    raise RuntimeError(f"no “{text}” in the server log after {timeout_s:.0f} s")


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    start = time.monotonic()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(IDLE_JS, timeout=300_000, polling=50)
    return page, time.monotonic() - start


UNSEEN_S = 20  # no script-state change this long after the action: the run was not seen


def timed(page, action) -> float | None:
    """Seconds from ``action()`` until the rerun it causes has finished (browser clock); ``None`` when no
    run was seen: a fragment rerun shorter than a frame can flip the script state to running and back
    within one render (seen on the γ slider: the chart had moved), which leaves nothing to observe."""
    page.evaluate(WATCH_RUN_JS)
    action()
    seconds = page.evaluate("() => Promise.race([window.__labRun, "
                            f"new Promise(r => setTimeout(() => r(-1), {UNSEEN_S * 1000}))])")
    page.wait_for_function(IDLE_JS, timeout=120_000, polling=50)
    return None if seconds < 0 else seconds


def _observed(runs: list[float | None], what: str) -> list[float]:
    seen = [v for v in runs if v is not None]
    if not seen:
        raise RuntimeError(f"{what}: no rerun was seen in {len(runs)} tries")
    return seen


def first_visits(browser, url: str) -> dict[str, float]:
    out = {}
    for path in PAGES:
        page, seconds = open_page(browser, f"{url}/{path}")
        out[path] = round(seconds, 3)
        page.close()
    return out


def control_timings(browser, url: str, reps: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"fill_mask_sentence": [], "attention_hide_special": [], "elmo_gamma_slider": []}
    page, _ = open_page(browser, f"{url}/fill-mask")
    box = page.locator(".st-key-fill_sentence input")
    for i in range(reps):
        sentence = f"我{'今天' if i % 2 else '昨天'}吃了一个[MASK][MASK]。"
        out["fill_mask_sentence"].append(timed(page, lambda text=sentence: (box.fill(text), box.press("Enter"))))
    page.close()
    page, _ = open_page(browser, f"{url}/attention-heatmap")
    for _ in range(reps):
        out["attention_hide_special"].append(timed(page, lambda: page.locator(".st-key-att_hide label").click()))
    page.close()
    page, _ = open_page(browser, f"{url}/elmo-weights")
    page.locator('.st-key-elmo_gamma input[type="range"]').focus()  # react-aria: a visually hidden range input
    for i in range(reps):
        key = "ArrowRight" if i % 2 else "ArrowLeft"
        out["elmo_gamma_slider"].append(timed(page, lambda pressed=key: page.keyboard.press(pressed)))
    page.close()
    return out


# The scene the browser shows has settled: its page and slide, no run, nothing stale, and its result (a key, or
# null) placed by the presenter's script: starting just below the scene bar or wholly in view, or for a scene
# without a result the page at its top.
SETTLED_JS = """([slide, key]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (new URLSearchParams(location.search).get('slide') !== slide) return false;
  if (!app || app.dataset.testScriptState !== 'notRunning') return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const bar = document.querySelector('.st-key-present_bar');
  if (!bar) return false;
  const main = document.querySelector('[data-testid="stMain"]');
  if (!key) return main.scrollTop === 0;
  const el = document.querySelector('.st-key-' + key);
  if (!el || !el.querySelector('.js-plotly-plot, table, [data-testid="stMarkdownContainer"]')) return false;
  const r = el.getBoundingClientRect(), b = bar.getBoundingClientRect();
  return r.top >= b.bottom - 2 && (r.top <= b.bottom + 80 || r.bottom <= innerHeight + 1);
}"""
TITLE_JS = "(text) => (document.querySelector('.st-key-present_bar') || {}).innerText?.includes(text)"
# the scene's page has run: its slide in the URL, no run, nothing stale (the browser may still be drawing it)
RAN_JS = """(slide) => {
  const app = document.querySelector('[data-testid="stApp"]');
  return new URLSearchParams(location.search).get('slide') === slide && !!app
    && app.dataset.testScriptState === 'notRunning' && !document.querySelector('[data-stale="true"]');
}"""


def scene_walk(browser, url: str) -> dict[str, dict[str, float]]:
    """Every scene walked by PageDown from the home page, as a lecturer does: for each, the seconds from the key
    press until the new scene's title is in the bar, until its page's run has ended (``RAN_JS``: what is left
    after it is the browser drawing and placing the result) and until the scene has settled (``SETTLED_JS``)."""
    from ui.i18n import translate
    from ui.lecture_scenes import SCENES
    from ui.presentation import result_key

    page, _ = open_page(browser, f"{url}/{SCENES[0].url_path}?present=1&lang=zh&slide={SCENES[0].id}")
    page.wait_for_function(SETTLED_JS, arg=[SCENES[0].id, result_key(SCENES[0])], timeout=300_000, polling=50)
    page.wait_for_timeout(3000)  # the presenter's script holds the first scene's result in place for 3 s
    out = {}
    for number, scene in enumerate(SCENES[1:], start=2):
        title = translate("zh", "present.counter", k=number, n=len(SCENES))
        start = time.monotonic()
        page.keyboard.press("PageDown")
        page.wait_for_function(TITLE_JS, arg=title, timeout=300_000, polling=50)
        titled = time.monotonic() - start
        page.wait_for_function(RAN_JS, arg=scene.id, timeout=300_000, polling=50)
        ran = time.monotonic() - start
        page.wait_for_function(SETTLED_JS, arg=[scene.id, result_key(scene)], timeout=300_000, polling=50)
        out[scene.id] = {"title_s": round(titled, 3), "ran_s": round(ran, 3),
                         "settled_s": round(time.monotonic() - start, 3)}
        _log(f"  {number:2d} {scene.id:10s} title {titled:5.2f} s, ran {ran:5.2f} s, "
             f"settled {out[scene.id]['settled_s']:5.2f} s")
        page.wait_for_timeout(3500)  # the lecturer talks; the presenter's script lets go of the result
    page.close()
    return out


def scene_timings(browser, url: str, reps: int) -> list[float]:
    page, _ = open_page(browser, f"{url}/?present=1")
    page.wait_for_selector(".st-key-present_bar")
    page.wait_for_timeout(2000)  # the presenter's key handler (a component) mounts after the script run
    out = []
    for _ in range(reps):
        out.append(timed(page, lambda: page.keyboard.press("PageDown")))
    page.close()
    return out


def walk_results(walk: dict[str, dict[str, float]]) -> list[dict]:
    settled = [v["settled_s"] for v in walk.values()]
    slowest = max(walk, key=lambda k: walk[k]["settled_s"])
    details = {"scenes": walk, "title_median_s": statistics.median(v["title_s"] for v in walk.values()),
               "ran_median_s": statistics.median(v["ran_s"] for v in walk.values()),
               "load_average": [round(x, 2) for x in os.getloadavg()]}
    return [make_result("scene_walk_median_s", statistics.median(settled), TARGETS["scene_walk_median_s"], unit="s",
                        details=details),
            make_result("scene_walk_max_s", max(settled), TARGETS["scene_walk_max_s"], unit="s",
                        details={"slowest": slowest})]


def measure(reps: int, walk_only: bool = False) -> list[dict]:
    from playwright.sync_api import sync_playwright

    servers = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            if not walk_only:
                proc, url = start_server(300, "app.py")
                servers.append(proc)
                _log("app.py: first visits without warm-up")
                cold = first_visits(browser, url)
                stop(proc)
            log = Path(os.environ.get("TMPDIR", "/tmp")) / f"lab-ui-latency-{os.getpid()}.log"
            proc, url = start_server(300, "serve.py", log)
            servers.append(proc)
            warm_up_s = wait_for_line(log, "embedded models ready")
            _log(f"serve.py: models ready {warm_up_s:.1f} s after health")
            if not walk_only:
                _log("first visits")
                warm = first_visits(browser, url)
                _log("controls")
                controls = control_timings(browser, url, reps)
                _log("scene changes")
                scenes = scene_timings(browser, url, reps)
            _log("all scenes by PageDown (a first walk visits every page once, the second is measured)")
            scene_walk(browser, url)
            walk = scene_walk(browser, url)
            browser.close()
    finally:
        for proc in servers:
            stop(proc)
    if walk_only:
        return walk_results(walk)
    medians = {name: statistics.median(_observed(values, name)) for name, values in controls.items()}
    slowest = max(medians, key=medians.get)
    rounded = {name: [None if v is None else round(v, 3) for v in values] for name, values in controls.items()}
    unseen = {name: values.count(None) for name, values in {**controls, "scene_change": scenes}.items()}
    return [
        make_result("control_rerun_s", medians[slowest], TARGETS["control_rerun_s"], unit="s",
                    details={"slowest": slowest, "medians": {k: round(v, 3) for k, v in medians.items()},
                             "runs": rounded, "runs_not_seen": unseen}),
        make_result("scene_change_s", statistics.median(_observed(scenes, "scene change")), TARGETS["scene_change_s"],
                    unit="s", details={"runs": [None if v is None else round(v, 3) for v in scenes]}),
        make_result("first_visit_warm_s", statistics.median(warm.values()), TARGETS["first_visit_warm_s"], unit="s",
                    details={"first_visit_warm_s": warm, "first_visit_cold_s": cold,
                             "warm_up_after_health_s": round(warm_up_s, 1)}),
        *walk_results(walk),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each control and scene change")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--walk-only", action="store_true", help="only the walk through every scene by PageDown")
    args = parser.parse_args(argv)
    targets = {name: TARGETS[name] for name in WALK_ONLY} if args.walk_only else TARGETS
    try:
        import playwright.sync_api  # noqa: F401
        ready = Path(CHROMIUM).exists()
    except ImportError:
        ready = False
    if not ready:
        results = [skipped_result(name, limit, f"needs Playwright and {CHROMIUM}", unit="s")
                   for name, limit in targets.items()]
    else:
        try:
            results = measure(args.reps, args.walk_only)
        except Exception as exc:  # reported as the benchmark's failure
            results = [error_result(name, limit, f"{type(exc).__name__}: {exc}", unit="s")
                       for name, limit in targets.items()]
    text = json.dumps({"results": results}, ensure_ascii=False, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
