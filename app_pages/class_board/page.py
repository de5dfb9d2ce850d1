"""课堂看板 The class board: every student writes a sentence with the board's word on a phone, and the projector
shows where each sentence's word lands, coloured by the sense the student chose, with the nearest-neighbour sense
accuracy per layer over the class's sentences.

One page, three views, told apart by the URL:

- ``/class-board``: the lecturer signs in with the lecturer secret (``core.board.rules.lecturer_secret``), opens a board
  and sees the current one as on the projector (the presentation scene ``board``);
- ``/class-board?board=<id>&view=projector``: the projector: join link and QR code, the class picture, refreshed
  every ``REFRESH_S`` seconds by a fragment (nobody touches anything); moderation for a signed-in lecturer only;
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
from ui.page import attempt, show_error


def projector(store: Store, b: Board) -> None:
    st.title(t("board.projector_title", word=md_escape(b.word)))
    if b.state == "locked":
        st.info(error_text(LabError("board_locked")))
    live = st.fragment(run_every=sections.REFRESH_S)(_live)
    with st.container(key="board_result"):
        live(store, b)
    if sections.lecturer():  # a fragment of its own, refreshed too: new sentences can be hidden as they come
        st.fragment(run_every=2 * sections.REFRESH_S)(sections.moderation)(store, b)
    sections.explain()


def _live(store: Store, b: Board) -> None:
    try:  # each refresh reads the board again: locked or closed from another session
        b = store.board(b.id) or b
    except LabError as err:  # the database unreachable: said, and the next refresh tries again
        show_error(err)
        return
    if b.state == "closed":
        show_error(LabError("board_unknown"))
        return
    picture, side = st.columns([5, 4], gap="medium")
    with picture:
        sections.class_picture(store, b, side=side)


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


def lecturer_home(store: Store) -> None:
    """Sign in; then a new board, and the current one as on the projector (what the presentation scene shows)."""
    current = store.latest_board() if sections.lecturer() else None
    if current is None:
        st.title(t("board.title"))
        st.markdown(t("board.intro"))
    if not sections.lecturer():
        with st.container(key="board_result"):  # what the presentation scene shows until the lecturer signs in
            sections.sign_in()
        return
    with st.expander(t("board.new"), expanded=current is None, icon=":material/add:"):
        opened = sections.open_form(store)
    if opened is not None:
        st.query_params.update(board=opened.id, view="projector")
        st.rerun()
    if current is not None:
        projector(store, current)


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
    _unreachable(err)
    st.stop()
if not board_id:
    lecturer_home(store)
    st.stop()
if current is None or current.state == "closed":
    show_error(LabError("board_unknown"))
elif st.query_params.get("view") == "projector":
    projector(store, current)
else:
    student(store, current)
