"""One error type for everything the user can get wrong, with a bilingual message.

``err.message(lang)`` is plain text: what the CLI prints on stderr (then exits 2) and what a notebook
shows. The app shows ``err.message(lang, markdown=True)`` where the user is (Markdown: the parameters, which
carry model names, file names and error details, are escaped). The templates are core's own message
catalogue (``core/guard/messages/<lang>.json``, ``{code: template}``); the app's translation tables take them in as
``error.<code>`` (``ui/i18n.py``), so the CLI, the notebook API and the pages say the same thing.
"""
from __future__ import annotations

import json
from pathlib import Path

from .safe_text import md_escape

MESSAGES_DIR = Path(__file__).resolve().parent / "messages"
LANGS = ("zh", "en")


def message_table(lang: str) -> dict[str, str]:
    """``{code: template}`` of ``lang`` (``core/guard/messages/<lang>.json``)."""
    return json.loads((MESSAGES_DIR / f"{lang}.json").read_text(encoding="utf-8"))


def _catalogue() -> dict[str, dict[str, str]]:
    """``{code: {lang: template}}``."""
    tables = {lang: message_table(lang) for lang in LANGS}
    return {code: {lang: tables[lang][code] for lang in LANGS if code in tables[lang]} for code in tables["en"]}


MESSAGES = _catalogue()


def type_name(value: object) -> str:
    """What a bad argument was, for ``bad_argument``'s ``given``: its type's name, or None."""
    return type(value).__name__ if value is not None else "None"


class LabError(Exception):
    """A problem with the user's input or model choice, explained in their language."""

    def __init__(self, code: str, **params):
        if code not in MESSAGES:
            raise KeyError(f"unknown error code {code!r}")
        self.code = code
        self.params = params
        super().__init__(self.message("en", markdown=False))

    def message(self, lang: str = "zh", *, markdown: bool = False) -> str:
        """The message in ``lang``, as plain text. ``markdown=True`` (for st.error and friends): every parameter is
        shown as typed, never as Markdown: escaped in running text; inside a template's `code span`,
        where escapes would show, only a backtick (the one way out of the span) is replaced."""
        template = MESSAGES[self.code].get(lang, MESSAGES[self.code]["en"])
        if not markdown:
            return template.format(**self.params)
        escaped = {k: md_escape(v) for k, v in self.params.items()}
        in_code = {k: str(v).replace("`", "'") for k, v in self.params.items()}
        parts = template.split("`")  # odd parts are inside code spans
        return "`".join(part.format(**(in_code if i % 2 else escaped)) for i, part in enumerate(parts))
