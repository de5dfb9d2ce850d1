"""A lecture hall: several app processes behind nginx, each browser kept on one process.

    python -m deploy.lecture_hall                                  # 2 processes, http://127.0.0.1:8500
    python -m deploy.lecture_hall --processes 3 --listen 0.0.0.0   # the classroom LAN, port 8500

One process runs every session's page script on one Python interpreter, so a class shares one core's worth
of Python however many cores the machine has (``core/runtime/concurrency.py``). This starts ``--processes`` servers
(``streamlit run serve.py``, the embedded models loaded at start, about 0.8 GB each) on the loopback ports
after ``--port``, and Debian's nginx in front of them on ``--listen``:``--port``. The processes listen on
127.0.0.1 only: students reach them through nginx alone.

Sticky sessions: a Streamlit session lives in one process (its websocket, its uploads, its page state), so
every request of a browser must reach the same process. nginx's first answer to a browser sets the cookie
``lab_backend`` to a process drawn at random (``split_clients``); every later request, the websocket
included, goes where the cookie says. A cookie naming anything but one of the hall's own ports is
ignored (a new draw), so the cookie cannot point nginx at another service on this machine.

Stop with Ctrl-C (or SIGTERM): nginx and every app process are stopped. Needs ``nginx`` on the PATH
(``apt install nginx-light``); it runs as the calling user with its files in a temporary directory.

The app logs hold the class board's lecturer secret (``core.board.rules.lecturer_secret`` prints it at start): they go
to a fresh private folder (``tempfile.mkdtemp``: 0700, a new name each run, so no other user can read them or
plant a symbolic link there beforehand), each log file 0600 and never opened through a symbolic link.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from deploy.upload_quota import UPLOADS_PER_MINUTE

ROOT = Path(__file__).resolve().parents[1]
COOKIE = "lab_backend"
DEFAULT_PORT = 8500
STARTUP_TIMEOUT_S = 180.0
UPLOAD_BURST = 10  # uploads a client may start at once before nginx's per-minute rate applies


def find_nginx() -> str | None:
    """Debian's nginx, also where ``/usr/sbin`` is not on the PATH (an ordinary user's shell)."""
    return shutil.which("nginx", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin"]))


def backend_ports(port: int, processes: int) -> list[int]:
    return [port + 1 + i for i in range(processes)]


def nginx_config(listen: str, port: int, backends: list[int], prefix: Path) -> str:
    """The whole nginx configuration of a hall: ``listen``:``port`` in front of the app processes on
    127.0.0.1:``backends``, sticky by the ``lab_backend`` cookie; pid, logs and temporary files in ``prefix``."""
    if not backends:
        raise ValueError("a hall needs at least one app process")
    share = int(10000 / len(backends)) / 100  # nginx takes two decimals; "*" gets the remainder
    draws = "".join(f"        {share:.2f}% {p};\n" for p in backends[:-1])
    draws += f"        * {backends[-1]};\n"
    known = "|".join(str(p) for p in backends)
    temp = "\n".join(f"    {name}_temp_path {prefix / (name + '_temp')};"
                     for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return f"""# Written by deploy/lecture_hall.py; see its docstring.
worker_processes 1;
pid {prefix / 'nginx.pid'};
error_log {prefix / 'error.log'} warn;
events {{ worker_connections 1024; }}

http {{
    access_log off;
{temp}

    # A new browser is sent to a process drawn at random...
    split_clients "${{remote_addr}}${{remote_port}}${{msec}}" $lab_draw {{
{draws}    }}
    # ...and stays there: the cookie is honoured only when it names one of the hall's own ports.
    map $cookie_{COOKIE} $lab_port {{
        "~^({known})$" $cookie_{COOKIE};
        default $lab_draw;
    }}
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        "" close;
    }}

    # Uploads per client address (the app processes see every request come from 127.0.0.1, so they cannot count
    # per client: deploy/upload_quota.py, LAB_UPLOADS_PER_MINUTE=0 below); each session's own bound stays theirs.
    limit_req_zone $binary_remote_addr zone=lab_uploads:1m rate={UPLOADS_PER_MINUTE}r/m;
    limit_req_status 429;

    server {{
        listen {listen}:{port};
        client_max_body_size 2m;  # the app accepts uploads of 1 MB (.streamlit/config.toml)
        # ...held in memory: started as root, nginx's workers run as nobody and cannot write a body to the
        # temporary directory (uploads through the hall were HTTP 500)
        client_body_buffer_size 2m;
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_read_timeout 1d;  # a session's websocket stays open for the whole lecture
        proxy_buffering off;
        add_header Set-Cookie "{COOKIE}=$lab_port; Path=/; HttpOnly; SameSite=Lax" always;

        location / {{
            proxy_pass http://127.0.0.1:$lab_port;
        }}
        location /_stcore/upload_file/ {{
            limit_req zone=lab_uploads burst={UPLOAD_BURST} nodelay;
            proxy_pass http://127.0.0.1:$lab_port;
        }}
        # Streamlit's metrics (cache names and sizes, upload bytes, session counts) are nobody's business on the
        # LAN; any spelling nginx would pass on (//_stcore/metrics, a trailing slash, a query) ends here.
        location ~ ^/+_stcore/+metrics {{
            return 404;
        }}
    }}
}}
"""


def private_log_dir() -> Path:
    """A new folder for one hall's logs, readable by this user only; kept after the hall stops, for reading."""
    return Path(tempfile.mkdtemp(prefix="lecture-hall-logs-"))


def open_log(path: Path) -> int:
    """``path`` opened for writing, owner-only (0600 even if it existed), refused if it is a symbolic link: a file
    descriptor for the app process's output."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def _wait_healthy(url: str, procs: list[subprocess.Popen], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            raise RuntimeError(f"a process of the hall exited before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {timeout_s:.0f} s")


class LectureHall:
    """The running hall: ``start()`` returns once nginx and every app process answer; ``stop()`` ends all."""

    def __init__(self, processes: int = 2, listen: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 script: str = "serve.py", log_dir: Path | None = None):
        if processes < 1:
            raise ValueError("--processes must be at least 1")
        self.listen, self.port, self.script = listen, port, script
        self.backends = backend_ports(port, processes)
        self.prefix = Path(tempfile.mkdtemp(prefix="lecture-hall-"))
        self.log_dir = log_dir or self.prefix
        self.procs: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.listen in ("0.0.0.0", "127.0.0.1") else self.listen
        return f"http://{host}:{self.port}"

    def start(self, timeout_s: float = STARTUP_TIMEOUT_S) -> LectureHall:
        nginx = find_nginx()
        if nginx is None:
            raise RuntimeError("nginx is not installed (Debian: apt install nginx-light)")
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.prefix / f"{name}_temp").mkdir(exist_ok=True)
        conf = self.prefix / "nginx.conf"
        conf.write_text(nginx_config(self.listen, self.port, self.backends, self.prefix), encoding="utf-8")
        env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
               "LAB_UPLOADS_PER_MINUTE": "0"}  # nginx counts per client address (nginx_config)
        try:
            for backend in self.backends:
                log = open_log(self.log_dir / f"app-{backend}.log")
                try:
                    self.procs.append(subprocess.Popen(
                        [sys.executable, "-m", "streamlit", "run", self.script, "--server.headless", "true",
                         "--server.address", "127.0.0.1", "--server.port", str(backend),
                         "--browser.gatherUsageStats", "false"],
                        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
                finally:
                    os.close(log)
            self.procs.append(subprocess.Popen([nginx, "-p", str(self.prefix), "-c", str(conf),
                                                "-e", str(self.prefix / "error.log"), "-g", "daemon off;"],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
            for backend in self.backends:
                _wait_healthy(f"http://127.0.0.1:{backend}/_stcore/health", self.procs, timeout_s)
            _wait_healthy(f"{self.url}/_stcore/health", self.procs, timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):  # nginx first: no new requests reach a stopping app
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        self.procs = []
        shutil.rmtree(self.prefix, ignore_errors=True)

    def __enter__(self) -> LectureHall:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.lecture_hall", description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=2, help="app processes (default 2: one per core here)")
    parser.add_argument("--listen", default="127.0.0.1",
                        help="address nginx listens on (default 127.0.0.1; 0.0.0.0 for the classroom LAN)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"nginx's port (default {DEFAULT_PORT}); "
                        "the app processes use the next ones on 127.0.0.1")
    args = parser.parse_args(argv)
    log_dir = private_log_dir()
    hall = LectureHall(args.processes, args.listen, args.port, log_dir=log_dir)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        hall.start()
        print(f"lecture hall ready: {hall.url} ({args.processes} processes on 127.0.0.1:"
              f"{hall.backends[0]}-{hall.backends[-1]}; their logs: {log_dir}/app-<port>.log)", flush=True)
        while all(p.poll() is None for p in hall.procs):
            time.sleep(1)
        print("a process of the hall stopped; stopping the others", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        hall.stop()


if __name__ == "__main__":
    sys.exit(main())
