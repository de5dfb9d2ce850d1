"""What every page needs to be read by everyone, set once per run by ``app.py``: the document's language and
the scripted fixes of ``ui/document.js``, visible keyboard focus, and captions dark enough for a projector.
``tests/e2e/test_accessibility_browser.py`` checks the result with axe-core."""
from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st
from streamlit.components.v2 import component

from ui.i18n import current_lang, t, translate

NARROW_KEY = "_narrow_window"  # the browser's window is at most 700 px wide (document.js reports it)
TALL_KEY = "_tall_window"  # the browser's window is at least 960 px high: a 1080p projector (document.js reports it)
# BCP 47 tags of the app's languages: the Chinese is Simplified (Mainland) Chinese
DOCUMENT_LANGS = {"zh": "zh-CN", "en": "en"}

# A CONSTANT stylesheet (never interpolate anything into it).
# Captions are the text colour at 60 % opacity, 4.7:1 on white, pale on a washed-out projector; #4B5563 at full
# opacity is 7.6:1 (WCAG AA asks 4.5:1). Focus: Streamlit outlines its text boxes and buttons, but not the
# sidebar's page links (nor other links), and marks a focused radio option, switch or checkbox with a pale tint
# only (#E1E9F4 on white, 1.2:1; its input is visually hidden): one blue of the charts' palette, 3 px, seen on a
# projector, 5.2:1 on white and 4.6:1 on the sidebar's #EEF2F8 (WCAG 2.4.11 asks 3:1), around the option's label.
# A narrow screen: formulas a size smaller, so that most fit a phone's width (the rest scroll sideways).
# A widget's help icon is 18 px: its button gets a 24 × 24 px target (WCAG 2.5.8) by padding, the layout unmoved.
# What scrolls sideways (ui/document.js makes it focusable) shows a shadow at the edge where more of it hides, a cue
# that it scrolls (the background scroll-shadow technique: the white covers scroll with the content, the shadows
# stay at the edges).
ACCESSIBILITY_CSS = """
<style>
[data-testid="stTooltipHoverTarget"] > button { padding: 3px !important; margin: -3px !important;
  min-width: 24px; min-height: 24px; box-sizing: border-box; }
.katex-display[tabindex="0"], [data-testid="stTable"] > div[tabindex="0"] {
  background: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)),
              linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) 100% 0,
              radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.25), rgba(0,0,0,0)),
              radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.25), rgba(0,0,0,0)) 100% 0;
  background-repeat: no-repeat; background-size: 40px 100%, 40px 100%, 14px 100%, 14px 100%;
  background-attachment: local, local, scroll, scroll; }
.st-key-lab_document { display: none !important; }
[data-testid="stCaptionContainer"] { color: #4B5563 !important; opacity: 1 !important; }
a:focus-visible, summary:focus-visible,
[data-testid="stRadioOption"]:has(input:focus-visible), [data-testid="stCheckbox"] label:has(input:focus-visible) {
  outline: 3px solid #0072B2 !important; outline-offset: 2px; border-radius: 4px; }
@media (max-width: 700px) { .katex-display { font-size: 0.8em; } }
</style>
"""

# Streamlit's own English names of its controls (aria-label, plotly's toolbar titles) and its input hints, as a screen
# reader announces them on a Chinese page: ui/document.js gives each the page language's name (i18n keys a11y.*).
STREAMLIT_NAMES = {
    "Link to heading": "a11y.link_to_heading", "Open": "a11y.open", "Sidebar": "a11y.sidebar",
    "Collapse sidebar": "a11y.collapse_sidebar", "Expand sidebar": "a11y.expand_sidebar", "App pages": "a11y.app_pages",
    "Copy to clipboard": "a11y.copy", "Show/hide columns": "a11y.columns", "Download as CSV": "a11y.download_csv",
    "Search": "a11y.search", "Fullscreen": "a11y.fullscreen", "Close fullscreen": "a11y.close_fullscreen",
    "Decrement": "a11y.decrement", "Increment": "a11y.increment", "progress": "a11y.progress",
    "Clear all": "a11y.clear_all", "Clear value": "a11y.clear_value", "Download plot as a png": "a11y.download_png",
    "Press Enter to apply": "a11y.enter_apply", "Press Enter to submit form": "a11y.enter_submit",
    "Press Ctrl+Enter to apply": "a11y.ctrl_enter_apply", "Press ⌘+Enter to apply": "a11y.ctrl_enter_apply",
}

# names Streamlit builds from a widget's label: the English start, and the i18n key of the whole name ({label})
STREAMLIT_PREFIXES = {"Help for ": "a11y.help_for"}


@functools.lru_cache(maxsize=4)
def streamlit_names(lang: str) -> dict[str, str]:
    """:data:`STREAMLIT_NAMES` in ``lang`` (none for English: Streamlit's own are English), built once per language
    rather than on every run of every session."""
    return {} if lang == "en" else {english: translate(lang, key) for english, key in STREAMLIT_NAMES.items()}


@functools.lru_cache(maxsize=4)
def streamlit_prefixes(lang: str) -> dict[str, str]:
    """:data:`STREAMLIT_PREFIXES` in ``lang``: the English start → the translated name with ``{label}`` in it."""
    return {} if lang == "en" else {english: translate(lang, key, label="{label}")
                                    for english, key in STREAMLIT_PREFIXES.items()}


# Streamlit's code for charts and tables (its built frontend's chunks, named with a content hash): ui/document.js loads
# them at a page's first run, while the server computes, not when the first chart arrives (a second later, cold).
LIBRARY_CHUNKS = ("PlotlyChart", "DataFrame")


@functools.cache
def library_chunks() -> tuple[str, ...]:
    """The file names of :data:`LIBRARY_CHUNKS` in the installed Streamlit (none found: nothing preloaded)."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    return tuple(sorted(path.name for chunk in LIBRARY_CHUNKS for path in folder.glob(f"{chunk}.*.js")))


# Trusted, constant JavaScript from this repository (its data are the app's own strings).
_document = component("lab_document", js=(Path(__file__).with_name("document.js")).read_text(encoding="utf-8"))


def render(main_input: tuple[str, ...] = ()) -> None:
    """The stylesheet and the document script; call once per run, in the main area (a collapsed sidebar, as on a
    phone, does not draw its elements). The script's element is hidden: it takes no room. ``main_input``: the page's
    (``ui.PageSpec.main_input``), where the skip link puts the focus."""
    st.markdown(ACCESSIBILITY_CSS, unsafe_allow_html=True)  # constant stylesheet only
    result = _document(key="lab_document", on_narrow_change=lambda: None, on_tall_change=lambda: None,
                       data={"lang": DOCUMENT_LANGS[current_lang()], "upload": t("static.upload_button"),
                             "names": streamlit_names(current_lang()), "prefixes": streamlit_prefixes(current_lang()),
                             "preload": library_chunks(),
                             "main": list(main_input), "skip": t("a11y.skip"), "navHint": t("a11y.nav_hint")})
    # the script reports a change only, and a page switch can leave the component's state empty: the session keeps
    # the last report
    for key, reported in ((NARROW_KEY, getattr(result, "narrow", None)), (TALL_KEY, getattr(result, "tall", None))):
        if reported is not None:
            st.session_state[key] = bool(reported)
