"""Streamlit UI helpers shared by app.py and the pages (the engine lives in ``core/``).

- ``ui.i18n``: ``t(key, **params)``, ``LANGS``; tables in ``assets/i18n/<lang>.json``.
- ``ui.state``: ``url_param`` / ``sync_to_url`` for URL-shareable state.
- ``ui.sidebar``: ``render_sidebar()`` (language, BERT model, presentation mode).

``PAGES`` lists the app's pages once, for ``app.py``'s navigation and the home page's links.

URL paths must differ from every file stem in ``pages/``. Because a folder named ``pages/`` sits next
to app.py, Streamlit (1.67) runs each script run inside its legacy "pages directory" navigation
until app.py's ``st.navigation`` switches that off for the process (so: the first run after the
server starts, and every AppTest run). The legacy pages are keyed by file stem
(``pages/attention.py`` -> ``/attention``); a url_path equal to a stem makes such a run execute that
file on its own: no sidebar, no page config, the raw file list as navigation. Hence ``overview``
(not ``home``), ``attention-heatmap`` (not ``attention``) and ``exercises`` served by
``pages/exercise_cards.py``.
``tests/test_i18n.py::test_url_paths_do_not_shadow_page_files`` guards this. (Renaming the folder,
e.g. to ``app_pages/``, would remove the legacy behaviour altogether.)
"""
from __future__ import annotations

from typing import NamedTuple


class PageSpec(NamedTuple):
    path: str       # script path, relative to the repository root (where app.py lives)
    url_path: str   # opens directly at http://host:port/<url_path> (the default page also at /)
    title_key: str  # i18n key of the page title
    icon: str       # Streamlit material icon (bundled, no remote font)
    desc_key: str   # i18n key of a one-line description (home page links)


PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/home.py", "overview", "nav.home", ":material/home:", "home.link.home"),
    PageSpec("pages/static_vs_contextual.py", "static-vs-contextual", "nav.static",
             ":material/compare_arrows:", "home.link.static"),
    PageSpec("pages/elmo_weights.py", "elmo-weights", "nav.elmo", ":material/tune:", "home.link.elmo"),
    PageSpec("pages/fill_mask.py", "fill-mask", "nav.fill_mask", ":material/edit_note:", "home.link.fill_mask"),
    PageSpec("pages/attention.py", "attention-heatmap", "nav.attention", ":material/grid_on:", "home.link.attention"),
    PageSpec("pages/transfer.py", "feature-vs-finetune", "nav.transfer", ":material/science:", "home.link.transfer"),
    PageSpec("pages/exercise_cards.py", "exercises", "nav.exercises", ":material/quiz:", "home.link.exercises"),
)
