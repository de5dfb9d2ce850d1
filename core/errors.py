"""One error type for everything the user can get wrong, with a bilingual message.

The app shows ``err.message(lang)`` where the user is (Markdown: the parameters, which carry model
names, file names and error details, are escaped); the CLI prints ``err.message(lang, markdown=False)``
on stderr and exits 2. The templates live in the app's translation tables (``assets/i18n/<lang>.json``,
keys ``error.<code>``), the one catalogue for every user-facing text.
"""
from __future__ import annotations

import json
from pathlib import Path

from .safe_text import md_escape

I18N_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"
LANGS = ("zh", "en")


def _catalogue() -> dict[str, dict[str, str]]:
    """``{code: {lang: template}}`` from the app's one translation table per language (``error.<code>``)."""
    tables = {lang: json.loads((I18N_DIR / f"{lang}.json").read_text(encoding="utf-8")) for lang in LANGS}
    return {key.removeprefix("error."): {lang: tables[lang][key] for lang in LANGS if key in tables[lang]}
            for key in tables["en"] if key.startswith("error.")}


MESSAGES = _catalogue()


class LabError(Exception):
    """A problem with the user's input or model choice, explained in their language."""

    def __init__(self, code: str, **params):
        if code not in MESSAGES:
            raise KeyError(f"unknown error code {code!r}")
        self.code = code
        self.params = params
        super().__init__(self.message("en", markdown=False))

    def message(self, lang: str = "zh", *, markdown: bool = True) -> str:
        """The message in ``lang``. ``markdown=True`` (for st.error and friends): every parameter is
        shown as typed, never as Markdown: escaped in running text; inside a template's `code span`,
        where escapes would show, only a backtick (the one way out of the span) is replaced."""
        template = MESSAGES[self.code].get(lang, MESSAGES[self.code]["en"])
        if not markdown:
            return template.format(**self.params)
        escaped = {k: md_escape(v) for k, v in self.params.items()}
        in_code = {k: str(v).replace("`", "'") for k, v in self.params.items()}
        parts = template.split("`")  # odd parts are inside code spans
        return "`".join(part.format(**(in_code if i % 2 else escaped)) for i, part in enumerate(parts))
