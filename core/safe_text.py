"""User text made inert where it is shown: inside Markdown, and in CSV cells opened by a spreadsheet;
and the rule for model names, which pages show in labels and messages."""
from __future__ import annotations

import re

# Markdown/HTML syntax, Streamlit's ":colour[...]" / ":material/...:" directives (":") and entities ("&")
_MD_SPECIAL = frozenset("\\`*_{}[]()#+-.!|<>~$:&")

# GitHub's autolink literals, as Streamlit's Markdown (remark-gfm) finds them in the text AFTER escapes are
# resolved, so no backslash stops them: "www." and "http(s)://" (the first pattern) and "name@domain.tld".
# Python's \w is made ASCII-only, as JavaScript's is.
GFM_AUTOLINKS = (re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII),
                 re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII))
# A WORD JOINER (U+2060: invisible, no width, not a word character) after "www", a scheme's ":" and "@"
# breaks every one of them
_LINK_START = re.compile(r"www(?=\.)|:(?=//)|@", re.IGNORECASE)
WORD_JOINER = "\u2060"


def autolinks(text: str) -> bool:
    """Whether GitHub-flavoured Markdown would turn part of ``text`` into a link by itself."""
    return any(pattern.search(text) for pattern in GFM_AUTOLINKS)


def md_escape(text: object) -> str:
    """``text`` with every Markdown, HTML and directive character backslash-escaped (st.info,
    st.warning, st.markdown render Markdown; the user's text must show as typed, never as markup), and
    the autolink patterns broken by an invisible word joiner (escapes cannot stop those)."""
    joined = _LINK_START.sub(lambda m: m.group(0) + WORD_JOINER, str(text))
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in joined)


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
    nothing Markdown would make a link of (``www.…``, ``user@host.tld``: labels and messages show names
    unescaped), path parts the file system accepts. The text alone: whether it names a model is the
    registry's job."""
    return (0 < len(name) <= MAX_MODEL_NAME_CHARS and _MODEL_NAME_CHARS.fullmatch(name) is not None
            and not autolinks(name)
            and all(len(part.encode("utf-8", "surrogatepass")) <= _MAX_PATH_PART_BYTES for part in name.split("/")))
