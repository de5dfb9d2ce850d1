"""Translations: one flat JSON table per language in ``assets/i18n/<lang>.json``, plus core's error messages
(``core/guard/messages``) as ``error.<code>``.

Usage::

    from ui.i18n import t
    st.title(t("home.title"))
    st.warning(t("sidebar.model_unavailable", reason=why))   # "{reason}": str.format style

The current language is ``st.session_state["lang"]`` (set by the sidebar). Missing keys fall back
to Chinese, then to the key itself, so a forgotten translation never crashes a page. Placeholders
that are not supplied stay as ``{name}`` in the output instead of raising.
"""
from __future__ import annotations

import json
import logging
import re
from datetime import UTC
from functools import cache
from pathlib import Path
from typing import Any

from core.guard.errors import message_table

_LOG = logging.getLogger("elmo_bert_lab")
LANGS: dict[str, str] = {"zh": "中文", "en": "English"}
DEFAULT_LANG = "zh"

I18N_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"


@cache
def table(lang: str) -> dict[str, str]:
    """The translation table of ``lang`` (empty for an unknown language): the app's texts and core's error
    messages as ``error.<code>`` (``core/guard/messages``). Cached per process."""
    if lang not in LANGS:
        return {}
    with open(I18N_DIR / f"{lang}.json", encoding="utf-8") as f:
        texts = json.load(f)
    return {**texts, **{f"error.{code}": template for code, template in message_table(lang).items()}}


def current_lang() -> str:
    """``st.session_state["lang"]`` if it is a known language, else ``"zh"``.

    Safe to call outside a Streamlit run (returns the default)."""
    try:
        import streamlit as st

        lang = st.session_state.get("lang", DEFAULT_LANG)
    except Exception:  # no script run context (plain python, tests of pure helpers)
        return DEFAULT_LANG
    return lang if lang in LANGS else DEFAULT_LANG


class _KeepMissing(dict):
    def __missing__(self, name: str) -> str:
        return "{" + name + "}"


def translate(lang: str, key: str, **params: Any) -> str:
    """The string for ``key`` in ``lang`` (fallback: zh, then the key), formatted with ``params``."""
    text = table(lang).get(key)
    if text is None:
        text = table(DEFAULT_LANG).get(key, key)
    if not params:
        return text
    try:
        return text.format_map(_KeepMissing(params))
    except (ValueError, IndexError, AttributeError):  # malformed template: show it unformatted
        return text


def t(key: str, **params: Any) -> str:
    """The string for ``key`` in the current language (see module docstring)."""
    return translate(current_lang(), key, **params)


def error_text(exc: BaseException, *, markdown: bool = True) -> str:
    """A user-facing message for ``exc``: ``LabError.message(lang)`` when available, else a generic
    translated line (raw exception text and tracebacks are never shown to the audience).
    ``markdown=False`` for places that show text as is (tables): no escaping backslashes."""
    message = getattr(exc, "message", None)
    if callable(message):
        try:
            text = message(current_lang(), markdown=markdown)
            if text:
                return str(text)
        except Exception:
            pass
    # the message sends the audience to the server log: put the traceback there
    _LOG.error("unexpected error shown as a message", exc_info=exc)
    return t("common.error_generic", kind=type(exc).__name__)


_NUMBERED_LAYER = re.compile(r"(layer|biLSTM) (\d+)")


def layer_name(name: str) -> str:
    """A core layer name ("embeddings", "layer 3", "token layer", "biLSTM 2") in the UI language.

    Core keeps English identifiers (they also name CSV/JSON columns); the pages show these."""
    numbered = _NUMBERED_LAYER.fullmatch(name)
    if numbered:
        return t(f"layer.{numbered.group(1).lower()}", j=int(numbered.group(2)))
    key = "layer." + name.replace(" ", "_")
    return t(key) if key in table(DEFAULT_LANG) else name


def model_description(info) -> str:
    """A model's description (``core.models.catalogue.ModelInfo``) in the UI language: embedded models have a
    translated one, other models keep the registry's text."""
    key = f"home.models.desc.{info.name}"
    return t(key) if key in table(DEFAULT_LANG) else info.description


def timestamp(value: object) -> str:
    """An ISO time from a results file ("2026-12-03T08:05:07Z" or "…+00:00") in the UI language, in UTC.

    Anything that is not an ISO time is shown as it is (an older file, a hand-edited one)."""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return str(value)
    return t("time.utc", year=moment.year, month=f"{moment.month:02d}", day=f"{moment.day:02d}",
             hm=moment.strftime("%H:%M"))
