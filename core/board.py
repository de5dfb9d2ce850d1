"""The class board's rules: every student sends a sentence with the board's word from a phone, and the projector
shows where each sentence's word lands (``app_pages/class_board/``). Pure Python, no Streamlit.

- :func:`open_board` / :func:`moderate`: the lecturer's actions, each checked against the lecturer secret
  (:func:`lecturer_secret`: ``LAB_BOARD_SECRET``, else generated once into the data folder and printed in the
  server log), so a student's browser cannot forge them whatever it sends.
- :func:`send` / :func:`withdraw`: a student's actions. A sentence passes the project's input checks (controls
  stripped, not empty, within a limit), must contain the word, and must not hold a word of the project's vulgar
  list; sends are limited per browser and per network origin, counted in the database so that every process of
  a lecture hall counts the same sends.
- :func:`join_url` / :func:`qr_svg`: the link students open (``LAB_BOARD_URL``) and its QR code, drawn here.
- :func:`mix_points`: ELMo's mix (uniform s) of the class's vectors in the board's projection frame.
  The projection, similarities and nearest-neighbour sense accuracy per layer are the static-vs-contextual
  page's own (``core.vectors.view.occurrence_layers``).
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import hmac
import io
import ipaddress
import logging
import os
import secrets
import time
from collections.abc import Sequence
from urllib.parse import urlencode, urlsplit

import segno

from . import export
from .board_store import HIDDEN, PENDING, SHOWN, WITHDRAWN, Board, Contribution, Store, data_dir
from .errors import LabError
from .models.catalogue import DEFAULT_BERT, DEFAULT_ELMO
from .occurrences import MAX_SENTENCES, find_spans
from .safe_text import csv_safe
from .validation import check_length, check_text
from .vectors.mix import MixView, mix_view
from .vectors.parsing import strip_controls
from .vectors.view import VectorsView
from .wordfilter import contains_vulgar

_LOG = logging.getLogger("elmo_bert_lab")

SECRET_ENV = "LAB_BOARD_SECRET"
URL_ENV = "LAB_BOARD_URL"  # the address students reach the app at, e.g. http://192.168.1.20:8501
URL_PATH = "class-board"
ORIGIN_LIMIT_ENV = "LAB_BOARD_ORIGIN_LIMIT"
MODELS = {"elmo": DEFAULT_ELMO, "bert": DEFAULT_BERT}  # word2vec is always shown beside them, the static contrast
MAX_SENTENCE_CHARS = 100  # one sentence typed on a phone
MAX_WORD_CHARS = 10
MAX_SENSES, MAX_SENSE_CHARS = 6, 12
MAX_CONTRIBUTIONS = MAX_SENTENCES  # what one projection takes
WINDOW_S = 60.0
CLIENT_LIMIT = 5  # sends per browser per minute: a class sends one or two sentences each
DEFAULT_ORIGIN_LIMIT = 30  # sends per network origin per minute (a phone that opens many sessions)
ACTIONS = ("hide", "show", "approve", "lock", "unlock", "clear", "close")
HOURS_ENV = "LAB_BOARD_HOURS"
DEFAULT_HOURS = 3.0  # a board closes by itself this long after it opened (a lecture and its break)
MAX_HOURS = 24.0
LECTURER_LINK_S = 24 * 3600  # how long a signed lecturer link stays valid


# ---- the lecturer ---------------------------------------------------------------------------------------

def lecturer_secret() -> str:
    """``LAB_BOARD_SECRET``, else the data folder's ``lecturer-secret`` (created once, readable by its owner
    only, shared by the hall's processes on this machine). Printed in the server log on its first use."""
    secret = os.environ.get(SECRET_ENV, "").strip()
    if secret:
        return secret
    path = data_dir() / "lecturer-secret"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # written whole, then linked into place: the hall's processes start together, and none may read a half
        # written file; link fails for all but the first
        draft = path.with_name(f".lecturer-secret.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(9))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    secret = path.read_text().strip()
    if not _announced:
        _announced.append(True)
        _LOG.warning("class board lecturer secret: %s (from %s; set %s to choose it); moderate from your own "
                     "device at /%s?view=lecturer", secret, path, SECRET_ENV, URL_PATH)
    return secret


_announced: list[bool] = []


def is_lecturer(given: str | None) -> bool:
    """``given`` is the lecturer secret, or a lecturer link's token (:func:`lecturer_token`) still valid."""
    if not given:
        return False
    given = str(given)
    return hmac.compare_digest(given.encode(), lecturer_secret().encode()) or _valid_token(given)


def _token_mac(expires: int) -> str:
    key = lecturer_secret().encode()
    return hmac.new(key, f"class-board-lecturer:{expires}".encode(), hashlib.sha256).hexdigest()[:32]


def lecturer_token(secret: str | None, now: float | None = None) -> str:
    """What the lecturer link carries instead of the secret (``key=``): the expiry and an HMAC of it under the
    secret, so a reload of the lecturer's page keeps the lecturer signed in for ``LECTURER_LINK_S`` and a token
    cannot be made without the secret (changing the secret voids every link). LabError for a wrong secret."""
    _require_lecturer(secret)
    expires = int((time.time() if now is None else now) + LECTURER_LINK_S)
    return f"{expires}.{_token_mac(expires)}"


def _valid_token(token: str) -> bool:
    expires, _, mac = token.partition(".")
    if not expires.isdigit() or len(expires) > 12 or int(expires) < time.time():
        return False
    return hmac.compare_digest(mac.encode(), _token_mac(int(expires)).encode())


def _require_lecturer(given: str | None) -> None:
    if not is_lecturer(given):
        raise LabError("board_forbidden")


def parse_senses(text: str | None) -> tuple[str, ...]:
    """The senses the students choose from: comma-, 、- or line-separated, at most 6 of 12 characters each."""
    clean, _ = strip_controls(text or "")
    for sep in "，、\n;；":
        clean = clean.replace(sep, ",")
    senses = tuple(dict.fromkeys(s.strip() for s in clean.split(",") if s.strip()))
    if len(senses) > MAX_SENSES:
        raise LabError("board_too_many_senses", count=len(senses), limit=MAX_SENSES)
    for sense in senses:
        check_length(sense, MAX_SENSE_CHARS)
    return senses


def default_hours() -> float:
    """How long a board stays open by default (``LAB_BOARD_HOURS``, else 3)."""
    try:
        hours = float(os.environ.get(HOURS_ENV, DEFAULT_HOURS))
    except ValueError:
        return DEFAULT_HOURS
    return min(max(hours, 0.1), MAX_HOURS) if hours == hours else DEFAULT_HOURS


def open_board(store: Store, secret: str | None, word: str, senses_text: str | None, model: str, *,
               approval: bool = False, hours: float | None = None) -> Board:
    """A new board for ``word`` (LabError for a wrong secret, an empty or long word, bad senses, unknown model).
    ``approval``: new sentences wait hidden until the lecturer approves them. ``hours``: the board closes by
    itself that long after opening (default :func:`default_hours`, at most ``MAX_HOURS``)."""
    _require_lecturer(secret)
    clean, _ = strip_controls(word or "")
    clean = " ".join(clean.split())
    if not clean:
        raise LabError("empty_word")
    check_length(clean, MAX_WORD_CHARS)
    if model not in MODELS:
        raise LabError("unknown_model", name=model)
    hours = default_hours() if hours is None else min(max(float(hours), 0.1), MAX_HOURS)
    return store.create_board(secrets.token_urlsafe(6), clean, parse_senses(senses_text), model,
                              approval=approval, expires=time.time() + 3600 * hours)


def moderate(store: Store, secret: str | None, board_id: str, action: str, contribution_id: int | None = None) -> None:
    """The lecturer's controls: hide / show (or approve) one contribution, lock / unlock / clear / close the
    board. ``secret``: the lecturer secret or a lecturer link's token."""
    _require_lecturer(secret)
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    if action in ("hide", "show", "approve"):
        if contribution_id is None:
            raise ValueError(f"{action} needs a contribution id")
        store.set_status(board_id, contribution_id, HIDDEN if action == "hide" else SHOWN,
                         only_from=(SHOWN, PENDING) if action == "hide" else (HIDDEN, PENDING))
    elif action == "clear":
        store.clear(board_id)
    else:
        store.set_state(board_id, {"lock": "locked", "unlock": "open", "close": "closed"}[action])


def join_url(page_url: str | None, board_id: str) -> str:
    """The link students open: ``LAB_BOARD_URL`` when set, else the scheme and host the lecturer's browser uses."""
    base = os.environ.get(URL_ENV, "").strip().rstrip("/")
    if not base:
        parts = urlsplit(page_url or "")
        base = f"{parts.scheme or 'http'}://{parts.netloc or 'localhost:8501'}"
    return f"{base}/{URL_PATH}?{urlencode({'board': board_id})}"


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine only (localhost, 127.x, ::1): phones in the room cannot open it."""
    return _loopback_host(urlsplit(url).hostname or "")


def _loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def qr_svg(url: str) -> str:
    """The join link as a QR code, an SVG document drawn here (nothing is fetched from outside the server)."""
    buffer = io.BytesIO()
    segno.make(url, error="m").save(buffer, kind="svg", scale=10, border=2, xmldecl=False)
    return buffer.getvalue().decode("ascii")


# ---- the students ---------------------------------------------------------------------------------------

def client_address(peer: str | None, forwarded_for: str | None) -> str | None:
    """The student's network address: the peer, or behind the lecture hall's nginx (a loopback peer) the address
    nginx appended last to X-Forwarded-For; the earlier entries come from the browser and are not believed."""
    if peer and forwarded_for and _loopback_host(peer):
        return forwarded_for.split(",")[-1].strip() or peer
    return peer


def origin_of(address: str | None) -> str:
    """A network origin as a short hash: what the rate limit compares, without storing an address."""
    return hashlib.sha256(f"class-board:{address or '?'}".encode()).hexdigest()[:16]


def origin_limit() -> int:
    """Sends per origin per minute (``LAB_BOARD_ORIGIN_LIMIT``; 0 turns the check off, e.g. for a load test
    whose simulated students all come from one machine)."""
    try:
        return max(0, int(os.environ.get(ORIGIN_LIMIT_ENV, DEFAULT_ORIGIN_LIMIT)))
    except ValueError:
        return DEFAULT_ORIGIN_LIMIT


def check_sentence(board: Board, text: str | None, sense: str | None) -> tuple[str, str | None]:
    """The sentence as stored (control characters dropped, one line) and the sense, or LabError why not."""
    clean, _ = strip_controls(text or "")
    sentence = check_text(" ".join(clean.split()), MAX_SENTENCE_CHARS)
    if not find_spans(sentence, board.word):
        raise LabError("board_no_word", word=board.word)
    if contains_vulgar(sentence):
        raise LabError("board_vulgar")
    if sense is not None and sense not in board.senses:
        raise LabError("board_bad_sense")
    return sentence, sense


def _usable(store: Store, board_id: str) -> Board:
    board = store.board(board_id)
    if board is None or board.state == "closed":
        raise LabError("board_unknown")
    return board


def send(store: Store, board_id: str, client: str, origin: str, text: str | None, sense: str | None,
         now: float | None = None) -> int:
    """Store a student's sentence; its id once committed. LabError for a closed or locked board, a sentence
    the checks refuse, too many sends from this browser or origin, or a full board."""
    board = _usable(store, board_id)
    if board.state == "locked":
        raise LabError("board_locked")
    sentence, sense = check_sentence(board, text, sense)
    since = (time.time() if now is None else now) - WINDOW_S
    if store.recent_sends(board_id, since, client=client) >= CLIENT_LIMIT:
        raise LabError("board_rate", limit=CLIENT_LIMIT)
    limit = origin_limit()
    if limit and store.recent_sends(board_id, since, origin=origin) >= limit:
        raise LabError("board_rate", limit=limit)
    if len(store.contributions(board_id)) >= MAX_CONTRIBUTIONS:
        raise LabError("board_full", limit=MAX_CONTRIBUTIONS)
    return store.add(board_id, client, origin, sentence, sense, PENDING if board.approval else SHOWN)


def withdraw(store: Store, board_id: str, contribution_id: int, client: str) -> bool:
    """A student takes back their own contribution (only the browser that sent it can)."""
    return store.set_status(board_id, contribution_id, WITHDRAWN, client=client)


# ---- what the projector shows ---------------------------------------------------------------------------

def mix_points(view: VectorsView) -> MixView:
    """ELMo's mix of every layer with uniform s (γ = 1) in the view's own frame, with its sense accuracy."""
    layers = view.stacked().shape[0]
    return mix_view(view.stacked(), [1.0] * layers, 1.0, False, view.occurrence_labels, view.projection)


def export_csv(contributions: Sequence[Contribution], not_sure: str = "") -> str:
    """The board as a spreadsheet: one row per contribution, with its status (shown, hidden, pending), numbered
    as its sender was told and as the projector's TSV numbers it (no author data: the token stays in the
    database). ``not_sure``: what a sentence sent without a sense says in the sense column."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "sentence", "sense", "status", "sent_at"])
    for c in contributions:
        writer.writerow([c.id, csv_safe(c.sentence), csv_safe(c.sense or not_sure), c.status,
                         time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(c.created))])
    return buffer.getvalue()


def projector_zip(view: VectorsView, shown: Sequence[Contribution]) -> bytes:
    """The Embedding Projector's two TSV files of the board, each occurrence numbered by its contribution's id
    (the number its sender was told, the CSV's ``id``), not by its place in the list."""
    contextual = view.contextual
    if contextual is None:
        return b""
    renumbered = dataclasses.replace(contextual, occurrences=[
        dataclasses.replace(o, sentence_index=shown[o.sentence_index].id) for o in contextual.occurrences])
    return export.projector_zip(renumbered)
