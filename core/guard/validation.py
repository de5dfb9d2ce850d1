"""User text checked before a computation sees it: the rules the pages and the CLI share (stripped, not
empty, within a limit), in one module that every computation may import. Each limit stays beside the
computation it protects (what a page can show, what a model takes)."""
from __future__ import annotations

from .errors import LabError

BAD_SENTENCE_POLICIES = ("stop", "skip")  # what a stream of sentences does at one the model cannot take


def check_length(text: str, limit: int) -> None:
    """LabError too_long when ``text`` has more than ``limit`` characters."""
    if len(text) > limit:
        raise LabError("too_long", length=len(text), limit=limit)


def check_text(text: str | None, limit: int) -> str:
    """The stripped sentence, or LabError empty_input / too_long."""
    text = (text or "").strip()
    if not text:
        raise LabError("empty_input")
    check_length(text, limit)
    return text
