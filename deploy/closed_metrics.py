"""``/_stcore/metrics`` closed on a single server: ASGI middleware that ``serve.py`` installs in its ``st.App``.

Streamlit's metrics endpoint tells anyone who can reach the port the cache names and sizes, the bytes uploaded and
the session counts (the class board's refreshes among them), and Streamlit has no switch to close it. The lecture
hall's nginx answers 404 for it (``deploy/lecture_hall.py``); this does the same for ``streamlit run serve.py``
alone, for every spelling that reaches Streamlit's route (``//_stcore/metrics``, a trailing slash, a path prefix).
"""
from __future__ import annotations

import re

METRICS_PATH = re.compile(r"^(?:/+[^/]+)*?/+_stcore/+metrics/*$")


class ClosedMetrics:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and METRICS_PATH.match(scope.get("path", "")):
            body = b"Not Found"
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
