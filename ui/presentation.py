"""Presentation mode: a scene stepper above every page, and a stylesheet that hides the app chrome.

``app.py`` calls, once per run, after the sidebar and before the page:

- :func:`arrive` always: a URL with ``slide=<scene id>`` (ui.lecture_scenes) starts a scene the first
  time it is opened (``ui.state.start_scene``): the page seeds its fields again from the scene's query
  parameters even if it was visited before (otherwise a page reads the URL only for values the session
  does not keep yet).
  A bare deep link (``/elmo-weights?slide=worked``, or ``/?slide=worked`` on another page) gets the
  scene's parameters and page; parameters already in the link win (a shared, edited scene);
- :func:`render_stepper` when ``st.session_state["present"]`` is on: previous / next buttons
  (keyboard: PageUp / PageDown, what presentation clickers send, and ← / →; ``ui/presenter.js`` catches
  them before any focused widget does), the scene's title and a note for the teacher, a list of all
  scenes, the language and a way out of presentation mode. On arrival the scene's result is scrolled
  into view below the bar. A scene the stepper left comes back as it was left (its page's parameters, kept in
  the session: a sentence the lecturer typed there), a scene's link as it first opens.

Links to a scene from anywhere (home page, exercises) use :func:`scene_link`, to a page :func:`page_link`.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import streamlit as st
from streamlit.components.v2 import component
from streamlit.errors import StreamlitPageNotFoundError

from ui import PAGES, state
from ui import lecture_scenes as pres
from ui.i18n import t

PINNED_KEY = "present_pinned"  # a page's own switch, pinned under the scene bar (the placement counts it in)
SESSION_PARAMS = ("present", "lang", "model")  # written by the sidebar on every run (ui/sidebar.py)
APPLIED_KEY = "_present_slide_applied"
# scene id -> the page parameters it was left with (what its page wrote to the URL: the sentences committed there)
LEFT_KEY = "_present_scenes_left"
# What each scene is about (ui.lecture_scenes.Scene.result), by scene id.
SCENE_RESULTS: dict[str, str] = {scene.id: scene.result for scene in pres.SCENES if scene.result}


# What a lecturer changes live on a page (the key of an input, or of a container around inputs) and the result
# that change drives: once the run it starts has ended, presentation mode brings that result wholly into view,
# moving the page as little as possible (ui/presenter.js). An input inside a result needs no line here: it
# drives the result around it (any key of SCENE_RESULTS or of these values).
INPUT_RESULTS: dict[str, dict[str, str]] = {
    "static-vs-contextual": dict.fromkeys(("vec_scene", "vec_word", "vec_text", "static_ctx"), "static_result"),
    "pretraining-objectives": {
        **dict.fromkeys(("obj_sentence", "obj_top_k", "obj_pos"), "obj_bilm_result"),
        **dict.fromkeys(("obj_text_a", "obj_text_b", "obj_metric", "obj_token"), "obj_deep_result"),
        **dict.fromkeys(("obj_gpt_sentence", "obj_mask_pos"), "obj_gpt_result")},
    # the sliders stand in elmo_result, beside the bars of s they set
    "elmo-weights": {
        **dict.fromkeys(("elmo_mode", "elmo_onehot_k", "elmo_result", "elmo_preset_uniform", "elmo_preset_syntax",
                         "elmo_preset_semantics", "elmo_preset_worked_example", "elmo_preset_onehot"), "elmo_s_result"),
        # the sentences (ui.sentence_inputs) and the model drive the live chart beside the sliders
        **dict.fromkeys(("vec_scene", "vec_text", "vec_word", "elmo_use_bert"), "elmo_live_result")},
    "fill-mask": {
        **dict.fromkeys(("fill_example", "fill_mode", "fill_sentence", "fill_plain", "fill_word", "fill_chars",
                         "fill_show_all"), "fill_topk"),
        # the sub-experiments' own boxes drive their own results
        "fill_cands": "fill_cands_result", "fill_corrupt_text": "fill_corrupt_result",
        **dict.fromkeys(("fill_nsp_example", "fill_nsp_a", "fill_nsp_b"), "fill_nsp_result"),
        # the iterative scene: a step's buttons and slider bring its evidence (the candidates' bars) into view
        **dict.fromkeys(("fill_prev", "fill_next", "fill_step"), "fill_step_result")},
    "attention-heatmap": {
        **dict.fromkeys(("att_sentence", "att_pair", "att_hide", "att_words", "att_token"), "att_head_view"),
        "att_tab": "att_result"},
    "layer-evidence": {"_ev_section": "evidence_result"},
}


def result_key(scene: pres.Scene | None) -> str | None:
    return SCENE_RESULTS.get(scene.id) if scene else None


def presenter_data(scene: pres.Scene | None, url_path: str | None, arrivals: int) -> dict:
    """What ``ui/presenter.js`` needs on this page: the scene's result to place on arrival (once per arrival:
    ``token``), and which result each input drives."""
    drives = INPUT_RESULTS.get(url_path or "", {})
    return {"target": result_key(scene), "token": f"{scene.id if scene else ''}:{arrivals}", "drives": drives,
            "results": sorted(set(SCENE_RESULTS.values()) | set(drives.values()))}


SHORT_LANG_NAMES = {"zh": "中文", "en": "EN"}  # the language button names the language it switches to
SHORTCUTS_SUPPORTED = "shortcut" in inspect.signature(st.button).parameters

# A CONSTANT stylesheet (never interpolate anything into it): no sidebar, header or toolbar on the
# projector; the stepper stays visible at the top while the page scrolls.
PRESENT_CHROME_CSS = """
<style>
[data-testid="stSidebar"],
[data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"],
[data-testid="stSidebarNav"],
[data-testid="stHeader"],
[data-testid="stToolbar"],
[data-testid="stDecoration"] { display: none !important; }
[data-testid="stMain"] [data-testid="stMainBlockContainer"] { padding-top: 0.6rem !important; }
/* sticky on the bar's wrapper: the bar itself fills its wrapper, so it would have no room to stick.
   One row of one fixed height on every scene, in both languages: long titles and notes end in "…" */
div:has(> .st-key-present_bar) { position: sticky; top: 0; z-index: 990; height: 3.4rem; flex: none; }
/* what stands before the bar draws nothing (stylesheets, scripts), but each would add the column's gap above it */
[data-testid="stElementContainer"]:has(~ div > .st-key-present_bar) { display: none; }
div:has(> .st-key-present_pinned) { position: sticky; top: 3.4rem; z-index: 980; background: #FFFFFF; flex: none; }
.st-key-present_bar { background: #FFFFFF; border-bottom: 2px solid #EEF2F8; padding-bottom: 0.3rem;
  flex-wrap: nowrap !important; box-sizing: border-box; min-height: 0; margin: 0 !important; gap: 0.5rem !important; }
.st-key-present_bar button { white-space: nowrap; }
.st-key-present_bar [data-testid="stPopoverButton"] div[aria-hidden="true"] { display: none; }  /* the chevrons */
.st-key-present_text { min-width: 0; }
.st-key-present_text p { white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
  margin: 0 !important; line-height: 1.45 !important; }
.st-key-present_text p + p { font-size: 0.8rem; }
.st-key-present_bar kbd { display: none !important; }  /* the keys are named in the buttons' tooltips */
/* widget labels, options, inputs and captions follow the enlarged root font size */
[data-testid="stWidgetLabel"] p,
[data-testid="stRadio"] label p,
[data-testid="stCheckbox"] label p,
[data-testid="stMain"] input,
[data-testid="stMain"] textarea,
[data-testid="stMain"] button p { font-size: 1rem !important; }
[data-testid="stCaptionContainer"] { font-size: 0.9rem !important; }
/* at projector size long metric labels and page links wrap instead of ending in "…" */
[data-testid="stMetricLabel"] .stMarkdownEllipsis,
[data-testid="stMetricLabel"] .stMarkdownEllipsis p,
[data-testid="stPageLink-NavLink"] span:has(> [data-testid="stMarkdownContainer"]) {
  white-space: normal; overflow: visible; }
</style>
"""


# Trusted, constant JavaScript from this repository (never built from user input).
_presenter = component(
    "lab_presenter", js=(Path(__file__).with_name("presenter.js")).read_text(encoding="utf-8"))


def page_path(url_path: str) -> str | None:
    """The script path of the page with ``url_path`` (``ui.PAGES``)."""
    return next((spec.path for spec in PAGES if spec.url_path == url_path), None)


def arrive(url_path: str | None) -> bool:
    """Start the scene when a scene link is opened; True if it did.

    Runs before the page: the page then seeds its widgets from the scene's query parameters."""
    ss = st.session_state
    slide = st.query_params.get(pres.SLIDE_PARAM)
    scene = pres.BY_ID.get(slide) if slide else None
    if scene is not None and scene.url_path != url_path:
        if ss.get(APPLIED_KEY) != scene.id:
            go_to(scene, keep=dict(st.query_params))  # a deep link names a scene of another page
        scene = None
    if scene is None:
        if ss.pop(APPLIED_KEY, None) is not None:  # left the scene: arriving again starts it again
            state.end_scene()
        return False
    if ss.get(APPLIED_KEY) == scene.id:
        return False  # the scene is already running; keep what the teacher changed since
    ss[APPLIED_KEY] = scene.id
    state.start_scene()  # the page's fields are seeded again, from these parameters (ui.state.seed)
    for key, value in scene.params:
        if key not in st.query_params:
            st.query_params[key] = value
    return True


def go_to(scene: pres.Scene, keep: dict[str, str] | None = None) -> None:
    """Switch to ``scene`` (its page with its query parameters, overridden by ``keep``). Does not return."""
    path = page_path(scene.url_path)
    if path is None:
        return
    st.switch_page(path, query_params={**scene.query, **(keep or {})})


def page_link(path: str | None, label: str, icon: str | None = None, query: dict[str, str] | None = None) -> None:
    """An ``st.page_link`` to the page of script ``path``; plain text where there is no such page (a page run on
    its own, without app.py's ``st.navigation``, as in the page tests)."""
    if path is not None:
        try:
            st.page_link(path, label=label, icon=icon, query_params=query)
            return
        except StreamlitPageNotFoundError:
            pass
    st.markdown(f"**{label}**")


def scene_link(scene_id: str, label: str, icon: str | None = None) -> None:
    """A :func:`page_link` to a scene."""
    scene = pres.BY_ID[scene_id]
    page_link(page_path(scene.url_path), label, icon, scene.query)


def _exit() -> None:
    st.session_state["present"] = False


def _toggle_lang() -> None:
    ss = st.session_state
    ss["lang"] = "en" if ss.get("lang") == "zh" else "zh"


def _button(label: str, key: str, shortcut: str | None = None, **kwargs) -> bool:
    if shortcut and SHORTCUTS_SUPPORTED:
        kwargs["shortcut"] = shortcut
    return st.button(label, key=key, **kwargs)


def render_stepper(url_path: str | None) -> None:
    """The presentation bar (call only in presentation mode, before the page runs)."""
    st.markdown(PRESENT_CHROME_CSS, unsafe_allow_html=True)  # constant stylesheet only
    index = pres.scene_index(st.query_params.get(pres.SLIDE_PARAM), url_path)
    scene = pres.SCENES[index] if index is not None else None
    previous, following = pres.neighbours(index)
    total = len(pres.SCENES)
    target = None
    # One flexible row: the buttons take their natural width, the scene text takes the rest and wraps.
    with st.container(key="present_bar", horizontal=True, vertical_alignment="center", gap="small", wrap=False):
        # "previous" is an icon (named in its tooltip): the room goes to the scene's title
        if _button(":material/arrow_back:", "present_prev", "PageUp", disabled=previous is None,
                   help=t("present.prev_help")):
            target = previous
        # the title and the note's first words, one line each (CSS): the bar keeps one height on every scene
        with st.container(key="present_text", width="stretch", gap=None):
            if index is None or scene is None:
                st.markdown(f"**{t('present.off_list')}**")
            else:
                st.markdown(f"**{t('present.counter', k=index + 1, n=total)} · {t(scene.title_key)}**\n\n"
                            f":gray[{t(scene.note_key)}]")
        if scene is not None:
            with st.popover(":material/notes:", help=t("present.note_help")):  # the whole note
                st.markdown(t(scene.note_key))
        if _button(t("present.next"), "present_next", "PageDown", icon=":material/arrow_forward:",
                   icon_position="right", type="primary", disabled=following is None, help=t("present.next_help")):
            target = following
        with st.popover(":material/format_list_numbered:", help=t("present.all")):
            for i, listed in enumerate(pres.SCENES):
                if st.button(f"{i + 1}. {t(listed.title_key)}", key=f"present_go_{listed.id}",
                             type="primary" if i == index else "tertiary", width="stretch"):
                    target = listed
        other = "en" if st.session_state.get("lang") == "zh" else "zh"
        st.button(SHORT_LANG_NAMES.get(other, other), key="present_lang", on_click=_toggle_lang,
                  help=t("present.lang_help"))
        st.button(":material/close:", key="present_exit", on_click=_exit, help=t("present.exit_help"))
    _presenter(key="present_keys",
               data=presenter_data(scene, url_path, st.session_state.get(state.ARRIVALS_KEY, 0)))
    if target is not None:
        left = st.session_state.setdefault(LEFT_KEY, {})
        if scene is not None and st.query_params.get(pres.SLIDE_PARAM) == scene.id:
            left[scene.id] = scene_state()
        # the new page's URL carries the session's settings from the start, not after its first run; a scene
        # left before comes back as the lecturer left it (a sentence typed there), not as it first opened
        go_to(target, keep={**left.get(target.id, {}),
                            **{k: st.query_params[k] for k in SESSION_PARAMS if k in st.query_params}})


def scene_state() -> dict[str, str]:
    """The current scene's own state: the page's parameters in the URL, which its page writes after each run
    (``ui.state.sync_to_url``: the sentences committed there, the sliders), without the session's and the slide."""
    return {k: v for k, v in st.query_params.to_dict().items() if k not in (*SESSION_PARAMS, pres.SLIDE_PARAM)}
