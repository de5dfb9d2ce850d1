"""User text made inert where it is shown: inside Markdown, and in CSV cells opened by a spreadsheet;
and the rule for model names, which pages show in labels and messages."""
from __future__ import annotations

import re

# Markdown/HTML syntax, Streamlit's ":colour[...]" / ":material/...:" directives (":") and entities ("&")
_MD_SPECIAL = frozenset("\\`*_{}[]()#+-.!|<>~$:&")


def md_escape(text: object) -> str:
    """``text`` with every Markdown, HTML and directive character backslash-escaped (st.info,
    st.warning, st.markdown render Markdown; the user's text must show as typed, never as markup)."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text))


def csv_safe(text: str) -> str:
    """Spreadsheet formula injection guard for text cells of a CSV."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# Hub ids and ordinary paths: nothing Markdown could turn into an image, a link or a directive, so a
# model name shown in a label or a message stays inert text even where nobody escaped it.
_MODEL_NAME_CHARS = re.compile(r"[\w .\-/~+@=,]+")
MAX_MODEL_NAME_CHARS = 200
_MAX_PATH_PART_BYTES = 255  # a longer path component makes every file call fail with ENAMETOOLONG


def well_formed_model_name(name: str) -> bool:
    """``name`` could be a model name: 1 to MAX_MODEL_NAME_CHARS of letters, digits and `` ._-/~+@=,``,
    path parts the file system accepts. The text alone: whether it names a model is the registry's job."""
    return (0 < len(name) <= MAX_MODEL_NAME_CHARS and _MODEL_NAME_CHARS.fullmatch(name) is not None
            and all(len(part.encode("utf-8", "surrogatepass")) <= _MAX_PATH_PART_BYTES for part in name.split("/")))
