"""ELMo→BERT Lab (语境词向量实验室): entry point.  Run with ``streamlit run app.py``."""
from __future__ import annotations

import streamlit as st

from ui import PAGES
from ui.i18n import t
from ui.presentation import arrive, render_stepper
from ui.sidebar import init_state, render_sidebar

init_state()  # language first: the page title and the navigation labels are translated
st.set_page_config(page_title=t("app.title"), page_icon="🔤", layout="wide")

pages = [
    st.Page(spec.path, title=t(spec.title_key), icon=spec.icon, url_path=spec.url_path, default=(i == 0))
    for i, spec in enumerate(PAGES)
]
pages.append(st.Page("pages/evidence.py", title=t("evidence.nav"), icon=":material/biotech:", url_path="layer-evidence"))
pg = st.navigation(pages)
current = next((spec.url_path for spec, page in zip(PAGES, pages) if page is pg), None)
render_sidebar()
arrive(current)  # a scene link (?slide=...) starts its page from the scene's parameters
if st.session_state.get("present"):
    render_stepper(current)  # presentation mode: scene stepper, no sidebar chrome
pg.run()
