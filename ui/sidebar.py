"""The sidebar every page shares (rendered once per run by ``app.py``).

Session-state keys it owns (read them from any page; do not write them):

- ``st.session_state["lang"]``: ``"zh"`` | ``"en"``; URL ``?lang=``.
- ``st.session_state["bert_model"]``: name of the BERT-family model for the BERT pages (a registry
  name such as ``"mini-bert-zh"``, a hub id such as ``"bert-base-chinese"`` or a local directory),
  or ``None`` when the user picked "other" and left the box empty; URL ``?model=``. Pages read it with
  :func:`bert_model_name` only, which also answers before the sidebar has run (a page alone, in an AppTest).
- ``st.session_state["present"]``: presentation mode (bool); URL ``?present=1``.

``lang`` and ``present`` are the keys of their widgets: the sidebar is rendered on every run of every
page, so Streamlit keeps them; scenes and the presentation bar change them in callbacks, before the
widgets are drawn. The model box is two widgets (``_w_model``: a listed model or "other";
``_w_model_other``: a typed hub id or directory), and ``bert_model`` is what they name, worked out on every run.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.components.v2 import component

from core.guard.errors import LabError
from core.guard.safe_text import well_formed_model_name
from core.models import catalogue, hub_cache
from ui.i18n import DEFAULT_LANG, LANGS, error_text, model_description, t
from ui.state import Field, one_of, seed, sync_to_url, url_param

MAX_MODEL_ID_LEN = 200
_OTHER = "__other__"  # selectbox sentinel: "other hub id or local directory"

# A CONSTANT stylesheet: never interpolate user text into it.
PRESENT_CSS = """
<style>
html { font-size: 24px !important; }
[data-testid="stMainBlockContainer"] {
  max-width: 100% !important;
  padding-top: 2.5rem !important;
  padding-left: 3rem !important;
  padding-right: 3rem !important;
}
[data-testid="stMainBlockContainer"] h1 { font-size: 2.4rem !important; }
[data-testid="stMainBlockContainer"] p,
[data-testid="stMainBlockContainer"] li { line-height: 1.6 !important; }
</style>
"""


def clean_model_id(value: object) -> str | None:
    """A hub id / directory / registry name, stripped; ``None`` if empty, too long or containing
    characters no model name has (``core.guard.safe_text.well_formed_model_name``: this also keeps Markdown such
    as ``![](http://…)`` out of the labels and messages that show the name). Whether it points to a
    model is ``core.models``' job."""
    text = str(value or "").strip()
    if len(text) > MAX_MODEL_ID_LEN or not well_formed_model_name(text):
        return None
    return text


def get_model_infos():
    """``(models, problem)``: ``core.models.catalogue.list_models()`` and ``None``, or ``None`` and a
    translated message when listing fails (an unreadable models folder, say). Never raises."""
    try:
        return list(catalogue.list_models()), None
    except Exception as exc:  # LabError carries its own bilingual message
        return None, error_text(exc)


def init_state() -> None:
    """Seed ``lang`` / ``present`` from the URL (the model box is seeded in render_sidebar, once the registry's
    models are known)."""
    seed(Field("lang", "lang", DEFAULT_LANG, one_of(*LANGS)), Field("present", "present", False, bool),
         by_scene=False)


def bert_model_name() -> str | None:
    """The BERT-family model the pages use: the sidebar's choice (``None`` when its "other" box is empty);
    before the sidebar has run (one page alone, as in an AppTest) the URL's, else the embedded one."""
    ss = st.session_state
    return ss["bert_model"] if "bert_model" in ss else url_param("model", catalogue.DEFAULT_BERT)


def _render_model_selector(bert_models: list) -> None:
    ss = st.session_state
    names = [m.name for m in bert_models]
    by_name = {m.name: m for m in bert_models}
    available = [m.name for m in bert_models if m.available]
    first = url_param("model", None, cast=clean_model_id) or (
        available[0] if available else (names[0] if names else catalogue.DEFAULT_BERT))
    seed(Field("_w_model", None, first if first in by_name else _OTHER, one_of(*names, _OTHER)),
         Field("_w_model_other", None, "" if first in by_name else first), by_scene=False)

    # labels are computed now, in the current language (a format_func closure calling t() later
    # could be evaluated in another language, e.g. by the testing framework)
    labels = {_OTHER: t("sidebar.model_other_option")}
    for name in names:
        labels[name] = name if by_name[name].available else t("sidebar.model_unavailable_label", name=name)

    choice = st.selectbox(t("sidebar.model"), names + [_OTHER], key="_w_model", format_func=labels.__getitem__,
                          help=t("sidebar.model_help"))
    if choice == _OTHER:
        st.text_input(t("sidebar.model_other"), key="_w_model_other", max_chars=MAX_MODEL_ID_LEN,
                      placeholder="bert-base-chinese", help=t("sidebar.model_other_help"), persist_state="session")
        ss["bert_model"] = clean_model_id(ss["_w_model_other"])
        if not ss["bert_model"]:
            typed = ss["_w_model_other"].strip()
            # text clean_model_id refused: the registry's own "unknown model" message, its name escaped
            st.caption(error_text(LabError("unknown_model", name=typed)) if typed else t("sidebar.model_other_empty"))
    else:
        ss["bert_model"] = choice
        info = by_name[choice]
        if info.available:
            if info.description:
                st.caption(model_description(info))
        else:
            st.warning(t("sidebar.model_unavailable", reason=error_text(info.problem)))


# Trusted, constant JavaScript from this repository: on a phone, choosing a page closes the sidebar.
_phone_nav = component("lab_phone_nav", js=Path(__file__).with_name("phone_nav.js").read_text(encoding="utf-8"))


def render_sidebar() -> None:
    """Language, BERT model and presentation-mode controls; keeps them in session_state and the URL."""
    init_state()
    ss = st.session_state

    with st.sidebar:
        st.radio("语言 / Language", list(LANGS), key="lang", format_func=LANGS.get, horizontal=True)

        models, problem = get_model_infos()
        bert_models = [m for m in (models or []) if getattr(m, "kind", None) == "bert"]
        bert_models += hub_cache.cached_masked_lms()  # hub models downloaded before class: offered by name
        if problem:
            st.info(problem)
        elif not bert_models:
            st.info(t("sidebar.no_bert_models"))
        _render_model_selector(bert_models)

        st.toggle(t("sidebar.present"), key="present", help=t("sidebar.present_help"))
        st.caption(t("sidebar.footer"))
        _phone_nav(key="phone_nav")

    if ss["present"]:
        st.markdown(PRESENT_CSS, unsafe_allow_html=True)  # constant stylesheet only

    sync_to_url(lang=ss["lang"], model=ss.get("bert_model"), present=True if ss["present"] else None)
