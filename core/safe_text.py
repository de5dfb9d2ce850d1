"""User text made inert where it is shown: inside Markdown, and in CSV cells opened by a spreadsheet."""
from __future__ import annotations

# Markdown/HTML syntax, Streamlit's ":colour[...]" / ":material/...:" directives (":") and entities ("&")
_MD_SPECIAL = frozenset("\\`*_{}[]()#+-.!|<>~$:&")


def md_escape(text: object) -> str:
    """``text`` with every Markdown, HTML and directive character backslash-escaped (st.info,
    st.warning, st.markdown render Markdown; the user's text must show as typed, never as markup)."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text))


def csv_safe(text: str) -> str:
    """Spreadsheet formula injection guard for text cells of a CSV."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
