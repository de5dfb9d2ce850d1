"""ELMo→BERT Lab (语境词向量实验室): entry point.  Run with ``streamlit run app.py``."""
from __future__ import annotations

import os

import streamlit as st
import torch

from ui import PAGES, ROOT_URL_PATH
from ui.i18n import t
from ui.page import presenting
from ui.presentation import arrive, render_stepper
from ui.sidebar import init_state, render_sidebar

# The server runs every session's model calls in its own threads on a few cores. One intra-op thread
# per call lets two sessions compute side by side; with torch's default (all cores per call) a call
# waits for a core held by another session or process: word candidates took 3.5 s instead of 0.36 s
# on the 2-core machine with another job running, against 74 ms vs 106 ms when idle.
# LAB_TORCH_THREADS overrides (e.g. for bert-base-chinese and a single presenter). Set on every run:
# cheap, and each run's thread then has it before its first model call.
torch.set_num_threads(int(os.environ.get("LAB_TORCH_THREADS", "1")))
init_state()  # language first: the page title and the navigation labels are translated
# An emoji favicon is drawn by the browser itself; a ":material/…:" one is fetched from fonts.gstatic.com
st.set_page_config(page_title=t("app.title"), page_icon="🔤", layout="wide")

pages = [st.Page(spec.path, title=t(spec.title_key), icon=spec.icon, url_path=spec.url_path) for spec in PAGES]
root = st.Page(PAGES[0].path, title=t(PAGES[0].title_key), url_path=ROOT_URL_PATH, default=True, visibility="hidden")
pg = st.navigation([root, *pages])
current = PAGES[0].url_path if pg is root else next(spec.url_path for spec, page in zip(PAGES, pages) if page is pg)
render_sidebar()
arrive(current)  # a scene link (?slide=...) starts its page from the scene's parameters
if presenting():
    render_stepper(current)  # presentation mode: scene stepper, no sidebar chrome
pg.run()
