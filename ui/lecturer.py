"""The lecturer's sign-in on their own device, for the class board's moderation and the presenter view: the secret
once (``core.board.rules.sign_in`` counts wrong ones per address), then a signed token in the session and in the URL
(``key=``, ``core.board.rules.lecturer_token``), so a reload keeps the lecturer signed in and the secret itself is
never in a URL. One sign-in serves both pages of a session."""
from __future__ import annotations

import streamlit as st

from core.board import rules as board
from core.board.store import store as board_store
from core.guard.errors import LabError
from ui.i18n import t
from ui.page import show_error

ss = st.session_state
SECRET_KEY = "board_secret"  # the lecturer's credential in this session: the link's signed token (or the secret)
LINK_PARAM = "key"  # the lecturer link's token in the URL: a reload keeps the lecturer signed in
GUESS_KEY = "board_sign_in_refused"


def lecturer() -> bool:
    return board.is_lecturer(ss.get(SECRET_KEY))


def sign_in() -> bool:
    """The link's token if the URL holds a valid one, else the secret box. True once signed in."""
    token = st.query_params.get(LINK_PARAM, "")
    # only a signed token in the URL, never the secret itself: guesses go through the box, which counts them
    if token and board.is_lecturer_link(token) and not lecturer():
        ss[SECRET_KEY] = token
    if lecturer():
        if not token and board.is_lecturer_link(ss.get(SECRET_KEY)):  # signed in on the other lecturer page
            st.query_params[LINK_PARAM] = ss[SECRET_KEY]
        return True
    st.text_input(t("board.secret"), key="board_secret_box", type="password", help=t("board.secret_help"),
                  on_change=_signed_in)
    refused = ss.pop(GUESS_KEY, None)
    if refused is not None:  # too many wrong secrets from this address: core.board.rules.sign_in
        show_error(refused)
    elif ss.get(SECRET_KEY) or token:  # a wrong secret, or a link whose token is forged or expired
        show_error(LabError("board_forbidden"))
    return False


def _signed_in() -> None:
    """The secret box's callback (before the page runs): each typed secret is one guess; a right one becomes the
    lecturer link's token, in the session and in the URL."""
    typed = ss.get("board_secret_box", "")
    address = board.client_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For"))
    try:
        right = board.sign_in(board_store(), typed, address)
        token = board.lecturer_token(typed) if right else ""
    except Exception as err:  # locked out, or the database unreachable: said where the box is
        ss[SECRET_KEY], ss[GUESS_KEY] = "", err
        return
    ss[SECRET_KEY] = token if right else typed
    if right:
        st.query_params[LINK_PARAM] = token
