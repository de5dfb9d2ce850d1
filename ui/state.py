"""URL-shareable state: read widget defaults from the query string, write the current values back.

A teacher can copy the address bar and get the same page, language, model and inputs again::

    text = url_param("text", "我吃了一个苹果")
    layer = url_param("layer", 2, cast=int)
    words = url_param("words", ["苹果"], cast=list)      # JSON in the URL
    ...
    sync_to_url(text=text, layer=layer, words=words)

Encoding in the URL: ``bool`` -> ``"1"``/``"0"``; ``list``/``tuple``/``dict`` -> compact JSON;
``None`` -> the parameter is removed; everything else -> ``str(value)``.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from core import safe_json

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def encode(value: Any) -> str | None:
    """The query-string form of ``value`` (``None`` means: remove the parameter)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def decode(raw: str, cast: Callable[[Any], Any] = str) -> Any:
    """Turn a query-string value back into ``cast``'s type. Raises ValueError/TypeError if invalid
    (JSON values also when too long, too deeply nested or not finite: see ``core.safe_json``)."""
    if cast is bool:
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"not a boolean: {raw!r}")
    if cast in (list, tuple, dict):
        value = safe_json.loads(raw)  # bounded: a URL can nest [[[… deep enough to exhaust the stack
        if cast is tuple and isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, cast):
            raise TypeError(f"expected {cast.__name__}, got {type(value).__name__}")
        return value
    return cast(raw)


def url_param(key: str, default: Any, cast: Callable[[Any], Any] = str) -> Any:
    """``st.query_params[key]`` converted with ``cast``; ``default`` if absent or not convertible.

    ``cast`` may be any one-argument callable (``int``, ``float``, a validator ...); ``bool``,
    ``list``, ``tuple`` and ``dict`` are decoded as written by :func:`sync_to_url`.
    """
    raw = st.query_params.get(key)
    if raw is None:
        return default
    try:
        return decode(raw, cast)
    except (ValueError, TypeError):  # json.JSONDecodeError is a ValueError
        return default


def one_of(*choices: str) -> Callable[[str], str]:
    """A ``cast`` for :func:`url_param` that accepts only ``choices`` (anything else: the default)."""
    def check(value: str) -> str:
        if value not in choices:
            raise ValueError(value)
        return value
    return check


def in_range(low: float, high: float | None = None, kind: Callable[[str], Any] = int) -> Callable[[str], Any]:
    """A ``cast`` for :func:`url_param`: a ``kind`` number with ``low <= n <= high`` (``high=None``: no upper
    limit); anything else, NaN included, falls back to the default."""
    def check(value: str):
        number = kind(value)
        if not (low <= number and (high is None or number <= high)):
            raise ValueError(value)
        return number
    return check


def sync_to_url(**values: Any) -> None:
    """Write ``values`` to the query string; only parameters whose encoded value changed are touched
    (each write to ``st.query_params`` updates the browser's address bar)."""
    for key, value in values.items():
        new = encode(value)
        old = st.query_params.get(key)
        if new is None:
            if old is not None:
                del st.query_params[key]
        elif new != old:
            st.query_params[key] = new


def seed_widget(key: str, value: Any) -> None:
    """Give widget ``key`` its first value (from the URL or the page's default) unless the session has one:
    the page's widgets are created with ``persist_state="session"``, so Streamlit keeps their values across
    page switches itself."""
    st.session_state.setdefault(key, value)
