"""Cold start: ``streamlit run app.py`` until the first page is fully rendered in headless Chromium.

- ``cold_start_seconds``: from starting the server (Chromium already launched) until the
  ``/static-vs-contextual`` page, which loads the embedded models, shows a plot and no running
  status for 1 s on end (the start of that stretch counts). A page showing a Python exception fails
  the run; while that page is a placeholder the home page is measured instead, with a ``note``.
  Median over the runs; target ≤ 8 s (issue #50).
- ``cold_start_peak_rss_gb``: peak resident memory of the server plus its children (``VmHWM``),
  max over the runs; target ≤ 1.5 GB.
"""
from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

try:
    import psutil  # not a dependency; preferred for VmRSS when installed
except ImportError:
    psutil = None

from benchmarks.common import ROOT, Config, child_env, error_result, free_port, log, make_result, skipped_result

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
COLD_START_PAGE = ("static-vs-contextual", "app_pages/static_vs_contextual/page.py")
FALLBACK_PAGE = "home"
# The page's state as the wait loop needs it: running or not, a plot, a title, an exception.
_PAGE_STATE_JS = """() => {
  const w = document.querySelector('[data-testid="stStatusWidget"]');
  const running = !!(w && (w.querySelector('[data-testid="stStatusWidgetRunningIcon"]')
                           || /running|connecting|正在运行/i.test(w.innerText || '')));
  return {running, plot: !!document.querySelector('.js-plotly-plot'),
          heading: !!document.querySelector('[data-testid="stMain"] h1, [data-testid="stMainBlockContainer"] h1'),
          exception: !!document.querySelector('[data-testid="stException"]')};
}"""


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


def cold_start_once(cfg: Config, url_path: str, expect_plot: bool, *, root: Path = ROOT, script: str = "app.py"
                    ) -> dict:
    """One cold start of ``streamlit run <script>`` in the checkout at ``root`` (``benchmarks/startup.py``
    compares two checkouts)."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    env = child_env(cfg, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    server_log = tempfile.TemporaryFile()
    url = f"http://127.0.0.1:{port}/{url_path}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=cfg.chromium, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
                                 "--server.port", str(port), "--server.fileWatcherType", "none",
                                 "--browser.gatherUsageStats", "false"],
                                cwd=root, env=env, stdout=server_log, stderr=subprocess.STDOUT, start_new_session=True)
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
            server_log.seek(0)
            out["server_log_tail"] = server_log.read().decode("utf-8", "replace")[-800:]
            server_log.close()
    return out


def _stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the server's own process group (start_new_session)
        proc.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def measure(cfg: Config) -> list[dict]:
    names, limits = ("cold_start_seconds", "cold_start_peak_rss_gb"), (8.0, 1.5)
    units = ("s", "GB")

    def skip(reason):
        return [skipped_result(n, l, reason, unit=u) for n, l, u in zip(names, limits, units)]

    if not Path(cfg.chromium).exists():
        return skip(f"no Chromium at {cfg.chromium} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return skip("playwright (python) is not installed")
    url_path, expect_plot, note = _page_choice()
    runs, errors = [], []
    for i in range(cfg.coldstart_runs):
        log(f"coldstart: run {i + 1}/{cfg.coldstart_runs} ({url_path})")
        try:
            runs.append(cold_start_once(cfg, url_path, expect_plot))
        except Exception as exc:  # reported as the benchmark's failure
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
               "psutil": psutil is not None}
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
