"""deploy/lecture_hall.py: N app processes behind Debian's nginx, each browser kept on one process by a cookie
that can only name the hall's own ports. The configuration is checked by ``nginx -t``; the hall itself runs
two real app processes (the browser tier: it starts servers)."""
from __future__ import annotations

import asyncio
import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchmarks.classroom_load import run_page, session_query
from benchmarks.common import free_port
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

    from e2e.test_upload_quota import open_session, put_file

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
        # tests/e2e/test_upload_quota.py)
        codes = _upload_flood(hall.url, f"{COOKIE}={hall.backends[0]}", UPLOAD_BURST + 3)
        assert codes == [204] * (UPLOAD_BURST + 1) + [429] * 2, codes
        forged = f"{COOKIE}=22"  # another service on this machine: never proxied to
        assert _backend_of(f"{hall.url}/_stcore/health", forged) in {str(p) for p in hall.backends}
        # a student's session through the proxy runs a page to its end
        result = asyncio.run(run_page(hall.url, "fill-mask", 300, session_query("fill-mask", 3),
                                      cookie=f"{COOKIE}={hall.backends[1]}"))
        assert result["status"] == "FINISHED_SUCCESSFULLY" and not result["exceptions"]
