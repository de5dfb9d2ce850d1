"""Nothing acknowledged is lost: the class board's store under kill -9 (SQLite WAL, fast tier) and on a real
PostgreSQL server that the test starts and stops itself (``-m postgres``; skipped when PostgreSQL is not
installed: ``apt-get install postgresql``, which ``.ci/run`` does)."""
from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from core.board import rules as board
from core.board.store import HIDDEN, SHOWN, Store
from core.guard.errors import LabError

ROOT = Path(__file__).resolve().parents[1]
SECRET = "durability-secret"

# A process that sends as fast as it can to one board, from many browsers (the rate limit is per browser), and
# prints each id the store acknowledged: what a student would have seen as "sent".
BURST = r"""
import sys
from core.board import rules as board
from core.board.store import Store
store = Store(sys.argv[1])
for i in range(100_000):
    me = board.issue_identity(store, sys.argv[2], None, "o")
    number = board.send(store, sys.argv[2], me, "o", f"第{i}个苹果", None)
    print(number, flush=True)
"""


@pytest.mark.subprocess
def test_kill_9_during_a_burst_of_sends_loses_nothing_acknowledged(tmp_path, monkeypatch):
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    monkeypatch.setenv(board.ORIGIN_LIMIT_ENV, "0")  # one origin sends everything here
    url = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    b = board.open_board(Store(url), SECRET, "苹果", "", "elmo")
    proc = subprocess.Popen([sys.executable, "-c", BURST, url, b.id], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    acknowledged = []
    for line in proc.stdout:
        acknowledged.append(int(line))
        if len(acknowledged) == 40:  # well inside the burst: the next send is being written right now
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=30)
    acknowledged += [int(line) for line in proc.stdout.read().split()]  # printed before the kill landed
    assert proc.returncode == -signal.SIGKILL and len(acknowledged) >= 40
    stored = {c.id for c in Store(url).contributions(b.id)}  # a restart: a new process opens the file
    assert set(acknowledged) <= stored


# ---- PostgreSQL -----------------------------------------------------------------------------------------

def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent  # Debian's /usr/lib/postgresql/<version>/bin
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres_url():
    """A throwaway PostgreSQL cluster on a free port (as the ``postgres`` user when run as root, which PostgreSQL
    refuses to run as, in a folder of its own that user can reach); stopped and removed afterwards."""
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="lab-board-pg-"))
    data = home / "data"
    if as_user:
        shutil.chown(home, "postgres")
    port = _free_port()
    pg_ctl = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", "lab", "--auth=trust", "-E",
                        "UTF8"], check=True, capture_output=True)
        subprocess.run([*pg_ctl, "-w", "-l", str(home / "pg.log"), "-o",
                        f"-p {port} -k {home} -c listen_addresses=127.0.0.1", "start"], check=True, capture_output=True)
        subprocess.run([*as_user, str(bin_dir / "createdb"), "-h", str(home), "-p", str(port), "-U", "lab", "lab"],
                       check=True, capture_output=True)
        yield f"postgresql+psycopg://lab@127.0.0.1:{port}/lab"
    finally:
        subprocess.run([*pg_ctl, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.postgres
def test_the_board_on_postgresql(postgres_url, monkeypatch):
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    store = Store(postgres_url)
    b = board.open_board(store, SECRET, "苹果", "水果，公司", "bert")
    phone_a, phone_b = (board.issue_identity(store, b.id, None, origin) for origin in ("o1", "o2"))
    first = board.send(store, b.id, phone_a, "o1", "我吃了一个苹果。", "水果")
    board.send(store, b.id, phone_b, "o2", "苹果发布了新手机。", "公司")
    for i in range(board.CLIENT_LIMIT - 1):
        board.send(store, b.id, phone_a, "o1", f"苹果{i}", None)
    with pytest.raises(LabError):
        board.send(store, b.id, phone_a, "o1", "又一个苹果", None)
    with pytest.raises(LabError):
        board.moderate(store, "forged", b.id, "hide", first)
    board.moderate(store, SECRET, b.id, "hide", first)
    again = Store(postgres_url)  # another machine of the hall
    assert again.board(b.id) == b and again.latest_board() == b
    statuses = [(c.sentence, c.status) for c in again.contributions(b.id, (SHOWN, HIDDEN))][:2]
    assert statuses == [("我吃了一个苹果。", HIDDEN), ("苹果发布了新手机。", SHOWN)]
    started = time.monotonic()
    assert board.withdraw(again, b.id, first + 1, phone_b) and time.monotonic() - started < 5
    assert first == 1  # the board's own numbers


@pytest.mark.postgres
def test_caps_hold_under_concurrent_sends_on_postgresql(postgres_url, monkeypatch):
    """PostgreSQL's READ COMMITTED would let two transactions count the same 199 and both insert: the board's row
    lock (``Store.add_checked``) orders them."""
    from tests.test_board_class import together
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    monkeypatch.setenv(board.ORIGIN_LIMIT_ENV, "0")
    store = Store(postgres_url)
    b = board.open_board(store, SECRET, "苹果", "", "bert")
    limits = board.Limits(board.WINDOW_S, 10_000, 0, board.MAX_CONTRIBUTIONS)
    for i in range(board.MAX_CONTRIBUTIONS - 5):
        store.add_checked(b.id, f"filler-{i}", "o", f"苹果{i}", None, limits)
    phones = [board.issue_identity(store, b.id, None, f"o{i}") for i in range(20)]
    results = together([lambda me=me: board.send(store, b.id, me, "o", "又一个苹果", None) for me in phones])
    assert sum(isinstance(r, int) for r in results) == 5
    assert len(store.contributions(b.id)) == board.MAX_CONTRIBUTIONS
    me = board.issue_identity(store, b.id, None, "one-phone")
    store.clear(b.id)
    results = together([lambda i=i: board.send(store, b.id, me, "o", f"苹果{i}", None) for i in range(20)])
    assert sum(isinstance(r, int) for r in results) == board.CLIENT_LIMIT
