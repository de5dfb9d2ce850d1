"""Real-browser end-to-end fixtures: the app served by ``streamlit run``, driven by Debian's Chromium.

- ``URL_PATHS`` (every page: ui.PAGES, then the st.Page url_paths added in app.py), ``DEFAULT_PAGE``
  (also served at "/") and :func:`page_url`.
- :func:`start_server` starts ``streamlit run app.py`` on a free localhost port (a thin wrapper around
  Streamlit's own CLI entry point, which also counts the model loads in the server process
  (``load_counting.count_loads``) and writes them to a small JSON file every half second, so tests
  can check that every model was loaded once per process), waits for ``/_stcore/health`` and loads
  ``/`` once (warms the page modules).
- ``lab_server`` (session): one server for all browser tests. ``browser`` (module): headless Chromium.
- :func:`wait_idle` / :func:`wait_for`: poll until the script run is over (the machine has two busy
  cores, so every wait is generous: ``LAB_E2E_TIMEOUT`` seconds, default 600).
- :func:`check_healthy`: no exception box, no "Traceback" anywhere on the page.
- :func:`screenshot`: a full-page PNG in ``test-artifacts/screenshots/`` (Streamlit scrolls inside its
  main container, so the viewport is grown to the content's height first).

The whole module is skipped when ``/usr/bin/chromium`` or Playwright is missing.
"""
from __future__ import annotations

import ast
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ui import PAGES

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
TIMEOUT_S = float(os.environ.get("LAB_E2E_TIMEOUT", "600"))  # one page run, worst case, on a busy machine
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
VIEWPORT = {"width": 1600, "height": 1000}
MAX_SCREENSHOT_HEIGHT = 16_000


def browser_missing_reason() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install -y chromium fonts-noto-cjk)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -r requirements-dev.txt)"
    return None


# ---- the pages -----------------------------------------------------------------------------------
def app_py_url_paths() -> list[str]:
    """url_path literals of the st.Page(...) calls in app.py (pages added beside ui.PAGES)."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            for kw in node.keywords:
                if kw.arg == "url_path" and isinstance(kw.value, ast.Constant):
                    found.append(kw.value.value)
    return found


URL_PATHS = list(dict.fromkeys([spec.url_path for spec in PAGES] + app_py_url_paths()))
LISTED_PATHS = [spec.url_path for spec in PAGES if spec.listed]  # what the sidebar's navigation offers
DEFAULT_PAGE = PAGES[0].url_path  # also served at "/" (app.py's hidden root page)


def page_url(server, url_path: str, **query) -> str:
    return server.url(url_path, **query)


# ---- the server ----------------------------------------------------------------------------------
# ``streamlit run`` itself (streamlit.web.cli.main is what the ``streamlit`` command calls), plus a
# daemon thread that publishes this process's model load counts for the tests. The counter wraps the
# model loader before Streamlit starts, so that no load goes uncounted.
SERVER_CODE = r"""
import json, os, sys, threading, time
sys.path.insert(0, os.getcwd())
sys.path.append(os.path.join(os.getcwd(), "tests"))
from core.models import loaders
from load_counting import count_loads
load_counts = count_loads(loaders)
status = os.environ["LAB_E2E_STATUS"]

def publish():
    while True:
        try:
            tmp = status + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"load_counts": dict(load_counts), "pid": os.getpid()}, f)
            os.replace(tmp, status)
        except Exception:
            pass
        time.sleep(0.5)

threading.Thread(target=publish, daemon=True, name="lab-e2e-status").start()
from streamlit.web.cli import main
sys.argv = ["streamlit"] + sys.argv[1:]
sys.exit(main())
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB (from /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class LabServer:
    port: int
    proc: subprocess.Popen
    status_file: Path
    log_file: Path
    warmed: bool = field(default=False)

    def url(self, path: str = "", **query: str) -> str:
        base = f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"
        return base + ("?" + urllib.parse.urlencode(query) if query else "")

    def load_counts(self) -> dict[str, int]:
        time.sleep(1.2)  # the status file is rewritten every 0.5 s
        return json.loads(self.status_file.read_text(encoding="utf-8"))["load_counts"]

    def rss_mb(self) -> float:
        return rss_mb(self.proc.pid)

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_file.read_text(encoding="utf-8", errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM when the test process dies (no orphan after a killed run)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def start_server(work_dir: Path, script: str = "app.py") -> LabServer:
    """``streamlit run <script>`` on a free port; returns once ``/_stcore/health`` answers."""
    port = free_port()
    status_file, log_file = work_dir / "server-status.json", work_dir / "server.log"
    env = {**os.environ, "LAB_E2E_STATUS": str(status_file), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    # a data folder of its own (the class board's database, the lecturer secret), unless the test chose one: the
    # servers of two test workers never share one
    env.setdefault("LAB_DATA_DIR", str(work_dir / "data"))
    command = [sys.executable, "-c", SERVER_CODE, "run", script, "--server.headless", "true",
               "--server.fileWatcherType", "none", "--server.port", str(port), "--server.address", "127.0.0.1",
               "--browser.gatherUsageStats", "false"]
    log = open(log_file, "w", encoding="utf-8")
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            preexec_fn=_die_with_parent)
    log.close()
    server = LabServer(port, proc, status_file, log_file)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url("_stcore/health"), timeout=10) as response:
                if response.status == 200 and status_file.exists():
                    return server
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"streamlit did not become healthy in {TIMEOUT_S:.0f} s:\n{server.log_tail()}")
        time.sleep(0.5)


# ---- waiting -------------------------------------------------------------------------------------
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testConnectionState !== 'CONNECTED') return false;
  if (app.dataset.testScriptState !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  // a signature of what is on screen: idle only counts when it holds still
  return document.querySelectorAll('[data-testid="stElementContainer"]').length + ':' +
         document.querySelectorAll('.js-plotly-plot').length + ':' + location.href;
}"""


def wait_idle(page, timeout_s: float = TIMEOUT_S, settle_s: float = 1.5) -> None:
    """Wait until the app is connected, the script run has finished and nothing is stale; then check
    again ``settle_s`` later (a rerun triggered by a widget starts a moment after the event)."""
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = max(deadline - time.monotonic(), 1.0)
        first = page.wait_for_function(IDLE_JS, timeout=remaining * 1000, polling=250).json_value()
        page.wait_for_timeout(settle_s * 1000)
        if page.evaluate(IDLE_JS) == first:
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not finish its script run")


def wait_for(page, predicate, message: str, timeout_s: float = TIMEOUT_S / 2, interval_s: float = 1.0):
    """Poll ``predicate()`` (Python, may query the page) until it returns something truthy while the
    app is idle; returns that value."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        if page.evaluate(IDLE_JS):
            last = predicate()
            if last:
                return last
        page.wait_for_timeout(interval_s * 1000)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for: {message} (last: {last!r})")


def open_page(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=TIMEOUT_S * 1000)
    wait_idle(page)


# ---- checks and artefacts ------------------------------------------------------------------------
def body_text(page) -> str:
    return page.evaluate("() => document.body.innerText")


def check_healthy(page, *, allow_errors: bool = False) -> None:
    """No exception box, no "Traceback" anywhere, and (unless allowed) no st.error box."""
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.all_inner_texts()
    html = page.content()
    assert "Traceback" not in html and "Traceback" not in body_text(page)
    assert "Page not found" not in body_text(page)
    if not allow_errors:
        errors = page.locator('[data-testid="stAlertContentError"]')
        assert errors.count() == 0, errors.all_inner_texts()


def alerts(page, kind: str) -> list[str]:
    """Texts of the st.error / st.warning / st.info / st.success boxes (kind: Error, Warning, Info, Success)."""
    return page.locator(f'[data-testid="stAlertContent{kind}"]').all_inner_texts()


def plotly_data(page, key: str) -> str | None:
    """The data of the chart that ``ui.page.chart`` showed under ``key``, as JSON (traces, typed arrays
    included). By key, not by position: a chart drawn earlier on the page (a replay strip) must not be
    taken for it."""
    return page.evaluate("""(key) => {
      const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
      if (!plot || !plot.data) return null;
      const plain = (v) => (ArrayBuffer.isView(v) ? Array.from(v) : v);
      return JSON.stringify(plot.data.map((t) => {
        const o = {};
        for (const [k, v] of Object.entries(t)) o[k] = Array.isArray(v) ? v.map(plain) : plain(v);
        return o;
      }));
    }""", key)


def plotly_layout_titles(page, key: str | None = None) -> list[str]:
    """The titles of the page's charts, in page order; of the chart ``ui.page.chart`` showed under ``key`` only
    when it is given."""
    return page.evaluate("""(scope) => Array.from(document.querySelectorAll(`${scope} .js-plotly-plot`)).map((p) =>
      (p.layout && p.layout.title && (p.layout.title.text || p.layout.title)) || '')""",
                         f".st-key-{key}" if key else "")


def screenshot(page, name: str) -> Path:
    """A full-page screenshot of everything in the main area (and the sidebar) at its natural height."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    height = page.evaluate("""() => {
      const main = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
      return Math.max(main.scrollHeight, document.documentElement.scrollHeight, window.innerHeight);
    }""")
    size = page.viewport_size or VIEWPORT
    grown = int(min(max(height, size["height"]), MAX_SCREENSHOT_HEIGHT))
    page.set_viewport_size({"width": size["width"], "height": grown})
    page.wait_for_timeout(1500)  # plotly charts re-layout on resize
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
    return path


# ---- requests: nothing leaves localhost ------------------------------------------------------------
def foreign(url: str, port: int) -> bool:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return False
    return parts.hostname not in ("127.0.0.1", "localhost") or parts.port != port


def watch_requests(context) -> list[str]:
    """Every request URL the browser context makes from now on, collected as it goes."""
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    return requests


def assert_local_only(page, requests: list[str], port: int, label: str) -> None:
    outside = sorted({url for url in requests if foreign(url, port)})
    assert not outside, (label, outside)
    sources = page.evaluate("() => Array.from(document.images).map((img) => img.src)")
    assert not [src for src in sources if foreign(src, port)], (label, sources)


# ---- fixtures ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    reason = browser_missing_reason()
    if reason:
        pytest.skip(reason)
    server = start_server(tmp_path_factory.mktemp("lab-server"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    reason = browser_missing_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def warm_server(lab_server, browser):
    """The server after one page load of "/" (see the module docstring)."""
    if not lab_server.warmed:
        context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
        try:
            open_page(context.new_page(), lab_server.url())
        finally:
            context.close()
        lab_server.warmed = True
    return lab_server


@pytest.fixture
def page(browser, warm_server):
    """A fresh browser context per test: a new Streamlit session (its own session_state)."""
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
    context.set_default_timeout(TIMEOUT_S * 1000)
    tab = context.new_page()
    yield tab
    context.close()
