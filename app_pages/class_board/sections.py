"""The class board's sections (``app_pages/class_board/page.py``): the lecturer's sign-in, board form, board list
and moderation (on the lecturer's own device, never on the projector), the join panel (link, code and QR code),
the live class picture with its per-layer sense accuracy, and the student's send form and own sentences. Every
action goes through ``core.board.rules``, which checks the lecturer secret (or the lecturer link's signed token)
itself: a section that is not drawn is not what protects the board."""
from __future__ import annotations

import re
import time

import streamlit as st

from core.board import rules as board
from core.board.store import HIDDEN, PENDING, SHOWN, Board, Store
from core.board.store import store as board_store
from core.compute.stats import wilson_interval
from core.figures import vectors as vfigs
from core.figures.board import class_scatter
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from core.models.catalogue import DEFAULT_STATIC
from core.vectors.view import VectorsView
from ui import cache
from ui.i18n import error_text, layer_name, t
from ui.lecturer import SECRET_KEY
from ui.page import attempt, chart, how_computed, load_model, presenting, shared_figure, show_error

ss = st.session_state
LAYER_KEPT = "board_layer_kept"  # {board id: layer choice}: the projector's layer, kept across pages
FEEDBACK_KEY = "board_feedback"  # (kind, text) of the student's last send or withdrawal
REFRESH_S = 1.0  # the projector picks up a send within this (plus one computation)
SNAPSHOT_S = 0.5  # how old the class picture's data may be
MIX = "mix"

# Streamlit's form hint ("Press Enter to submit form", English whatever the page's language) is drawn inside the
# box, over the sentence on a phone: hidden (the send button says it). A constant stylesheet.
FORM_HINT_CSS = """<style>
.st-key-board_send_box [data-testid="InputInstructions"] { display: none; }
</style>"""


def clock(moment: float) -> str:
    """A time of today's lecture, as the server's clock reads it (``14:05``)."""
    return time.strftime("%H:%M", time.localtime(moment))


def open_form(store: Store) -> Board | None:
    """The lecturer's new board: the word, the senses to choose from, the model. Returns the opened board."""
    with st.form("board_open"):
        st.text_input(t("board.word"), value="苹果", key="board_new_word", max_chars=board.MAX_WORD_CHARS)
        st.text_input(t("board.senses"), value="水果，公司", key="board_new_senses", help=t("board.senses_help"))
        st.radio(t("board.model"), tuple(board.MODELS), key="board_new_model", horizontal=True,
                 format_func=lambda m: t(f"board.model_{m}", name=board.MODELS[m]))
        st.checkbox(t("board.approval"), key="board_new_approval", help=t("board.approval_help"))
        st.number_input(t("board.hours"), min_value=0.5, max_value=board.MAX_HOURS, step=0.5,
                        value=board.default_hours(), key="board_new_hours",
                        help=t("board.hours_help", hours=f"{board.DEFAULT_HOURS:g}"))
        submitted = st.form_submit_button(t("board.open"), type="primary")
    if not submitted:
        return None
    return attempt(board.open_board, store, ss.get(SECRET_KEY), ss["board_new_word"], ss["board_new_senses"],
                   ss["board_new_model"], approval=bool(ss.get("board_new_approval")),
                   hours=ss.get("board_new_hours"))


def warm_models(b: Board) -> None:
    """Load the board's models and run one pass on its word while the lecturer opens it, so that the class's
    first sentence is not the one that waits for a model load (7–9 s on a fresh process)."""
    with st.spinner(t("board.warming")):
        ctx, _ = load_model(board.MODELS[b.model], "")
        load_model(DEFAULT_STATIC, "")
        if ctx is not None:
            attempt(cache.encode, ctx, (b.word,))


def join_panel(b: Board, count: int) -> None:
    """The QR code beside the board's code and the number of sentences received, the join link below: compact,
    so that the accuracy chart under it stays on a 720-pixel projector."""
    url = board.join_url(st.context.url, b.id)
    qr, text = st.columns([1, 1], vertical_alignment="center")
    qr.image(board.qr_svg(url), width=140)
    text.markdown(t("board.join_short", word=md_escape(b.word), code=md_escape(b.id)))
    text.metric(t("board.count"), count)
    st.caption(md_escape(url))  # (a loopback link is the lecturer's page's warning, not the class's)


def big_qr(b: Board) -> None:
    """The join QR code as large as the screen allows, with the board's code and link (on demand)."""
    url = board.join_url(st.context.url, b.id)
    qr, text = st.columns([3, 2], vertical_alignment="center")
    qr.image(board.qr_svg(url), width=520)
    text.markdown(t("board.join_big", word=md_escape(b.word), code=md_escape(b.id)))
    text.code(url, language=None, wrap_lines=True)


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


def class_picture(store: Store, b: Board, *, me: str | None = None, side=None
                  ) -> tuple[VectorsView, float | None] | None:
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
        return None
    if not shown:
        st.info(t("board.empty", word=md_escape(b.word)))
        return None
    if view is None or not view.num_occurrences:
        return None
    options = _layer_options(view, b.model)
    default = options[-1]
    if projector:
        # the widget's own state is dropped on another page: the choice is kept per board, and comes back
        kept = ss.setdefault(LAYER_KEPT, {}).get(b.id, default)
        choice = st.select_slider(t("board.layer"), options, value=kept if kept in options else default,
                                  key="board_layer", format_func=lambda o: _option_name(view, o))
        ss[LAYER_KEPT][b.id] = choice
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
    # built once per process for what it shows (the projector redraws it every second, mostly unchanged)
    fig = shared_figure(class_scatter, coords, ids, view.occurrence_labels, view.hover, mine=mine,
                        mine_name=t("board.mine"), explained=ev, points_name=b.word, large=large, narrow=not projector,
                        height=(470 if large else 430) if projector else 460, title=title, senses=b.senses)
    chart(fig, "board_scatter", toolbar=projector)
    if accuracy is not None and not projector:
        low, high = wilson_interval(accuracy, view.scored)
        st.caption(t("board.accuracy_now", acc=f"{100 * accuracy:.0f}", n=view.scored, low=f"{100 * low:.0f}",
                     high=f"{100 * high:.0f}"))
    if not projector:
        return None
    # horizontal names, broken before a Latin word ("第 1 层<br>biLSTM"): rotated ones ran into the legend
    names = [re.sub(r" (?=[A-Za-z])", "<br>", _option_name(view, o)) for o in options]
    accuracies = list(view.accuracy[False]) + ([mix.accuracy] if mix else [])
    with side:
        if any(a is not None for a in accuracies):
            accuracy_fig = shared_figure(
                _accuracy_figure, names, accuracies, view.static_accuracy.get(False), n=view.scored,
                contextual_name=ctx_name, static_name=t("static.acc_static", name=DEFAULT_STATIC),
                title=t("board.acc_title"), large=large, height=270 if large else 300, current=options.index(choice))
            chart(accuracy_fig, "board_acc")
        else:
            st.caption(t("board.acc_hint"))
    return view, accuracy


def _accuracy_figure(*args, **kwargs):
    # horizontal layer names (broken into lines above): rotated ones ran into the legend
    return vfigs.accuracy_chart(*args, **kwargs).update_xaxes(tickangle=0)


def notes(view: VectorsView, accuracy: float | None) -> None:
    """Below the projector's picture (off the 720-pixel screen is fine): the layer's accuracy in words, the frame."""
    if accuracy is not None:
        low, high = wilson_interval(accuracy, view.scored)
        st.caption(t("board.accuracy_now", acc=f"{100 * accuracy:.0f}", n=view.scored, low=f"{100 * low:.0f}",
                     high=f"{100 * high:.0f}"))
    if view.projection is None:
        return
    ev = view.projection.explained_variance_ratio
    st.caption(t("board.caption_space", dim=view.stacked().shape[-1], pc1=f"{100 * ev[0]:.0f}",
                 pc2=f"{100 * ev[1]:.0f}"))


def moderation(store: Store, board_id: str) -> None:
    """The lecturer's device: hide, show or approve a contribution, lock, clear or close the board, export it.
    Never drawn on the projector: the table lists every sentence, a vulgar one too."""
    b = store.board(board_id)
    if b is None:
        return
    rows = store.contributions(b.id, (SHOWN, HIDDEN, PENDING))
    counts = {status: sum(c.status == status for c in rows) for status in (SHOWN, HIDDEN, PENDING)}
    st.markdown(t("board.moderation", state=t(f"board.state_{b.state}"), shown=counts[SHOWN],
                  hidden=counts[HIDDEN], pending=counts[PENDING],
                  expires=clock(b.expires) if b.expires else "—"))
    if b.state == "closed":
        st.info(t("board.closed_note"))
    if rows:
        st.dataframe({"#": [c.id for c in rows], t("static.col.sentence"): [c.sentence for c in rows],
                      t("static.col.label"): [c.sense or t("board.not_sure") for c in rows],
                      t("board.col.status"): [t(f"board.status_{c.status}") for c in rows]},
                     hide_index=True, key="board_rows", height=min(400, 38 + 35 * len(rows)))
        waiting = [c.id for c in rows if c.status == PENDING]
        pick = st.selectbox(t("board.pick"), [c.id for c in rows], key="board_pick",
                            index=[c.id for c in rows].index(waiting[0]) if waiting else 0,
                            format_func=lambda i: next(f"#{c.id} {c.sentence[:30]}" for c in rows if c.id == i))
        hide, show, approve_all = st.columns(3)
        if hide.button(t("board.hide"), key="board_hide", icon=":material/visibility_off:"):
            _act(store, b, "hide", pick)
        if show.button(t("board.show"), key="board_show", icon=":material/visibility:"):
            _act(store, b, "show", pick)
        if waiting and approve_all.button(t("board.approve_all", n=len(waiting)), key="board_approve_all",
                                          icon=":material/done_all:"):
            _act(store, b, "approve", *waiting)
    if b.state == "closed":
        return
    lock, clear, close = st.columns(3)
    locked = b.state == "locked"
    if lock.button(t("board.unlock" if locked else "board.lock"), key="board_lock", icon=":material/lock:"):
        _act(store, b, "unlock" if locked else "lock")
    confirm = clear.checkbox(t("board.clear_confirm"), key="board_clear_confirm")
    if clear.button(t("board.clear"), key="board_clear", disabled=not confirm, icon=":material/delete_sweep:"):
        _act(store, b, "clear")
    if close.button(t("board.close"), key="board_close", icon=":material/close:"):
        _act(store, b, "close")


def exports(store: Store, b: Board) -> None:
    """The board's sentences as CSV (hidden and waiting ones too, with their status; 不确定 where no sense was
    chosen) and the Embedding Projector's TSV files of the shown ones, both numbered as the senders were told."""
    csv, tsv = st.columns(2)
    csv.download_button(t("board.dl_csv"), key="board_dl_csv", icon=":material/download:", on_click="ignore",
                        data=lambda: board.export_csv(store.contributions(b.id, (SHOWN, HIDDEN, PENDING)),
                                                      t("board.not_sure")),
                        file_name=f"class-board-{b.id}.csv", mime="text/csv")
    tsv.download_button(t("static.dl_projector"), key="board_dl_projector", icon=":material/download:",
                        on_click="ignore", data=lambda: _projector_zip(store, b),
                        file_name=f"class-board-{b.id}-projector.zip", mime="application/zip")


def _projector_zip(store: Store, b: Board) -> bytes:
    ctx, _ = load_model(board.MODELS[b.model], t("board.model_missing"))
    static, _ = load_model(DEFAULT_STATIC, t("board.model_missing"))
    if ctx is None:
        return b""
    shown, view = _snapshot(store.url, b.id, ctx, static, b.word, 0)
    return board.projector_zip(view, shown) if view is not None else b""


def _act(store: Store, b: Board, action: str, *contribution_ids: int) -> None:
    try:
        for contribution_id in contribution_ids or (None,):
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
    ss[FEEDBACK_KEY] = ("success", t("board.sent_pending" if b.approval else "board.sent", n=number))
    ss["board_sentence"] = ""


def _withdraw(store: Store, b: Board, me: str, contribution_id: int) -> None:
    done = board.withdraw(store, b.id, contribution_id, me)
    ss[FEEDBACK_KEY] = ("info", t("board.withdrawn" if done else "board.not_withdrawn", n=contribution_id))


def send_form(store: Store, b: Board, me: str, origin: str) -> None:
    st.markdown(t("board.task", word=md_escape(b.word)))
    if b.state == "locked":
        st.info(error_text(LabError("board_locked")))
    st.markdown(FORM_HINT_CSS, unsafe_allow_html=True)  # constant stylesheet only
    with st.container(key="board_send_box"), st.form("board_send", border=True):
        # no max_chars: a browser empties a box whose pasted text is longer; the limit is the check's message
        st.text_input(t("board.sentence"), key="board_sentence",
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
    own = [c for c in store.contributions(b.id, (SHOWN, HIDDEN, PENDING)) if board.is_mine(c, me)]
    if not own:
        return
    st.markdown(f"**{t('board.my_sentences')}**")
    for c in own:
        text, button = st.columns([4, 1], vertical_alignment="center")
        text.text(f"#{c.id} {c.sentence}" + (f" ({c.sense})" if c.sense else "")
                  + (f" · {t('board.status_pending')}" if c.status == PENDING else ""))
        button.button(t("board.withdraw"), key=f"board_withdraw_{c.id}", on_click=_withdraw,
                      args=(store, b, me, c.id))


def explain() -> None:
    how_computed(t("board.how"))
