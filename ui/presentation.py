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

import functools
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path

import streamlit as st
from streamlit.components.v2 import component
from streamlit.errors import StreamlitPageNotFoundError

from core.runtime.concurrency import PAGE_RUNS, page_run
from ui import PAGES, state
from ui import lecture_scenes as pres
from ui.i18n import t

# a page's row pinned under the scene bar (a switch, a sentence box), which the placement counts in for what follows
# it in the container around it (ui/presenter.js: pinnedAbove)
PINNED_KEY = "present_pinned"
# the session's own parameters, kept on every scene: present, lang and model (written by the sidebar on every run,
# ui/sidebar.py) and follow (the presenter view's projector link)
SESSION_PARAMS = ("present", "lang", "model", "follow")
FOLLOW_KEY = "_present_follow"  # the presentation this window follows (the link's follow=), kept for the session
FOLLOWED_KEY = "_present_followed"  # (presentation, move) this window last followed
REPORTED_KEY = "_present_reported"  # (scene, move) this window last told the presenter view it shows
FOLLOW_S = 0.5  # how often the projector window asks for the presenter's move (then one page run to show it)
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


RUN_KEY = "_present_run"  # how many runs have told the presenter their end (its token for a run)
VALUES_KEY = "_present_values"  # the session's plain values at the start of the last run, as text
HANDLED_KEY = "_present_handled"  # the id of the last clicker press the bar handled
URL_PATH_KEY = "_present_url_path"  # the page of the last full run, for a fragment's rerun
SEEN_KEY = "_present_seen"  # the id of the press in the bar's state in this run (None: no press reached the run)
PRESS_KEY = "present_keys"  # the bar's presenter: its "press" state is the clicker's last press
PLAIN = (str, int, float, bool, type(None))


def plain_values(values: Mapping[str, object]) -> dict[str, str]:
    """The values a presenter can change (the widgets': text, numbers, switches, choices), as text to compare;
    the presentation's own keys and anything else (results, models, tables) left out."""
    return {key: repr(value) for key, value in values.items()
            if isinstance(key, str) and not key.startswith(("present_", "_present"))
            and (isinstance(value, PLAIN)
                 or isinstance(value, (list, tuple)) and all(isinstance(v, PLAIN) for v in value))}


def changed_keys(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The keys whose value differs between two :func:`plain_values` (new ones included), sorted."""
    return sorted(key for key, value in now.items() if before.get(key) != value)


# Pages that catch the clicker's presses outside presentation mode: the presenter view (app_pages/presenter). The
# browser sends a press again until a run's end says it was handled, so each of their runs must end by telling.
CONSOLE_PAGES = frozenset({"presenter"})


def wants_telling(url_path: str, changed: list[str], presenting: bool) -> bool:
    """Whether a full run ends with :func:`tell`: in presentation mode, on the presenter view, after an edit, and on
    a page with inputs that drive results (its element installs the browser's listener that notes which input the
    student touches, before the first edit). Pages with none of these skip it."""
    return presenting or url_path in CONSOLE_PAGES or bool(changed) or bool(INPUT_RESULTS.get(url_path))


def begin_run(url_path: str | None = None) -> list[str]:
    """At the start of a run (the app's, with its page's ``url_path``, or a fragment's): the keys whose values changed
    since the last run started, which is what the presenter changed (a widget's new value is in the session before
    the run starts)."""
    ss = st.session_state
    if url_path is not None:
        ss[URL_PATH_KEY] = url_path
    now = plain_values(ss.to_dict())
    before = ss.get(VALUES_KEY)
    ss[VALUES_KEY] = now
    return [] if before is None else changed_keys(before, now)  # a session's first run: nothing was edited yet


def told_data(scene: pres.Scene | None, url_path: str | None, arrivals: int, changed: list[str], run: int,
              handled: str | None, seen: str | None, slide: str | None, presenting: bool = True) -> dict:
    """What ``ui/presenter.js`` is told at the end of a run: the scene's arrival (its result to place below the bar,
    once per arrival: ``token``; None outside presentation mode, where only edits are placed), the keys the run
    changed, the run's token, the last press handled and the press the run saw, the URL's ``slide`` (the scene a
    press leaves), and which result each input drives (the decisions: ``ui/placement.mjs``)."""
    drives = INPUT_RESULTS.get(url_path or "", {})
    arrival = {"key": result_key(scene), "token": f"{scene.id if scene else ''}:{arrivals}"} if presenting else None
    return {"role": "told", "arrival": arrival,
            "changed": changed, "run": run, "handled": handled, "seen": seen, "slide": slide, "drives": drives,
            "results": sorted(set(SCENE_RESULTS.values()) | set(drives.values()))}


def tell(url_path: str | None, changed: list[str], fragment_run: bool = False) -> None:
    """Draw the presenter's end-of-run element (call last in every run): everything the run
    drew is in the page before it, so the presenter places results that exist. A fragment's own rerun draws an
    element with a key of its own run (a fragment drawn inside a full run leaves the telling to the app's end)."""
    ss = st.session_state
    ss[RUN_KEY] = run = ss.get(RUN_KEY, 0) + 1
    key = f"present_told_{run}" if fragment_run else "present_told"
    index = pres.scene_index(st.query_params.get(pres.SLIDE_PARAM), url_path) if ss.get("present") else None
    scene = pres.SCENES[index] if index is not None else None  # a student's page: no scene arrives, edits are placed
    _presenter(key=key, data=told_data(scene, url_path, ss.get(state.ARRIVALS_KEY, 0), changed, run,
                                       ss.get(HANDLED_KEY), ss.get(SEEN_KEY), st.query_params.get(pres.SLIDE_PARAM),
                                       presenting=bool(ss.get("present"))))


def fragment(func: Callable[..., None]) -> Callable[..., None]:
    """``st.fragment`` whose own reruns tell the presenter what they changed (a fragment's rerun does not reach the
    app's :func:`tell`): an edit inside it brings its result into view as a full run's does."""
    @functools.wraps(func)
    def run(*args, **kwargs) -> None:
        # drawn inside a full run, whose start found the edits already (app.py): reading the session's values again
        # costs the run its components' states once per fragment, a tenth of the fill-mask page's time (issue #50)
        own_rerun = not PAGE_RUNS.held()
        with page_run():  # a fragment's own rerun takes its turn as a page run does (a full run's holds one)
            changed = begin_run() if own_rerun else []
            func(*args, **kwargs)
            if changed:
                tell(st.session_state.get(URL_PATH_KEY), changed, fragment_run=True)
    return st.fragment(run)


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
/* the bar at the screen's top, scrolled or not */
[data-testid="stMain"] [data-testid="stMainBlockContainer"] { padding-top: 0 !important; }
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
.st-key-present_text { min-width: 0; justify-content: center; }  /* a title alone (a following window) too */
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


# Trusted, constant JavaScript from this repository (never built from user input): the decisions (placement.mjs)
# before the page's side of them (presenter.js), one module.
_presenter = component("lab_presenter", js="\n".join(
    (Path(__file__).with_name(name)).read_text(encoding="utf-8") for name in ("placement.mjs", "presenter.js")))


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
    st.session_state.pop(FOLLOW_KEY, None)


def following_id() -> str | None:
    """The presentation this window follows: the link's ``follow=``, kept for the session (a page's own link that
    drops the parameter does not end the following); None outside the presenter view's projector window."""
    ss = st.session_state
    given = st.query_params.get("follow")
    if given:
        ss[FOLLOW_KEY] = given
    return ss.get(FOLLOW_KEY)


def _follow(presentation_id: str, url_path: str | None) -> None:
    """The projector window's refresh (a fragment, every ``FOLLOW_S``): go to the scene the presenter view moved to,
    once per move (a scene changed here by the clicker stays until the presenter's next move), and tell the presenter
    view which scene this window shows."""
    # the board's database only for a window that follows (its libraries stay out of every other page's start)
    from core.board import presenter
    from core.board.store import store as board_store

    with page_run():
        ss = st.session_state
        try:
            store = board_store()
            p = presenter.following(store, presentation_id)
        except Exception:  # the database unreachable for a moment: the next refresh tries again
            return
        if p is None:
            st.markdown(f":red[:material/link_off: {t('present.follow_ended_short')}]", help=t("present.follow_ended"))
            return
        st.markdown(":material/cast_connected:")  # the presenter view drives this window
        here = st.query_params.get(pres.SLIDE_PARAM)
        if ss.get(FOLLOWED_KEY) != (p.id, p.moves):
            ss[FOLLOWED_KEY] = (p.id, p.moves)
            target = pres.BY_ID.get(p.scene)
            if target is not None and target.id != here:
                _leave_for(target, url_path)
        if here in pres.BY_ID and ss.get(REPORTED_KEY) != (here, p.moves):
            ss[REPORTED_KEY] = (here, p.moves)
            presenter.report_shown(store, p.id, here, p.moves)


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
    follow = following_id()
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
            elif follow:  # the notes stay on the presenter view
                st.markdown(f"**{t('present.counter', k=index + 1, n=total)} · {t(scene.title_key)}**")
            else:
                st.markdown(f"**{t('present.counter', k=index + 1, n=total)} · {t(scene.title_key)}**\n\n"
                            f":gray[{t(scene.note_key)}]")
        if follow:
            with st.container(key="present_follow", width="content"):  # an icon's width: the title keeps the room
                st.fragment(run_every=FOLLOW_S)(_follow)(follow, url_path)
        elif scene is not None:
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
    press = _presenter(key=PRESS_KEY, data={"role": "bar"}, on_press_change=lambda: None).get("press")
    ss = st.session_state
    ss[SEEN_KEY] = press.get("id") if isinstance(press, dict) else None
    if isinstance(press, dict) and press.get("id") != ss.get(HANDLED_KEY):  # a press of the clicker not yet handled
        # it moves on from the scene it left only (placement.mjs): a run that shows another scene has handled it
        moved = following if press.get("direction") == "next" else previous
        if press.get("from") != st.query_params.get(pres.SLIDE_PARAM) or moved is None:
            ss[HANDLED_KEY] = press.get("id")
        else:
            target = moved
    if target is not None:
        _leave_for(target, url_path)


def _leave_for(target: pres.Scene, url_path: str | None) -> None:
    """Go to ``target``, keeping the scene left as the lecturer left it. Does not return."""
    index = pres.scene_index(st.query_params.get(pres.SLIDE_PARAM), url_path)
    scene = pres.SCENES[index] if index is not None else None
    left = st.session_state.setdefault(LEFT_KEY, {})
    if scene is not None and st.query_params.get(pres.SLIDE_PARAM) == scene.id:
        left[scene.id] = scene_state()
    # the new page's URL carries the session's settings from the start, not after its first run; a scene
    # left before comes back as the lecturer left it (a sentence typed there), not as it first opened
    go_to(target, keep={**left.get(target.id, {}),
                        **{k: st.query_params[k] for k in SESSION_PARAMS if k in st.query_params}})


def console_press() -> str | None:
    """The presenter view's clicker (``app_pages/presenter``, its ``presenter_console`` container): the direction
    ("next" / "prev") of a PageDown / PageUp not handled yet, else None. ``ui/presenter.js`` catches the keys there as
    on the bar and sends each press again until the run's end (:func:`tell`) says it was handled: no press is lost to
    a rerun, which a button's click or shortcut can be (a click merged into a fragment's timed rerun)."""
    ss = st.session_state
    press = _presenter(key="presenter_keys", data={"role": "bar"}, on_press_change=lambda: None).get("press")
    ss[SEEN_KEY] = press.get("id") if isinstance(press, dict) else None
    if not isinstance(press, dict) or press.get("id") == ss.get(HANDLED_KEY):
        return None
    ss[HANDLED_KEY] = press.get("id")
    return "next" if press.get("direction") == "next" else "prev"


def scene_state() -> dict[str, str]:
    """The current scene's own state: the page's parameters in the URL, which its page writes after each run
    (``ui.state.sync_to_url``: the sentences committed there, the sliders), without the session's and the slide."""
    return {k: v for k, v in st.query_params.to_dict().items() if k not in (*SESSION_PARAMS, pres.SLIDE_PARAM)}
