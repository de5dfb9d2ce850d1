"""The class board's rules: every student sends a sentence with the board's word from a phone, and the projector
shows where each sentence's word lands (``app_pages/class_board/``). Pure Python, no Streamlit.

- :func:`open_board` / :func:`moderate`: the lecturer's actions, each checked against the lecturer secret
  (:func:`lecturer_secret`: ``LAB_BOARD_SECRET``, else generated once into the data folder and printed in the
  server log), so a student's browser cannot forge them whatever it sends.
- :func:`issue_identity`: a student's browser identity, issued and signed by the server (HMAC under the
  database's own key), kept in the join link's ``me``; a script cannot make one up, and the server issues a
  bounded number per network address per minute.
- :func:`send` / :func:`withdraw`: a student's actions. A sentence is normalised first (NFKC, format characters
  dropped: ``core.guard.safe_text.normalise``), then passes the project's input checks (controls stripped, not empty,
  within a limit), must contain the word (at most :data:`MAX_WORD_REPEATS` times: the board draws the first
  occurrence only, one sentence one point), and must not hold a word of the project's vulgar list; sends are
  limited per identity and per network origin, and the board to :data:`MAX_CONTRIBUTIONS`, each checked in the
  transaction that inserts (``core.board.store.Store.add_checked``), so concurrent sends and every process of a
  lecture hall count the same sends.
- :func:`join_url` / :func:`qr_svg`: the link students open (``LAB_BOARD_URL``) and its QR code, drawn here.
- :func:`mix_points`: ELMo's mix (uniform s) of the class's vectors in the board's projection frame.
  The projection, similarities and nearest-neighbour sense accuracy per layer are the static-vs-contextual
  page's own (``core.vectors.view.occurrence_layers``).
"""
from __future__ import annotations

import base64
import csv
import dataclasses
import functools
import hashlib
import hmac
import io
import ipaddress
import logging
import os
import re
import secrets
import time
from collections.abc import Sequence
from urllib.parse import urlencode, urlsplit

import segno

from ..compute.occurrences import MAX_SENTENCES, find_spans
from ..guard.errors import LabError
from ..guard.safe_text import csv_safe, normalise
from ..guard.validation import check_length, check_text
from ..guard.wordfilter import contains_vulgar
from ..interface import export
from ..models.catalogue import DEFAULT_BERT, DEFAULT_ELMO
from ..vectors.mix import MixView, mix_view
from ..vectors.parsing import strip_controls
from ..vectors.view import VectorsView
from .store import HIDDEN, PENDING, SHOWN, WITHDRAWN, Board, Contribution, Limits, Store, data_dir, private_dir

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
CLIENT_LIMIT = 5  # sends per browser identity per minute: a class sends one or two sentences each
# sends per network origin per minute: a class of 60 phones behind one NAT address, each at its own limit
DEFAULT_ORIGIN_LIMIT = 300
JOIN_LIMIT = 120  # identities issued per network origin per board per minute: 60 phones, each opening twice
MAX_WORD_REPEATS = 3  # times a sentence may hold the word (only the first becomes a point)
MIN_SECRET_CHARS = 12  # LAB_BOARD_SECRET shorter than this is refused at startup
GUESS_LIMIT = 5  # wrong lecturer secrets per network origin per minute, then the sign-in waits
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
        if len(secret) < MIN_SECRET_CHARS:
            raise LabError("board_secret_short", limit=MIN_SECRET_CHARS, count=len(secret))
        return secret
    path = private_dir(data_dir()) / "lecturer-secret"
    if not path.exists():
        # written whole, then linked into place: the hall's processes start together, and none may read a half
        # written file; link fails for all but the first
        draft = path.with_name(f".lecturer-secret.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(12))
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
    require_lecturer(secret)
    expires = int((time.time() if now is None else now) + LECTURER_LINK_S)
    return f"{expires}.{_token_mac(expires)}"


def is_lecturer_link(token: str | None) -> bool:
    """Whether ``token`` is a lecturer link's token still valid (never the secret itself: a URL is no place to
    guess the secret without :func:`sign_in` counting the guesses)."""
    return bool(token) and _valid_token(str(token))


def _valid_token(token: str) -> bool:
    expires, _, mac = token.partition(".")
    if not expires.isdigit() or len(expires) > 12 or int(expires) < time.time():
        return False
    return hmac.compare_digest(mac.encode(), _token_mac(int(expires)).encode())


def sign_in(store: Store, given: str | None, address: str | None, now: float | None = None) -> bool:
    """The lecturer's sign-in: whether ``given`` is the secret. A wrong one is counted per network address; after
    :data:`GUESS_LIMIT` within a minute, LabError ``board_guess_locked`` until the minute has passed (the right
    secret too: a guesser learns nothing from the answer)."""
    now = time.time() if now is None else now
    origin = _salted(store.key().hex(), origin_of(address))
    if store.count_events("", "guess", origin, now - WINDOW_S) >= GUESS_LIMIT:
        raise LabError("board_guess_locked", seconds=int(WINDOW_S))
    if is_lecturer(given):
        return True
    store.add_event("", "guess", origin, 0, WINDOW_S, now)
    return False


def require_lecturer(given: str | None) -> None:
    """LabError ``board_forbidden`` unless ``given`` is the lecturer secret or a valid lecturer link token."""
    if not is_lecturer(given):
        raise LabError("board_forbidden")


def parse_senses(text: str | None) -> tuple[str, ...]:
    """The senses the students choose from: comma-, 、- or line-separated, at most 6 of 12 characters each."""
    clean, _ = strip_controls(normalise(text or ""))
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
    require_lecturer(secret)
    clean, _ = strip_controls(normalise(word or ""))
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
    require_lecturer(secret)
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


@functools.lru_cache(maxsize=64)
def qr_svg(url: str) -> str:
    """The join link as a QR code, an SVG document drawn here (nothing is fetched from outside the server); once
    per link and process (the projector draws it every second)."""
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
    """What the per-origin limits compare: the address, which is never stored as is (:func:`send` keeps an HMAC
    of it under the board's random salt, for one minute)."""
    return address or "?"


def _salted(salt: str, origin: str) -> str:
    return hmac.new(salt.encode(), f"class-board:{origin}".encode(), hashlib.sha256).hexdigest()[:32]


def origin_limit() -> int:
    """Sends per origin per minute (``LAB_BOARD_ORIGIN_LIMIT``; 0 turns the per-origin checks off, the sends and
    the identities issued)."""
    try:
        return max(0, int(os.environ.get(ORIGIN_LIMIT_ENV, DEFAULT_ORIGIN_LIMIT)))
    except ValueError:
        return DEFAULT_ORIGIN_LIMIT


def _signature(store: Store, board_id: str, public: str) -> str:
    digest = hmac.new(store.key(), f"{board_id}|{public}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")[:22]


def client_id(me: str | None) -> str:
    """The public half of an identity: what the database stores with a contribution (the signature, which lets
    its holder withdraw, stays in the browser)."""
    return str(me or "").partition(".")[0]


def valid_identity(store: Store, board_id: str, me: str | None) -> bool:
    """Whether ``me`` is an identity this server issued for this board."""
    public, dot, signature = str(me or "").partition(".")
    return bool(dot and IDENTITY.fullmatch(public)) and hmac.compare_digest(
        signature.encode(), _signature(store, board_id, public).encode())


IDENTITY = re.compile(r"[A-Za-z0-9_-]{16}")


def issue_identity(store: Store, board_id: str, me: str | None, origin: str, now: float | None = None) -> str:
    """``me`` when it is this board's valid identity (a reload of the join link keeps it), else a new one: a random
    public half and its HMAC under the database's key, at most :data:`JOIN_LIMIT` per origin per minute
    (LabError ``board_join_rate``)."""
    if valid_identity(store, board_id, me):
        return str(me)
    board = _usable(store, board_id)
    limit = JOIN_LIMIT if origin_limit() else 0
    if not store.add_event(board_id, "join", _salted(board.salt, origin), limit, WINDOW_S, now):
        raise LabError("board_join_rate", limit=JOIN_LIMIT)
    public = secrets.token_urlsafe(12)
    return f"{public}.{_signature(store, board_id, public)}"


def check_sentence(board: Board, text: str | None, sense: str | None) -> tuple[str, str | None]:
    """The sentence as stored (normalised, control characters dropped, one line) and the sense, or LabError why
    not."""
    clean, _ = strip_controls(normalise(text or ""))
    sentence = check_text(" ".join(clean.split()), MAX_SENTENCE_CHARS)
    found = len(find_spans(sentence, board.word))
    if not found:
        raise LabError("board_no_word", word=board.word)
    if found > MAX_WORD_REPEATS:
        raise LabError("board_word_repeated", word=board.word, count=found, limit=MAX_WORD_REPEATS)
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
    """Store a student's sentence; its number on the board once committed. ``client``: the identity
    :func:`issue_identity` gave the browser. LabError for a closed or locked board, an identity the server did
    not issue, a sentence the checks refuse, too many sends from this identity or origin, or a full board (the
    limits and the insert in one transaction)."""
    board = _usable(store, board_id)
    if board.state == "locked":
        raise LabError("board_locked")
    if not valid_identity(store, board_id, client):
        raise LabError("board_identity")
    sentence, sense = check_sentence(board, text, sense)
    limits = Limits(WINDOW_S, CLIENT_LIMIT, origin_limit(), MAX_CONTRIBUTIONS)
    # pending or shown is decided in the inserting transaction too, from the board's locked row
    return store.add_checked(board_id, client_id(client), _salted(board.salt, origin), sentence, sense, limits, now)


def withdraw(store: Store, board_id: str, contribution_id: int, client: str) -> bool:
    """A student takes back their own contribution (only the browser that holds its signed identity can)."""
    if not valid_identity(store, board_id, client):
        return False
    return store.set_status(board_id, contribution_id, WITHDRAWN, client=client_id(client))


def is_mine(contribution: Contribution, me: str | None) -> bool:
    """Whether ``contribution`` was sent with the identity ``me``."""
    return bool(me) and contribution.client == client_id(me)


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
