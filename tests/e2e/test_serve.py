"""``streamlit run serve.py`` (the README's run command), one server for this file's tests:

- the embedded models are loaded as the server starts, before anyone visits, and the pages then use those same
  instances (no second load);
- its raw upload endpoint, attacked as on main (#39 item 2): after ``GET /_stcore/health`` gave the XSRF cookie, one
  session PUT 150 files of 1 MB in 2.1 s and all were kept. Here a session holds at most ``MAX_SESSION_FILES`` files
  and one client address starts at most ``LAB_UPLOADS_PER_MINUTE`` uploads a minute (``deploy/upload_quota.py``).

The model test comes first (pytest runs a file's tests in order): it counts the loads before any visit."""
from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid

import pytest
import requests

from core.models.catalogue import list_models
from deploy.upload_quota import MAX_SESSION_FILES
from e2e.conftest import VIEWPORT, body_text, check_healthy, open_page, page_url, start_server

pytestmark = pytest.mark.browser  # the slow tier: a served app in real Chromium

READY_TIMEOUT_S = 300
READY_LINE = "embedded models ready"  # serve.READY_LINE (importing serve.py would build an st.App here)
PER_MINUTE = 15
MB = 1_000_000  # within server.maxUploadSize = 1 MiB


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LAB_UPLOADS_PER_MINUTE", str(PER_MINUTE))
        server = start_server(tmp_path_factory.mktemp("serve"), script="serve.py")
    yield server
    server.stop()


def test_serve_py_loads_the_embedded_models_before_the_first_visit(browser, served):
    deadline = time.monotonic() + READY_TIMEOUT_S
    while READY_LINE not in served.log_tail(100_000):
        assert time.monotonic() < deadline, served.log_tail()
        time.sleep(0.5)
    embedded = {m.name for m in list_models() if m.available}
    assert served.load_counts() == {name: 1 for name in embedded}  # before any browser connected
    context = browser.new_context(viewport=VIEWPORT, locale="zh-CN")
    try:
        page = context.new_page()
        open_page(page, page_url(served, "fill-mask"))
        check_healthy(page)
        assert "[MASK]" in body_text(page)
    finally:
        context.close()
    assert served.load_counts() == {name: 1 for name in embedded}  # the page used the warmed models
    assert "Traceback" not in served.log_tail(100_000)


async def open_session(base: str, xsrf: str, body, cookie: str = ""):
    """Open a session over the websocket of the server at ``base`` as a browser does (``cookie``: more cookies,
    e.g. a lecture hall's ``lab_backend=PORT``), run ``body(session_id)`` while it is open."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async with websockets.connect(base.replace("http://", "ws://") + "/_stcore/stream",
                                  subprotocols=["streamlit", xsrf], max_size=None,
                                  additional_headers={"Cookie": f"_streamlit_xsrf={xsrf}; {cookie}".rstrip("; "),
                                                      "Origin": base}) as ws:
        back = BackMsg()
        back.rerun_script.query_string = ""
        await ws.send(back.SerializeToString())
        while True:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(ws.recv(), 120))
            if message.WhichOneof("type") == "new_session":
                session_id = message.new_session.initialize.session_id
                break
        return await asyncio.to_thread(body, session_id)


def in_a_thread_of_its_own(coroutine):
    """``asyncio.run(coroutine)`` on a thread of its own: this module's browser (Playwright's sync API) keeps an
    event loop running on the test's thread."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def put_file(base: str, http: requests.Session, xsrf: str, session_id: str) -> tuple[int, str]:
    """PUT one file of 1 MB to the raw endpoint: ``(HTTP status, file id)``."""
    file_id = uuid.uuid4().hex
    response = http.put(f"{base}/_stcore/upload_file/{session_id}/{file_id}",
                        files={"file": ("a.txt", b"x" * MB, "text/plain")}, headers={"X-Xsrftoken": xsrf}, timeout=60)
    return response.status_code, file_id


def test_a_session_and_a_client_cannot_upload_without_bound(served):
    base = served.url().rstrip("/")
    http = requests.Session()
    http.get(served.url("_stcore/health"), timeout=30).raise_for_status()
    xsrf = http.cookies["_streamlit_xsrf"]

    def flood(session_id: str) -> list[int]:  # ten 1 MB files at once, as the attack on main did
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            return sorted(code for code, _ in pool.map(lambda _: put_file(base, http, xsrf, session_id), range(10)))

    codes = in_a_thread_of_its_own(open_session(base, xsrf, flood))
    assert codes == [204] * MAX_SESSION_FILES + [413] * (10 - MAX_SESSION_FILES), codes

    def one_at_a_time(session_id: str) -> list[int]:  # within the session's bound: deleted after each upload
        codes = []
        for _ in range(PER_MINUTE - 10 + 1):
            code, file_id = put_file(base, http, xsrf, session_id)
            codes.append(code)
            if code == 204:
                http.delete(f"{base}/_stcore/upload_file/{session_id}/{file_id}",
                            headers={"X-Xsrftoken": xsrf}, timeout=30)
        return codes

    codes = in_a_thread_of_its_own(open_session(base, xsrf, one_at_a_time))  # a new session of the same client
    assert codes == [204] * (PER_MINUTE - 10) + [429], codes  # the flood's ten attempts counted too
