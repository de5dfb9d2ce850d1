"""ELMo→BERT Lab (语境词向量实验室): entry point.  Run with ``streamlit run app.py``."""
from __future__ import annotations

import importlib

import streamlit as st

from core.runtime.concurrency import configure_thread, page_run
from ui import PAGES, ROOT_URL_PATH, accessibility
from ui.i18n import t
from ui.page import presenting, show_error
from ui.presentation import arrive, begin_run, render_stepper, tell, wants_telling
from ui.sidebar import init_state, render_sidebar

# The whole run takes its turn among the process's page runs (core/runtime/concurrency.py: page_run says why).
with page_run():
    init_state()  # language first: the page title and the navigation labels are translated
    # An emoji favicon is drawn by the browser itself; a ":material/…:" one is fetched from fonts.gstatic.com
    st.set_page_config(page_title=t("app.title"), page_icon="🔤", layout="wide")

    pages = [st.Page(spec.path, title=t(spec.title_key), icon=spec.icon, url_path=spec.url_path,
                     visibility="visible" if spec.listed else "hidden") for spec in PAGES]
    root = st.Page(PAGES[0].path, title=t(PAGES[0].title_key), url_path=ROOT_URL_PATH, default=True,
                   visibility="hidden")
    pg = st.navigation([root, *pages])
    shown = PAGES[0] if pg is root else next(spec for spec, page in zip(PAGES, pages) if page is pg)
    current = shown.url_path
    # what the presenter (or a student) changed: the values at this run's start, before any widget draws
    changed = begin_run(current)
    render_sidebar()
    # the document's language, visible focus, readable captions, the skip link into the page's main input
    accessibility.render(shown.main_input)
    arrive(current)  # a scene link (?slide=...) starts its page from the scene's parameters
    if presenting():
        render_stepper(current)  # presentation mode: scene stepper, no sidebar chrome
    try:
        if current != PAGES[0].url_path:
            # The model libraries (torch, transformers: seconds) are imported on the first page that needs them, not
            # for the home page; always through ui.cache, in one order under its import lock, whichever page each
            # session opens first: transformers' lazy imports, made by two threads along different paths at once,
            # can fail with ImportError.
            importlib.import_module("ui.cache")
        # Each run's thread gets the intra-op thread count before its first model call (core/runtime/concurrency.py
        # says why one thread per call; with torch's default, word candidates took 3.5 s instead of 0.36 s on the 2-core
        # machine with another job running).
        configure_thread()
        pg.run()
    except Exception as err:  # the pages' one outer boundary: what a page did not catch is a message, not a traceback
        show_error(err)
    # last: the run has drawn everything the browser may place (the projector's scene and edits; a student's edits)
    if wants_telling(current, changed, presenting()):
        tell(current, changed)
