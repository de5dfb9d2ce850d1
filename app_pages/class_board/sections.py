"""The class board's sections (``app_pages/class_board/page.py``): the lecturer's sign-in and board form, the join
panel (link and QR code), the live class picture with its per-layer sense accuracy, the lecturer's moderation,
and the student's send form and own sentences. Every action goes through ``core.board.rules``, which checks the
lecturer secret itself: a section that is not drawn is not what protects the board."""
from __future__ import annotations

import re

import streamlit as st

from core.board import rules as board
from core.board.store import HIDDEN, SHOWN, Board, Store
from core.board.store import store as board_store
from core.compute.stats import wilson_interval
from core.figures import vectors as vfigs
from core.figures.board import class_scatter
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from core.models.catalogue import DEFAULT_STATIC
from core.vectors.view import VectorsView
from ui import cache, downloads
from ui.i18n import error_text, layer_name, t
from ui.page import attempt, chart, how_computed, load_model, presenting, show_error

ss = st.session_state
SECRET_KEY = "board_secret"  # what the lecturer typed, in this session only
FEEDBACK_KEY = "board_feedback"  # (kind, text) of the student's last send or withdrawal
REFRESH_S = 1.0  # the projector picks up a send within this (plus one computation)
SNAPSHOT_S = 0.5  # how old the class picture's data may be
MIX = "mix"


def lecturer() -> bool:
    return board.is_lecturer(ss.get(SECRET_KEY))


def sign_in() -> None:
    """The secret box. What was typed is kept under a key of its own (a widget's value is dropped as soon as a
    run does not draw the widget, and the projector view does not), copied by a callback, which runs before the
    page: the run that follows the typing already knows the lecturer."""
    st.text_input(t("board.secret"), key="board_secret_box", type="password", help=t("board.secret_help"),
                  on_change=_signed_in)
    refused = ss.pop(GUESS_KEY, None)
    if refused is not None:  # too many wrong secrets from this address: core.board.rules.sign_in
        show_error(refused)
    elif ss.get(SECRET_KEY) and not lecturer():
        show_error(LabError("board_forbidden"))


GUESS_KEY = "board_sign_in_refused"


def _signed_in() -> None:
    """The secret box's callback: each typed secret is one guess (``core.board.rules.sign_in`` counts the wrong ones
    per address); refused while that address is locked out."""
    typed = ss.get("board_secret_box", "")
    address = board.client_address(st.context.ip_address, st.context.headers.get("X-Forwarded-For"))
    try:
        board.sign_in(board_store(), typed, address)
    except Exception as err:  # locked out, or the database unreachable: said where the box is
        ss[SECRET_KEY], ss[GUESS_KEY] = "", err
        return
    ss[SECRET_KEY] = typed


def open_form(store: Store) -> Board | None:
    """The lecturer's new board: the word, the senses to choose from, the model. Returns the opened board."""
    with st.form("board_open"):
        st.text_input(t("board.word"), value="苹果", key="board_new_word", max_chars=board.MAX_WORD_CHARS)
        st.text_input(t("board.senses"), value="水果，公司", key="board_new_senses", help=t("board.senses_help"))
        st.radio(t("board.model"), tuple(board.MODELS), key="board_new_model", horizontal=True,
                 format_func=lambda m: t(f"board.model_{m}", name=board.MODELS[m]))
        submitted = st.form_submit_button(t("board.open"), type="primary")
    if not submitted:
        return None
    return attempt(board.open_board, store, ss.get(SECRET_KEY), ss["board_new_word"], ss["board_new_senses"],
                   ss["board_new_model"])


def join_panel(b: Board, count: int) -> None:
    """The QR code beside the join link and the number of sentences received."""
    url = board.join_url(st.context.url, b.id)
    qr, text = st.columns([1, 1], vertical_alignment="center")
    qr.image(board.qr_svg(url), width=180)
    text.markdown(t("board.join", word=md_escape(b.word)))
    text.metric(t("board.count"), count)
    st.code(url, language=None, wrap_lines=True)
    if board.is_loopback(url):
        st.caption(t("board.loopback", env=board.URL_ENV))


def _layer_options(view: VectorsView, model_key: str) -> list[int | str]:
    return list(range(len(view.layer_names))) + ([MIX] if model_key == "elmo" else [])


def _option_name(view: VectorsView, option: int | str, *, long: bool = False) -> str:
    if isinstance(option, str):  # MIX
        return t("board.mix_long" if long else "board.mix", layers=len(view.layer_names))
    return layer_name(view.layer_names[option])


@st.cache_data(ttl=SNAPSHOT_S, show_spinner=False, max_entries=64, hash_funcs=cache.BY_KEY)
def _snapshot(store_url: str, board_id: str, ctx, static, word: str, newest: int):  # newest: part of the cache key only
    """The board's shown contributions and their view, computed at most twice a second per process and shared by
    every session (the projector's refreshes; a class sending 60 sentences in 10 s would otherwise compute one
    view per send). ``newest``: a student's own last send, which their picture must hold."""
    shown = board_store(store_url).contributions(board_id)
    if not shown:
        return shown, None
    return shown, cache.occurrence_view(ctx, static, tuple(c.sentence for c in shown), word,
                                        tuple(c.sense for c in shown), one_by_one=True, first_only=True)


def class_picture(store: Store, b: Board, *, me: str | None = None, side=None) -> None:
    """Every shown contribution's word in the board model's layer (or ELMo's mix), coloured by sense. With a
    ``side`` container (the projector): the layer choice, and there the join panel and the per-layer sense
    accuracy beside the static contrast."""
    large, projector = presenting(), side is not None
    ctx_name = board.MODELS[b.model]
    missing = t("board.model_missing")
    ctx, problem = load_model(ctx_name, missing)
    static, _ = load_model(DEFAULT_STATIC, missing)  # without word2vec the picture still stands
    newest = max((c.id for c in store.contributions(b.id) if board.is_mine(c, me)), default=0)
    snapshot = attempt(_snapshot, store.url, b.id, ctx, static, b.word, newest) if ctx is not None else None
    shown, view = snapshot or ([], None)
    if side is not None:
        with side:
            join_panel(b, len(shown))
    else:
        st.metric(t("board.count"), len(shown))
    if ctx is None:
        st.error(problem)
        return
    if not shown:
        st.info(t("board.empty", word=md_escape(b.word)))
        return
    if view is None or not view.num_occurrences:
        return
    options = _layer_options(view, b.model)
    default = options[-1]
    if projector:
        choice = st.select_slider(t("board.layer"), options, value=default, key="board_layer",
                                  format_func=lambda o: _option_name(view, o))
    else:
        choice = default
    occurrences = view.contextual.occurrences
    mix = board.mix_points(view) if MIX in options else None
    if mix is not None and choice == MIX:
        coords, accuracy = mix.coords, mix.accuracy
    else:
        coords, accuracy = view.coords[choice], view.accuracy[False][choice]
    mine = [k for k, occ in enumerate(occurrences) if board.is_mine(shown[occ.sentence_index], me)]
    ev = view.projection.explained_variance_ratio
    # a phone's picture: the short layer name as its title, the legend in rows of its own below the axis
    title = (t("board.picture_title", model=ctx_name, layer=_option_name(view, choice, long=True)) if projector
             else _option_name(view, choice))
    # each point numbered as its sender was told ("sent, number N") and as the lecturer's list shows it
    ids = [view.ids[k].replace(str(occ.sentence_index + 1), str(shown[occ.sentence_index].id), 1)
           for k, occ in enumerate(occurrences)]
    fig = class_scatter(coords, ids, view.occurrence_labels, view.hover, mine=mine, mine_name=t("board.mine"),
                        explained=ev, points_name=b.word, large=large, narrow=not projector,
                        height=450 if projector else 460, title=title)
    chart(fig, "board_scatter", toolbar=projector)
    if accuracy is not None:
        low, high = wilson_interval(accuracy, view.scored)
        st.caption(t("board.accuracy_now", acc=f"{100 * accuracy:.0f}", n=view.scored, low=f"{100 * low:.0f}",
                     high=f"{100 * high:.0f}"))
    if not projector:
        return
    st.caption(t("board.caption_space", dim=view.stacked().shape[-1], pc1=f"{100 * ev[0]:.0f}",
                 pc2=f"{100 * ev[1]:.0f}"))
    # horizontal names, broken before a Latin word ("第 1 层<br>biLSTM"): rotated ones ran into the legend
    names = [re.sub(r" (?=[A-Za-z])", "<br>", _option_name(view, o)) for o in options]
    accuracies = list(view.accuracy[False]) + ([mix.accuracy] if mix else [])
    with side:
        if any(a is not None for a in accuracies):
            accuracy_fig = vfigs.accuracy_chart(
                names, accuracies, view.static_accuracy.get(False), n=view.scored, contextual_name=ctx_name,
                static_name=t("static.acc_static", name=DEFAULT_STATIC), title=t("board.acc_title"),
                large=large, height=300, current=options.index(choice))
            chart(accuracy_fig.update_xaxes(tickangle=0), "board_acc")
        else:
            st.caption(t("board.acc_hint"))
    if lecturer():
        downloads.projector_button(view)


def moderation(store: Store, b: Board) -> None:
    """Hide or show a contribution, lock, clear or close the board, export it: the lecturer's only."""
    rows = store.contributions(b.id, (SHOWN, HIDDEN))
    state = t(f"board.state_{b.state}")
    with st.expander(t("board.moderation", state=state), icon=":material/shield_person:"):
        if rows:
            st.dataframe({"#": [c.id for c in rows], t("static.col.sentence"): [c.sentence for c in rows],
                          t("static.col.label"): [c.sense or "" for c in rows],
                          t("board.col.status"): [t(f"board.status_{c.status}") for c in rows]},
                         hide_index=True, key="board_rows")
            pick = st.selectbox(t("board.pick"), [c.id for c in rows], key="board_pick",
                                format_func=lambda i: next(f"#{c.id} {c.sentence[:30]}" for c in rows if c.id == i))
            hide, show = st.columns(2)
            if hide.button(t("board.hide"), key="board_hide", icon=":material/visibility_off:"):
                _act(store, b, "hide", pick)
            if show.button(t("board.show"), key="board_show", icon=":material/visibility:"):
                _act(store, b, "show", pick)
        lock, clear, close = st.columns(3)
        locked = b.state == "locked"
        if lock.button(t("board.unlock" if locked else "board.lock"), key="board_lock", icon=":material/lock:"):
            _act(store, b, "unlock" if locked else "lock")
        confirm = clear.checkbox(t("board.clear_confirm"), key="board_clear_confirm")
        if clear.button(t("board.clear"), key="board_clear", disabled=not confirm, icon=":material/delete_sweep:"):
            _act(store, b, "clear")
        if close.button(t("board.close"), key="board_close", icon=":material/close:"):
            _act(store, b, "close")
        st.download_button(t("board.dl_csv"), data=lambda: board.export_csv(store.contributions(b.id, (SHOWN,))),
                           file_name="class-board.csv", mime="text/csv", on_click="ignore", key="board_dl_csv",
                           icon=":material/download:")


def _act(store: Store, b: Board, action: str, contribution_id: int | None = None) -> None:
    try:
        board.moderate(store, ss.get(SECRET_KEY), b.id, action, contribution_id)
    except Exception as err:  # e.g. the secret changed on the server: a message, never a traceback
        show_error(err)
        return
    st.rerun()


# ---- the student ----------------------------------------------------------------------------------------

def _send(store: Store, b: Board, me: str, origin: str) -> None:
    """The send button's callback: runs before the page, so a sent sentence can leave the box empty."""
    try:
        number = board.send(store, b.id, me, origin, ss.get("board_sentence"), ss.get("board_sense"))
    except Exception as err:  # a refused sentence: the student's own message, the text stays in the box
        ss[FEEDBACK_KEY] = ("error", error_text(err))
        return
    ss[FEEDBACK_KEY] = ("success", t("board.sent", n=number))
    ss["board_sentence"] = ""


def _withdraw(store: Store, b: Board, me: str, contribution_id: int) -> None:
    done = board.withdraw(store, b.id, contribution_id, me)
    ss[FEEDBACK_KEY] = ("info", t("board.withdrawn" if done else "board.not_withdrawn", n=contribution_id))


def send_form(store: Store, b: Board, me: str, origin: str) -> None:
    st.markdown(t("board.task", word=md_escape(b.word)))
    if b.state == "locked":
        st.info(error_text(LabError("board_locked")))
    with st.form("board_send", border=True):
        st.text_input(t("board.sentence"), key="board_sentence", max_chars=board.MAX_SENTENCE_CHARS,
                      placeholder=t("board.sentence_placeholder", word=b.word))
        if b.senses:
            st.radio(t("board.sense", word=md_escape(b.word)), (*b.senses, None), key="board_sense",
                     index=len(b.senses), format_func=lambda s: md_escape(s) if s else t("board.not_sure"))
        st.form_submit_button(t("board.send"), type="primary", icon=":material/send:", width="stretch",
                              on_click=_send, args=(store, b, me, origin))
    feedback = ss.pop(FEEDBACK_KEY, None)
    if feedback:
        getattr(st, feedback[0])(feedback[1])


def my_sentences(store: Store, b: Board, me: str) -> None:
    own = [c for c in store.contributions(b.id, (SHOWN, HIDDEN)) if board.is_mine(c, me)]
    if not own:
        return
    st.markdown(f"**{t('board.my_sentences')}**")
    for c in own:
        text, button = st.columns([4, 1], vertical_alignment="center")
        text.text(f"#{c.id} {c.sentence}" + (f" ({c.sense})" if c.sense else ""))
        button.button(t("board.withdraw"), key=f"board_withdraw_{c.id}", on_click=_withdraw,
                      args=(store, b, me, c.id))


def explain() -> None:
    how_computed(t("board.how"))
