"""What every page shares: the projector sizes, and one way to show an error where the user is."""
from __future__ import annotations

import streamlit as st

from ui.i18n import error_text


def presenting() -> bool:
    """Presentation mode is on: pages draw their figures at projector size."""
    return bool(st.session_state.get("present"))


def show_error(err: BaseException) -> None:
    """A LabError's own message, or a generic line (the details go to the server log): never a traceback."""
    st.error(error_text(err))
