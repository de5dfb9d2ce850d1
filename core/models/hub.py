"""Calls that may reach the Hugging Face hub, each under a wall-clock deadline, and whether the hub answers at all.

huggingface_hub's metadata requests have no timeout, so a hub that accepts the connection and never answers
would hang a load, and every later visitor of that model would wait on its lock (``core.models.cache``). A
failed call is then remembered like any failed load, for ``FAILURE_TTL_S``.
"""
from __future__ import annotations

import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import TypeVar, cast

from ..guard.errors import LabError

FAILURE_TTL_S = 60.0  # a failed hub / directory load (or hub probe) is answered from memory this long
HUB_PROBE_TIMEOUT_S = 3.0
HUB_TIMEOUT_ENV = "LAB_HUB_TIMEOUT_S"
HUB_TIMEOUT_S = 60.0

_hub_probe: list[tuple[float, bool]] = []  # (monotonic time, result) of the last probe

Result = TypeVar("Result")


def env_number(name: str, default: float) -> float:
    """A positive number from the environment (``1e9`` and ``1000000000`` alike); unset or unusable: ``default``."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


def within(seconds: float, call: Callable[[], Result]) -> tuple[bool, Result | None]:
    """``(True, call())``, or ``(False, None)`` when it has not returned after ``seconds``: it runs in a daemon
    thread that is then given up on (a socket read without a timeout cannot be interrupted). Its exception
    is raised here."""
    returned: list[Result] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            returned.append(call())
        except BaseException as exc:  # handed to the caller's thread
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True, name="hub-call")
    thread.start()
    thread.join(seconds)
    if raised:
        raise raised[0]
    return (True, returned[0]) if returned else (False, None)


def forget_probe() -> None:
    """Forget the remembered probe answer: the next :func:`hub_reachable` probes again."""
    _hub_probe.clear()


def hub_reachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub endpoint (``HF_ENDPOINT``, default huggingface.co) opens
    within ``timeout_s`` (name resolution has no timeout of its own, hence the deadline around the
    whole probe). The answer is remembered for ``FAILURE_TTL_S``."""
    if _hub_probe and time.monotonic() - _hub_probe[0][0] < FAILURE_TTL_S:
        return _hub_probe[0][1]
    endpoint = urllib.parse.urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)

    def probe() -> bool:
        try:
            socket.create_connection((endpoint.hostname or "", port), timeout=timeout_s).close()
            return True
        except (OSError, ValueError):
            return False

    done, reachable = within(timeout_s + 0.5, probe)
    _hub_probe[:] = [(time.monotonic(), bool(done and reachable))]
    return bool(done and reachable)


def from_hub(name: str, call: Callable[[], Result]) -> Result:
    """``call()`` under the ``LAB_HUB_TIMEOUT_S`` deadline (default 60 s); past it, ``hub_timeout``."""
    seconds = env_number(HUB_TIMEOUT_ENV, HUB_TIMEOUT_S)
    done, value = within(seconds, call)
    if not done:
        raise LabError("hub_timeout", name=name, seconds=f"{seconds:g}")
    return cast(Result, value)  # done: call() returned it
