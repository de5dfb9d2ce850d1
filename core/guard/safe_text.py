"""User text made inert where it is shown: inside Markdown, and in CSV cells opened by a spreadsheet;
and the rule for model names, which pages show in labels and messages."""
from __future__ import annotations

import re
import unicodedata

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


# ---- one form of a student's text before any check ---------------------------------------------------------

# Chinese typing's own punctuation is fullwidth: NFKC would turn "，！？（）：；" into ASCII, so those stay as typed
_KEPT_FULLWIDTH = frozenset(chr(c) for c in range(0xFF01, 0xFF10)) | frozenset(chr(c) for c in range(0xFF1A, 0xFF21)) \
    | frozenset(chr(c) for c in range(0xFF3B, 0xFF41)) | frozenset(chr(c) for c in range(0xFF5B, 0xFF66)) | {"\u3000"}


def normalise(text: str) -> str:
    """``text`` as the class board stores and checks it: Unicode NFKC (fullwidth letters and digits, compatibility
    ideographs, ligatures become their plain forms; Chinese fullwidth punctuation stays), with every format
    character dropped (category Cf: zero-width space / joiner / non-joiner, soft hyphen, word joiner, bidi
    overrides and isolates, BOM) and the variation selectors (which NFKC keeps). Controls are the caller's
    (``strip_controls``)."""
    parts, start = [], 0
    for i, char in enumerate(text):
        if char in _KEPT_FULLWIDTH:
            parts += [unicodedata.normalize("NFKC", text[start:i]), char]
            start = i + 1
    parts.append(unicodedata.normalize("NFKC", text[start:]))
    return "".join(c for c in "".join(parts) if not _invisible(c))


def _invisible(char: str) -> bool:
    code = ord(char)
    return (unicodedata.category(char) == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF
            or char == "\u034f")  # COMBINING GRAPHEME JOINER: no width, hides between two characters


# what may stand between two Chinese characters to break a word for a substring test without changing it
_SPACER = re.compile(r"(?<=[\u3400-\u9fff\uf900-\ufaff])[\s*_\-.·•~・'\"`^|/\\]+(?=[\u3400-\u9fff\uf900-\ufaff])")


def filter_form(text: str, traditional: dict[str, str] | None = None) -> str:
    """The form a word filter compares: :func:`normalise`, lower case, spaces and spacer symbols between two
    Chinese characters removed (傻 逼, 傻*逼), Traditional characters mapped to Simplified by ``traditional``."""
    form = _SPACER.sub("", normalise(text).casefold())
    if traditional:
        form = "".join(traditional.get(c, c) for c in form)
    return form
