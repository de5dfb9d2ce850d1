"""deploy/upload_quota.py on its own (the fast tier): parallel uploads of one session counted while in flight,
uploads per client address per minute, other requests untouched. The served endpoint: tests/e2e/test_serve.py."""
from __future__ import annotations

import asyncio

from deploy.upload_quota import MAX_ADDRESS_BYTES, MAX_ADDRESS_FILES, MAX_SESSION_BYTES, MAX_SESSION_FILES, UploadQuota


class SlowUploads:
    """Streamlit's side: stores each upload after a pause (the body arriving), so uploads overlap."""

    def __init__(self):
        self.held: dict[str, list[int]] = {}

    async def __call__(self, scope, receive, send):
        await asyncio.sleep(0.05)
        session = scope["path"].split("/")[-2]
        self.held.setdefault(session, []).append(int(dict(scope["headers"])[b"content-length"]))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def files(self, session: str) -> tuple[int, int]:
        return len(self.held.get(session, [])), sum(self.held.get(session, []))


async def _request(app, path: str, *, method: str = "PUT", client: str = "10.0.0.1", size: int = 1000) -> int:
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "client": (client, 5000),
             "headers": [(b"content-length", str(size).encode())]}
    await app(scope, None, send)
    return sent[0]["status"]


def test_parallel_uploads_of_one_session_cannot_pass_the_check_together():
    backend = SlowUploads()
    app = UploadQuota(backend, held=backend.files, per_minute=0)

    async def flood():
        return await asyncio.gather(*(_request(app, f"/_stcore/upload_file/s1/f{i}") for i in range(10)))

    codes = asyncio.run(flood())
    assert sorted(codes) == [204] * MAX_SESSION_FILES + [413] * (10 - MAX_SESSION_FILES)
    assert backend.files("s1")[0] == MAX_SESSION_FILES and app.bookkeeping()[0] == set()  # none left in flight
    backend.held["s1"].clear()  # its files deleted: nothing is left counted, the session has its full bound again
    assert sorted(asyncio.run(flood())) == [204] * MAX_SESSION_FILES + [413] * (10 - MAX_SESSION_FILES)
    assert asyncio.run(_request(app, "/_stcore/upload_file/s2/f0", size=MAX_SESSION_BYTES + 1)) == 413  # bytes too
    assert asyncio.run(_request(app, "/_stcore/upload_file/s3/f0")) == 204  # another session has its own bound


def test_uploads_per_client_address_per_minute():
    backend = SlowUploads()
    now = [0.0]
    app = UploadQuota(backend, held=lambda session: (0, 0), per_minute=4, clock=lambda: now[0])
    codes = [asyncio.run(_request(app, f"/_stcore/upload_file/s{i}/f")) for i in range(5)]
    assert codes == [204] * 4 + [429]
    assert asyncio.run(_request(app, "/_stcore/upload_file/s9/f", client="10.0.0.2")) == 204  # another address
    now[0] = 61.0
    assert asyncio.run(_request(app, "/_stcore/upload_file/s5/f")) == 204  # a minute later
    assert app.bookkeeping()[1] == {"10.0.0.1"}  # a quiet address is forgotten


def test_other_requests_pass_untouched():
    backend = SlowUploads()
    app = UploadQuota(backend, held=lambda session: (99, 0), per_minute=1)
    assert asyncio.run(_request(app, "/_stcore/upload_file/s1/f", method="DELETE")) == 204
    assert asyncio.run(_request(app, "/_stcore/health", method="PUT")) == 204


def test_the_files_one_address_holds_are_bounded_over_time():
    """On main the per-minute count was the only per-address bound: one address that kept its sessions open held
    56 files after 4 minutes. Now its sessions together hold at most MAX_ADDRESS_FILES, whatever the rate."""
    backend = SlowUploads()
    now = [0.0]
    app = UploadQuota(backend, held=backend.files, per_minute=2, clock=lambda: now[0])
    codes = []
    for i in range(MAX_ADDRESS_FILES + 5):  # a new session each time, under two uploads a minute: within the rate
        now[0] += 31
        codes.append(asyncio.run(_request(app, f"/_stcore/upload_file/s{i}/f")))
    assert codes == [204] * MAX_ADDRESS_FILES + [413] * 5
    assert sum(backend.files(f"s{i}")[0] for i in range(MAX_ADDRESS_FILES + 5)) == MAX_ADDRESS_FILES
    assert asyncio.run(_request(app, "/_stcore/upload_file/t0/f", client="10.0.0.2")) == 204  # another address
    backend.held["s0"].clear()  # a session expired and its file was freed: room for one more
    now[0] += 31
    assert asyncio.run(_request(app, "/_stcore/upload_file/s99/f")) == 204
    now[0] += 31
    assert asyncio.run(_request(app, "/_stcore/upload_file/s100/f")) == 413
    app = UploadQuota(backend, held=backend.files, per_minute=100)  # bytes too: files of 1.5 MiB, one a session
    size = 3 * MAX_ADDRESS_BYTES // 20
    codes = [asyncio.run(_request(app, f"/_stcore/upload_file/b{i}/f", client="10.0.0.3", size=size)) for i in range(7)]
    assert codes == [204] * 6 + [413]


def test_an_address_whose_sessions_hold_nothing_is_forgotten():
    backend = SlowUploads()
    now = [0.0]
    app = UploadQuota(backend, held=backend.files, per_minute=5, clock=lambda: now[0])
    assert asyncio.run(_request(app, "/_stcore/upload_file/s1/f")) == 204
    now[0] += 61
    assert asyncio.run(_request(app, "/_stcore/upload_file/t1/f", client="10.0.0.2")) == 204
    assert app.bookkeeping()[1] == {"10.0.0.1", "10.0.0.2"}  # 10.0.0.1's session still holds its file
    backend.held.clear()  # every file freed
    now[0] += 61
    asyncio.run(_request(app, "/_stcore/upload_file/u1/f", client="10.0.0.3"))
    assert app.bookkeeping()[1] == {"10.0.0.3"}
