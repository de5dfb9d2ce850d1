"""课堂看板 The class board: every student writes a sentence with the board's word on a phone, and the projector
shows where each sentence's word lands, coloured by the sense the student chose, with the nearest-neighbour sense
accuracy per layer over the class's sentences.

One page, four views, told apart by the URL:

- ``/class-board``: the projector (the presentation scene ``board``): the newest board, as soon as the lecturer
  opens one, else a short "no board open" state that says what the board is (a student who lands here is told
  so, with a link to the static page). Nothing to type in front of the class; a closed newest board is a
  closed board, never a way back to an older board's QR code;
- ``/class-board?view=lecturer``: the lecturer's own device: the secret once, then a signed token in the URL
  (``key=``, ``core.board.rules.lecturer_token``) that survives reloads; a new board, the list of boards, and each
  board's moderation (hide, show, approve, lock, clear, close, export). None of it is ever on the projector;
- ``/class-board?board=<id>&view=projector``: one board's projector view: join link, code and QR code, the class
  picture and the accuracy per layer, refreshed every ``REFRESH_S`` seconds by a fragment;
- ``/class-board?board=<id>``: the join link, a phone's page: send a sentence, see it ringed, withdraw it. ``me``
  in the URL is the browser's identity, issued and signed by the server (no names), so a reload keeps the student's own
  points and a script cannot make up a new one per send.

Contributions live in the database (``core.board.store``), shared by every process of a lecture hall.
"""
from __future__ import annotations

import streamlit as st

from app_pages.class_board import sections
from core.board import rules as board
from core.board.store import Board, Store
from core.board.store import store as board_store
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from ui.i18n import error_text, t
from ui.lecturer import sign_in
from ui.page import attempt, presenting, show_error
from ui.presentation import page_link, page_path

LIVE = ("open", "locked")
# The projector's title is the page's one heading (h1, as on every page), drawn at a subheader's size so that the
# board stays whole at 1280×720 (the presenter's stylesheet sets every h1 to 2.4rem). A constant stylesheet.
TITLE_CSS = """<style>
[data-testid="stMainBlockContainer"] .st-key-board_title h1 { font-size: 1.5rem !important; padding: 0 !important; }
</style>"""


def projector(store: Store, b: Board, *, follow: bool = False) -> None:
    """The projector: title and the big-QR switch on one line, then the live part (``board_result``: what the
    presentation scene places below its bar, QR, count, picture, layer switch and accuracy in view together).
    ``follow``: the view follows the newest board (a new board replaces it, closing it ends it)."""
    st.markdown(TITLE_CSS, unsafe_allow_html=True)  # constant stylesheet only
    title, switch = st.columns([4, 1], vertical_alignment="bottom")
    with title, st.container(key="board_title"):
        st.title(t("board.projector_title", word=md_escape(b.word)), anchor=False)
    big = switch.toggle(t("board.big_qr"), key="board_big_qr")
    st.fragment(run_every=sections.REFRESH_S)(_live)(store, b, follow, big)
    sections.explain()


def _live(store: Store, b: Board, follow: bool, big: bool) -> None:
    try:  # each refresh reads the board again: locked or closed from another device
        fresh = store.board(b.id) or b
        newest = store.newest_board() if follow else None
    except LabError as err:  # the database unreachable: said, and the next refresh tries again
        show_error(err)
        return
    if follow and (newest is None or newest.id != b.id or newest.state not in LIVE):
        st.rerun(scope="app")  # a new board, or this one closed: the page shows that, not an older board
    if fresh.state not in LIVE:
        show_error(LabError("board_unknown"))
        return
    with st.container(key="board_result"):
        if fresh.state == "locked":
            st.caption(error_text(LabError("board_locked")))
        if big:
            sections.big_qr(fresh)
            return
        picture, side = st.columns([5, 4], gap="medium")
        with picture:
            drawn = sections.class_picture(store, fresh, side=side)
    if drawn is not None:
        sections.notes(*drawn)


def waiting(store: Store) -> None:
    """No board open: what the board is, where it is opened (the lecturer's own device), and for a student who
    lands here a link to the static page; the page turns into the projector as soon as a board opens."""
    newest = store.newest_board()
    with st.container(key="board_result"):
        st.title(t("board.title"))
        st.info(t("board.waiting_closed" if newest is not None else "board.waiting"), icon=":material/qr_code_2:")
        st.markdown(t("board.intro"))
        st.markdown(t("board.waiting_student"))
        page_link(page_path("static-vs-contextual"), t("board.static_link"), ":material/scatter_plot:")
        st.caption(t("board.lecturer_where"))
    st.fragment(run_every=2 * sections.REFRESH_S)(_watch)(store, newest.id if newest else None)
    if presenting():  # room below, so that the presenter can scroll this short page's result under its bar
        st.space(480)


def _watch(store: Store, seen: str | None) -> None:
    try:
        newest = store.newest_board()
    except LabError:  # the database unreachable: the next tick tries again
        return
    if newest is not None and newest.id != seen and newest.state in LIVE:
        st.rerun(scope="app")


def student(store: Store, b: Board) -> None:
    st.title(t("nav.board"))  # short: one line on a phone; the word is in the task below
    address = board.client_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For"))
    origin = board.origin_of(address)
    given = st.query_params.get("me", "")
    me = attempt(board.issue_identity, store, b.id, given, origin)  # signed by the server; kept by a reload
    if me is None:
        return
    if me != given:
        st.query_params["me"] = me
    sections.send_form(store, b, me, origin)
    sections.my_sentences(store, b, me)
    st.fragment(_student_picture)(store, b, me)


def _student_picture(store: Store, b: Board, me: str) -> None:
    """On request: a class's phones drawing the picture on every send would leave the projector's server no time."""
    if not st.toggle(t("board.show_picture"), key="board_show_picture"):
        return
    st.button(t("board.refresh"), key="board_refresh", icon=":material/refresh:")
    sections.class_picture(store, b, me=me)


def lecturer(store: Store) -> None:
    """The lecturer's own device: sign in once (the URL then carries a signed token), open a board, pick any
    board and moderate it. The projector shows none of this."""
    st.title(t("board.lecturer_title"))
    if not sign_in():
        st.markdown(t("board.lecturer_intro", hours=board.LECTURER_LINK_S // 3600))
        return
    boards = store.recent_boards()
    live = [b for b in boards if b.state in LIVE]
    with st.expander(t("board.new"), expanded=not live, icon=":material/add:"):
        opened = sections.open_form(store)
    if opened is not None:
        sections.warm_models(opened)
        st.session_state["board_manage"] = opened.id
        st.rerun()
    if not boards:
        st.info(t("board.none_yet"))
        return
    by_id = {b.id: b for b in boards}
    if st.session_state.get("board_manage") not in by_id:
        st.session_state["board_manage"] = boards[0].id
    pick = st.selectbox(t("board.manage"), list(by_id), key="board_manage",
                        format_func=lambda i: t("board.manage_item", word=by_id[i].word, code=i,
                                                state=t(f"board.state_{by_id[i].state}"),
                                                opened=sections.clock(by_id[i].created)))
    b = by_id[pick]
    join = board.join_url(st.context.url, b.id)
    st.markdown(t("board.links", code=md_escape(b.id), join=join))
    if board.is_loopback(join):
        st.warning(t("board.loopback", env=board.URL_ENV))
    page_link(page_path("class-board"), t("board.projector_link"), ":material/present_to_all:",
              {"board": b.id, "view": "projector"})
    st.fragment(run_every=2 * sections.REFRESH_S)(sections.moderation)(store, b.id)
    sections.exports(store, b)


def _unreachable(err: LabError) -> None:
    """The database cannot be reached: one message, and the page runs again by itself once it answers."""
    show_error(err)
    st.fragment(run_every=RETRY_S)(_retry)()


def _retry() -> None:
    try:
        board_store().board("")
    except LabError:
        return
    st.rerun()


RETRY_S = 5.0
try:  # a database that cannot be reached is one message (core.board.store says board_db_down), not a traceback
    store = board_store()
    board_id = st.query_params.get("board")
    current = store.board(board_id) if board_id else None
except LabError as err:
    if err.code != "board_db_down":
        raise
    _unreachable(err)
    st.stop()
view = st.query_params.get("view")
try:  # the database gone in the middle of a run: the same one message
    if view == "lecturer":
        lecturer(store)
    elif not board_id:
        newest = store.newest_board()
        if newest is not None and newest.state in LIVE:
            projector(store, newest, follow=True)
        else:
            waiting(store)
    elif current is None or current.state == "closed":
        show_error(LabError("board_unknown"))
    elif view == "projector":
        projector(store, current)
    else:
        student(store, current)
except LabError as err:
    if err.code != "board_db_down":
        raise
    _unreachable(err)
