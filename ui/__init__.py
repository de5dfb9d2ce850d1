"""Streamlit UI helpers shared by app.py and the pages (the engine lives in ``core/``).

- ``ui.i18n``: ``t(key, **params)``, ``LANGS``; tables in ``assets/i18n/<lang>.json``.
- ``ui.state``: ``url_param`` / ``sync_to_url`` for URL-shareable state.
- ``ui.sidebar``: ``render_sidebar()`` (language, BERT model, presentation mode).
- ``ui.page`` and ``ui.cache``: the page kit (a model or a message, one error path, one way to show a
  figure; cached model calls, encodings and results files).
- ``ui.budget_note``: the compared models' training budgets (``core.content.budgets``), wherever ELMo and BERT meet.
- ``ui.sentence_inputs``, ``ui.downloads``, ``ui.training_gate``, ``ui.accessibility``, ``ui.lecturer``: widgets
  and gates that several pages share. What one page alone uses lives in its folder, ``app_pages/<page>/`` (see below).

``PAGES`` lists the app's pages once, for ``app.py``'s navigation and the home page's links.

Each page is a folder ``app_pages/<page>/``: its script ``page.py`` and the modules only it uses (its sections,
e.g. ``app_pages/fill_mask/sections.py``). The folder is ``app_pages/``, not ``pages/``: Streamlit treats a
folder named ``pages/`` next to app.py as a legacy multipage folder (its first run after server start would ignore
``st.navigation`` and show a "Page not found" notice on direct sub-page links).
"""
from __future__ import annotations

from typing import Literal, NamedTuple

# The shapes a page takes (docs/code.md, "The shapes of a page"), each page exactly one:
# experiment: state → inputs → one core call → render (sub-experiments are fragments of the same shape);
# sections: several such experiments on one page, one core call each; results: state → a results file read once
# per version → render; guide: text and links, one core call for the models' status; cards: predict-then-reveal
# cards, each state → input → a core check → render; router: the URL picks one of the page's views, each view
# state → inputs → one core call → render; console: the lecturer's own device, signed in, each control one core call
# on the shared store.
Shape = Literal["experiment", "sections", "results", "guide", "cards", "router", "console"]


class PageSpec(NamedTuple):
    path: str       # script path, relative to the repository root (where app.py lives)
    url_path: str   # opens directly at http://host:port/<url_path> (the first page also at /)
    title_key: str  # i18n key of the page title
    icon: str       # Streamlit material icon (bundled, no remote font)
    desc_key: str   # i18n key of a one-line description (home page links)
    shape: Shape    # what the page's script looks like (docs/code.md)
    listed: bool = True  # in the sidebar's navigation (a student's Tab path); unlisted: linked from the home page
    # the keys of the containers around the page's main input, the first on the page taken: where the skip link puts
    # the focus (ui/document.js); none: the page region itself
    main_input: tuple[str, ...] = ()


PAGES: tuple[PageSpec, ...] = (
    PageSpec("app_pages/home/page.py", "overview", "nav.home", ":material/home:", "home.link.home", "guide"),
    PageSpec("app_pages/static_vs_contextual/page.py", "static-vs-contextual", "nav.static",
             ":material/compare_arrows:", "home.link.static", "experiment", main_input=("vec_text",)),
    PageSpec("app_pages/class_board/page.py", "class-board", "nav.board", ":material/groups:", "home.link.board",
             "router", main_input=("board_sentence", "board_secret_box", "board_new_word")),
    PageSpec("app_pages/objectives/page.py", "pretraining-objectives", "nav.objectives", ":material/swap_horiz:",
             "home.link.objectives", "sections", main_input=("obj_sentence",)),
    PageSpec("app_pages/elmo_weights/page.py", "elmo-weights", "nav.elmo", ":material/tune:", "home.link.elmo",
             "experiment", main_input=("elmo_result",)),
    PageSpec("app_pages/fill_mask/page.py", "fill-mask", "nav.fill_mask", ":material/edit_note:",
             "home.link.fill_mask", "experiment", main_input=("fill_sentence", "fill_plain")),
    PageSpec("app_pages/attention/page.py", "attention-heatmap", "nav.attention", ":material/grid_on:",
             "home.link.attention", "experiment", main_input=("att_sentence",)),
    PageSpec("app_pages/transfer/page.py", "feature-vs-finetune", "nav.transfer", ":material/science:",
             "home.link.transfer", "results", main_input=("transfer_compare",)),
    # the lecturer's own device: on the home page, not in every student's navigation
    PageSpec("app_pages/presenter/page.py", "presenter", "nav.presenter", ":material/co_present:",
             "home.link.presenter", "console", listed=False,
             main_input=("board_secret_box", "presenter_console")),
    PageSpec("app_pages/exercise_cards/page.py", "exercises", "nav.exercises", ":material/quiz:",
             "home.link.exercises", "cards", main_input=("ex_concept_text",)),
    PageSpec("app_pages/evidence/page.py", "layer-evidence", "evidence.nav", ":material/biotech:",
             "home.link.evidence", "results", main_input=("_ev_section",)),
)
# Streamlit serves the default page at "/" and reserves (but does not serve) its url_path, so "/" gets a
# hidden page of its own and every url_path in PAGES, "/overview" included, opens directly.
ROOT_URL_PATH = "start"
