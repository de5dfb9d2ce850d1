"""演讲者视图 The presenter view: the lecturer's own laptop or phone steps through the lecture's scenes with each
scene's note, the next scene's title and the lecture's clock, while the projector window, opened from the link shown
here, follows within a second and shows no note (``ui.presentation``). Protected like the class board's moderation
(``ui.lecturer``: the lecturer secret once, then the signed link); the line to the projector is
``core.board.presenter``, in the board's database, so every process of a lecture hall serves it.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.board import presenter
from core.board.store import store as board_store
from core.guard.safe_text import md_escape
from core.runtime.concurrency import page_run
from ui import lecture_scenes as scenes
from ui.i18n import t
from ui.lecturer import SECRET_KEY, sign_in
from ui.page import attempt, show_error
from ui.presentation import console_press, page_link, page_path

ss = st.session_state
REFRESH_S = 1.0  # a move from the lecturer's other device, and the projector's answer, show within this
SHOWN_MOVES_KEY = "presenter_shown_moves"  # the move this page's controls show
# The note is what the lecturer reads at a glance, a step from the laptop: larger than body text; the buttons' labels
# on one line (a content-wide button wrapped "上一个" after two characters). Constant stylesheet.
NOTE_CSS = """<style>
.st-key-presenter_note p { font-size: 1.35rem; line-height: 1.55; }
.st-key-presenter_clock [data-testid="stMetricValue"] { font-variant-numeric: tabular-nums; }
.st-key-presenter_console button { width: max-content; }
.st-key-presenter_console button p { white-space: nowrap; }
</style>"""


def clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}" if minutes >= 60 else f"{minutes:02d}:{seconds:02d}"


def scene_title(scene_id: str) -> str:
    scene = scenes.BY_ID.get(scene_id)
    return t(scene.title_key) if scene else scene_id


def _as_lecturer(action: Callable[..., object], *args: object) -> None:
    """A control's callback: ``action(store, credential, *args)`` (``core.board.presenter``); a refusal (the
    presentation ended, the database unreachable) is said on the next run."""
    try:
        action(board_store(), ss.get(SECRET_KEY), *args)
    except Exception as err:
        ss["presenter_refused"] = err


def _jump(presentation_id: str, key: str, drawn_at: str) -> None:
    """The scene list's choice. Only a scene the lecturer picked moves: a box of a later move can report the value
    its place on the page held before (Streamlit's front end reuses the element under load), which moved the
    projector back to the first scene; that value is never a new choice (empty, or the scene shown)."""
    if ss.get(key) not in (None, drawn_at):
        _as_lecturer(presenter.move, presentation_id, ss[key])


def controls() -> None:
    """The running presentation: the current scene with its note, the buttons, the scene list, the next scene; beside
    them the status (:func:`status`), refreshed every ``REFRESH_S``. The buttons are drawn once per move, not every
    second: a clicker's press never meets a button being drawn again."""
    p = attempt(presenter.start, board_store(), ss.get(SECRET_KEY), scenes.SCENES[0].id)
    if p is None:
        return
    # the buttons below and the clicker, plugged into the lecturer's laptop whose window this is
    direction = console_press()
    if direction is not None:
        previous, following = scenes.neighbours(scenes.scene_index(p.scene, None) or 0)
        target = following if direction == "next" else previous
        if target is not None:
            p = attempt(presenter.move, board_store(), ss.get(SECRET_KEY), p.id, target.id) or p
    ss[SHOWN_MOVES_KEY] = p.moves
    refused = ss.pop("presenter_refused", None)
    if refused is not None:
        show_error(refused)
    index = scenes.scene_index(p.scene, None) or 0
    scene = scenes.SCENES[index]
    previous, following = scenes.neighbours(index)
    main, side = st.columns([3, 2], gap="large")
    with main:
        with st.container(key="presenter_counter"):
            st.subheader(f"{t('present.counter', k=index + 1, n=len(scenes.SCENES))} · {t(scene.title_key)}",
                         anchor=False)
        with st.container(key="presenter_note", border=True):
            st.markdown(t(scene.note_key))
        # the buttons' clicks and the clicker's keys reach Python as presses (ui/presenter.js, console_press above)
        with st.container(horizontal=True, gap="small", key="presenter_console"):
            with st.container(key="presenter_console_prev", width="content"):
                st.button(t("presenter.prev"), key="presenter_prev", icon=":material/arrow_back:",
                          disabled=previous is None, help=t("present.prev_help"))
            with st.container(key="presenter_console_next", width="content"):
                st.button(t("presenter.next"), key="presenter_next", icon=":material/arrow_forward:",
                          icon_position="right", type="primary", disabled=following is None,
                          help=t("present.next_help"))
        # a fresh, empty box per move (the counter above says the scene): a choice in it is always a jump
        jump = f"presenter_jump_{p.moves}"
        st.selectbox(t("presenter.jump"), [s.id for s in scenes.SCENES], index=None, key=jump,
                     placeholder=t("presenter.jump_placeholder"),
                     format_func=lambda i: f"{scenes.SCENES.index(scenes.BY_ID[i]) + 1}. {scene_title(i)}",
                     on_change=_jump, args=(p.id, jump, p.scene))
    with side:
        st.markdown(t("presenter.next_scene", title=md_escape(t(following.title_key))) if following
                    else t("presenter.last"))
        st.fragment(run_every=REFRESH_S)(status)(p.id)
        st.button(t("presenter.restart"), key="presenter_restart", icon=":material/restart_alt:",
                  on_click=_as_lecturer, args=(presenter.restart_clock, p.id))
    url = presenter.follow_url(st.context.url, p.id, ss.get("lang"))
    with st.expander(t("presenter.projector"), expanded=p.moves == 0, icon=":material/present_to_all:"):
        st.markdown(t("presenter.projector_help"))
        st.link_button(t("presenter.open_projector"), url, icon=":material/open_in_new:")
        st.code(url, language=None, wrap_lines=True)


def status(presentation_id: str) -> None:
    """The clock and the scene the projector says it shows, every ``REFRESH_S``; a move made on the lecturer's other
    device redraws the page."""
    with page_run():  # each refresh takes its turn among the process's page runs, as a page run does
        store = board_store()
        p = attempt(presenter.following, store, presentation_id)
        if p is None:
            return
        if p.moves != ss.get(SHOWN_MOVES_KEY):
            st.rerun(scope="app")
        with st.container(key="presenter_clock"):
            st.metric(t("presenter.clock"), clock(p.elapsed()))
        said = attempt(presenter.shown, store, p.id)
        if said is None:
            st.info(t("presenter.no_projector"), icon=":material/cast:")
        elif said.scene == p.scene:
            st.success(t("presenter.shows", title=md_escape(scene_title(said.scene))), icon=":material/cast_connected:")
        else:
            st.warning(t("presenter.shows_other", title=md_escape(scene_title(said.scene))), icon=":material/cast:")


st.markdown(NOTE_CSS, unsafe_allow_html=True)  # constant stylesheet only
st.title(t("presenter.title"), anchor=False)
if not sign_in():
    st.markdown(t("presenter.intro"))
else:
    controls()
    page_link(page_path("class-board"), t("presenter.board_link"), ":material/groups:", {"view": "lecturer"})
