"""deploy/lecture_hall.py: N app processes behind Debian's nginx, each browser kept on one process by a cookie
that can only name the hall's own ports. The configuration is checked by ``nginx -t``; the hall itself runs
two real app processes (the browser tier: it starts servers)."""
from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchmarks.classroom_load import run_page, session_query
from benchmarks.common import free_port
from deploy import lecture_hall
from deploy.lecture_hall import COOKIE, UPLOAD_BURST, LectureHall, backend_ports, find_nginx, nginx_config
from deploy.upload_quota import UPLOADS_PER_MINUTE

NGINX = find_nginx()
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt install nginx-light)")


def test_the_processes_listen_on_loopback_after_the_proxy_port():
    conf = nginx_config("0.0.0.0", 8500, backend_ports(8500, 3), Path("/tmp/hall"))
    assert backend_ports(8500, 3) == [8501, 8502, 8503]
    assert "listen 0.0.0.0:8500;" in conf
    assert set(re.findall(r"proxy_pass (\S+);", conf)) == {"http://127.0.0.1:$lab_port"}
    # the cookie is honoured only for the hall's own ports; anything else gets a new draw
    assert f'"~^(8501|8502|8503)$" $cookie_{COOKIE};' in conf
    draws = re.findall(r"^\s+(\S+%|\*) (\d+);$", conf, flags=re.M)
    assert [port for _, port in draws] == ["8501", "8502", "8503"]
    assert sum(float(share[:-1]) for share, _ in draws if share != "*") < 100


# ---- the logs hold the lecturer secret (#53 item 3) ------------------------------------------------------
def test_the_hall_logs_to_a_new_private_folder_each_run(monkeypatch):
    """On main every hall logged to the fixed /tmp/lecture-hall-logs (0755), which another user could read, or
    create first with a symbolic link inside."""
    folders = []

    class Recorded:
        def __init__(self, *args, log_dir, **kwargs):
            folders.append(log_dir)
            self.backends = [0]

        def start(self):
            raise RuntimeError("not started in this test")

        def stop(self):
            pass

    monkeypatch.setattr(lecture_hall, "LectureHall", Recorded)
    monkeypatch.setattr(lecture_hall.signal, "signal", lambda *args: None)  # main's SIGTERM handler: not in pytest
    try:
        assert lecture_hall.main([]) == 2 and lecture_hall.main([]) == 2
        assert folders[0] != folders[1]
        for folder in folders:
            info = folder.lstat()
            assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


class _NoProcess:
    """What ``subprocess.Popen`` returns in these tests: a process that runs until stopped."""

    def __init__(self, *args, **kwargs):
        pass

    def poll(self):
        return None

    def terminate(self):
        pass

    def wait(self, timeout=None):
        return 0


def _start_without_processes(monkeypatch, log_dir: Path) -> LectureHall:
    monkeypatch.setattr(lecture_hall, "find_nginx", lambda: "/bin/true")
    monkeypatch.setattr(lecture_hall.subprocess, "Popen", _NoProcess)
    monkeypatch.setattr(lecture_hall, "_wait_healthy", lambda *args: None)
    hall = LectureHall(2, "127.0.0.1", 8500, log_dir=log_dir)
    try:
        return hall.start()
    finally:
        hall.stop()


def test_the_app_logs_are_readable_by_their_owner_only(monkeypatch, tmp_path):
    """On main each app-<port>.log was 0644: any local user read ``class board lecturer secret: …``."""
    (tmp_path / "app-8501.log").write_text("an older hall's log", encoding="utf-8")
    os.chmod(tmp_path / "app-8501.log", 0o644)
    _start_without_processes(monkeypatch, tmp_path)
    for port in (8501, 8502):
        assert stat.S_IMODE((tmp_path / f"app-{port}.log").stat().st_mode) == 0o600


def test_an_app_log_is_never_written_through_a_symbolic_link(monkeypatch, tmp_path):
    """A link planted where a log goes would make the hall overwrite the file it points to."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    (tmp_path / "app-8501.log").symlink_to(victim)
    with pytest.raises(OSError):
        _start_without_processes(monkeypatch, tmp_path)
    assert victim.read_text(encoding="utf-8") == "keep me"


@pytest.mark.nginx
@needs_nginx
def test_nginx_accepts_the_configuration(tmp_path):
    for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / f"{name}_temp").mkdir()
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_config("127.0.0.1", free_port(), [free_port(), free_port()], tmp_path), encoding="utf-8")
    check = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


def _backend_of(url: str, cookie: str | None = None) -> str:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        cookies = response.headers.get_all("Set-Cookie")
    return next(c.split(";")[0].split("=", 1)[1] for c in cookies if c.startswith(f"{COOKIE}="))


async def _websocket_backend(url: str, cookie: str) -> str:
    import websockets

    async with websockets.connect(url.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"],
                                  additional_headers={"Cookie": cookie}) as ws:
        return next(v.split(";")[0].split("=", 1)[1] for k, v in ws.response.headers.raw_items()
                    if k.lower() == "set-cookie" and v.startswith(f"{COOKIE}="))


def test_uploads_are_rate_limited_per_client_in_the_hall():
    conf = nginx_config("0.0.0.0", 8500, backend_ports(8500, 2), Path("/tmp/hall"))
    assert f"rate={UPLOADS_PER_MINUTE}r/m;" in conf and "location /_stcore/upload_file/ {" in conf
    assert "limit_req zone=lab_uploads" in conf and "client_max_body_size 2m;" in conf


def _upload_flood(url: str, cookie: str, count: int) -> list[int]:
    """``count`` files of 1 MB PUT one after another by one session through the hall: their HTTP statuses."""
    import requests

    from e2e.test_serve import open_session, put_file

    http = requests.Session()
    http.cookies.set(*cookie.split("=", 1))  # the process the session's websocket reaches too
    http.get(f"{url}/_stcore/health", timeout=30).raise_for_status()
    xsrf = http.cookies["_streamlit_xsrf"]
    return asyncio.run(open_session(url, xsrf, lambda session: [put_file(url, http, xsrf, session)[0]
                                                                for _ in range(count)], cookie=cookie))


@pytest.mark.nginx
@needs_nginx
def test_a_hall_of_two_processes_keeps_each_browser_on_one(tmp_path):
    port = free_port()
    hall = LectureHall(2, "127.0.0.1", port, script="app.py", log_dir=tmp_path)
    hall.backends = [free_port(), free_port()]  # free ports, not port + 1 and port + 2
    with hall:
        page = f"{hall.url}/"
        first_visits = {_backend_of(page) for _ in range(24)}
        assert first_visits == {str(p) for p in hall.backends}  # new browsers are spread over both processes
        for backend in hall.backends:
            cookie = f"{COOKIE}={backend}"
            assert {_backend_of(page, cookie) for _ in range(5)} == {str(backend)}  # and stay where they are
            assert asyncio.run(_websocket_backend(hall.url, cookie)) == str(backend)  # the session's websocket too
        # Streamlit's metrics are open on a process (what a single server exposes: README), closed through nginx
        with urllib.request.urlopen(f"http://127.0.0.1:{hall.backends[0]}/_stcore/metrics", timeout=30) as direct:
            assert direct.status == 200
        for path in ("/_stcore/metrics", "//_stcore/metrics", "/_stcore/metrics/", "/_stcore//metrics?x=1"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{hall.url}{path}", timeout=30)
            assert refused.value.code == 404, path
        # uploads through nginx (on main each was HTTP 500: its workers could not write the body to disk): one
        # address gets its burst, then nginx's 429 (app.py here: the per-session bound is serve.py's, tested in
        # tests/e2e/test_serve.py)
        codes = _upload_flood(hall.url, f"{COOKIE}={hall.backends[0]}", UPLOAD_BURST + 3)
        assert codes == [204] * (UPLOAD_BURST + 1) + [429] * 2, codes
        forged = f"{COOKIE}=22"  # another service on this machine: never proxied to
        assert _backend_of(f"{hall.url}/_stcore/health", forged) in {str(p) for p in hall.backends}
        # a student's session through the proxy runs a page to its end
        result = asyncio.run(run_page(hall.url, "fill-mask", 300, session_query("fill-mask", 3),
                                      cookie=f"{COOKIE}={hall.backends[1]}"))
        assert result["status"] == "FINISHED_SUCCESSFULLY" and not result["exceptions"]
