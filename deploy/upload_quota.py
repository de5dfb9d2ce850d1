"""What one session and one client may upload: ASGI middleware in front of Streamlit's
``PUT /_stcore/upload_file/<session>/<file>`` (``serve.py`` installs it in its ``st.App``).

Streamlit bounds each file (``server.maxUploadSize``) but not how many a session sends or keeps: after
``GET /_stcore/health`` gave the XSRF cookie, one session PUT 150 files of 1 MB in 2.1 s, and 62 MB were still
held 150 s after it disconnected (a session's files live until the session expires). The app has one
single-file upload box, so here a session holds at most ``MAX_SESSION_FILES`` files and ``MAX_SESSION_BYTES``
bytes, counting uploads still in flight (parallel PUTs cannot all pass the check before any is stored); one
client address starts at most ``LAB_UPLOADS_PER_MINUTE`` uploads a minute, and its sessions together hold at most
``MAX_ADDRESS_FILES`` files and ``MAX_ADDRESS_BYTES`` bytes (the rate alone let one address that kept its sessions
open hold 56 files after 4 minutes, and a disconnected session's files stay until Streamlit drops it). Behind the
lecture hall's nginx every request comes from 127.0.0.1, so there nginx counts uploads per client instead
(``deploy/lecture_hall.py``) and the hall turns both per-address bounds off (``LAB_UPLOADS_PER_MINUTE=0``).
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable

MAX_SESSION_FILES = 3  # the app's one upload box holds one file; a replaced file is deleted by the browser
MAX_SESSION_BYTES = 3 * 1024 * 1024  # three files of server.maxUploadSize = 1 MB
UPLOADS_PER_MINUTE = 20  # per client address, unless LAB_UPLOADS_PER_MINUTE says otherwise (0: no count)
MAX_ADDRESS_FILES = 10  # held by one client address's sessions together: a phone reloading the page a few times
MAX_ADDRESS_BYTES = 10 * 1024 * 1024
UPLOAD_PATH = re.compile(r"^(?:/[^/]+)*/_stcore/upload_file/([^/]+)/([^/]+)/?$")


def held_by_session(session_id: str) -> tuple[int, int]:
    """``(files, bytes)`` that Streamlit's upload manager holds for ``session_id``."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return 0, 0
    manager = Runtime.instance().uploaded_file_mgr
    files = list(getattr(manager, "file_storage", {}).get(session_id, {}).values())
    return len(files), sum(len(f.data) for f in files)


def uploads_per_minute() -> int:
    return max(0, int(os.environ.get("LAB_UPLOADS_PER_MINUTE", str(UPLOADS_PER_MINUTE))))


class UploadQuota:
    """The ASGI middleware; ``held(session_id) -> (files, bytes)`` and ``clock`` are replaceable for tests."""

    def __init__(self, app, *, held: Callable[[str], tuple[int, int]] = held_by_session,
                 per_minute: int | None = None, clock: Callable[[], float] = time.monotonic):
        self.app, self.held, self.clock = app, held, clock
        self.per_minute = uploads_per_minute() if per_minute is None else per_minute
        self._lock = threading.Lock()
        self._in_flight: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # session -> [files, bytes]
        self._recent: dict[str, deque] = {}  # client address -> start times of its uploads in the last minute
        self._sessions_of: dict[str, set[str]] = {}  # client address -> its sessions that uploaded and may hold files

    def bookkeeping(self) -> tuple[set[str], set[str]]:
        """The sessions with uploads in flight and the client addresses remembered, now: each table holds only
        what is active (a session goes when its last upload ends, an address after a quiet minute once its
        sessions hold no file)."""
        with self._lock:
            return set(self._in_flight), set(self._recent) | set(self._sessions_of)

    async def __call__(self, scope, receive, send):
        match = UPLOAD_PATH.match(scope.get("path", "")) if scope["type"] == "http" else None
        if match is None or scope.get("method") != "PUT":
            await self.app(scope, receive, send)
            return
        session = match.group(1)
        length = _content_length(scope)
        refusal = self._admit(session, (scope.get("client") or ("?",))[0], length)
        if refusal:
            await _refuse(send, *refusal)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            with self._lock:
                flight = self._in_flight[session]
                flight[0] -= 1
                flight[1] -= length
                if flight[0] <= 0:
                    del self._in_flight[session]

    def _admit(self, session: str, client: str, length: int) -> tuple[int, str] | None:
        """None, and the upload counted in flight; else ``(status, reason)``."""
        files, size = self.held(session)
        now = self.clock()
        with self._lock:
            if self.per_minute:
                for address in [a for a, times in self._recent.items() if not times or times[-1] < now - 60]:
                    del self._recent[address]  # clients quiet for a minute: the table stays small
                for address in [a for a in self._sessions_of if a not in self._recent]:
                    self._held_by_address(address)  # forgets a quiet address once its sessions hold nothing
                times = self._recent.setdefault(client, deque())
                while times and times[0] < now - 60:
                    times.popleft()
                if len(times) >= self.per_minute:
                    return 429, f"At most {self.per_minute} uploads a minute from one address"
                self._sessions_of.setdefault(client, set()).add(session)
                held_files, held_bytes = self._held_by_address(client, uploading=session)
                if held_files >= MAX_ADDRESS_FILES or held_bytes + length > MAX_ADDRESS_BYTES:
                    return 413, f"One address holds at most {MAX_ADDRESS_FILES} files, {MAX_ADDRESS_BYTES:,} bytes"
                times.append(now)
            flight = self._in_flight[session]
            if files + flight[0] >= MAX_SESSION_FILES or size + flight[1] + length > MAX_SESSION_BYTES:
                if not flight[0]:
                    del self._in_flight[session]
                return 413, f"A session holds at most {MAX_SESSION_FILES} files, {MAX_SESSION_BYTES:,} bytes"
            flight[0] += 1
            flight[1] += length
        return None


    def _held_by_address(self, address: str, uploading: str | None = None) -> tuple[int, int]:
        """``(files, bytes)`` held or in flight for ``address``'s sessions; a session holding nothing is forgotten
        (but ``uploading``, whose file is about to be), and the address with its last one. The caller holds the
        lock."""
        files = size = 0
        sessions = self._sessions_of.get(address, set())
        for session in list(sessions):
            held = self.held(session)
            flight = self._in_flight.get(session, (0, 0))
            if not held[0] and not flight[0] and session != uploading:
                sessions.discard(session)
            files, size = files + held[0] + flight[0], size + held[1] + flight[1]
        if not sessions:
            self._sessions_of.pop(address, None)
        return files, size


def _content_length(scope) -> int:
    """The request's declared length (Streamlit itself caps a body without one at maxUploadSize)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return max(0, int(value))
            except ValueError:
                return 0
    return 0


async def _refuse(send, status: int, reason: str) -> None:
    body = reason.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
