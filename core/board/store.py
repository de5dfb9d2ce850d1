"""Where the class board's contributions live: a real database, shared by every app process of a lecture hall.

SQLite in WAL mode by default (one file in the data folder, ``LAB_DATA_DIR``, default ``data/`` beside the
code, the file and its WAL files readable by their owner only in a folder only the owner can enter), so several
processes on one machine read and write it together; any SQLAlchemy URL in ``LAB_BOARD_DB`` instead, e.g.
``postgresql+psycopg://user:password@host/lab`` for a hall spread over several machines.
A send is acknowledged only after its transaction committed (``synchronous=FULL`` for SQLite), so a killed
process loses nothing it acknowledged.

Every limit is kept in the database, in the transaction that writes: :meth:`Store.add_checked` first updates the
board's own row (its sentence counter: SQLite takes its one write lock, PostgreSQL locks that row), so the sends
to one board are counted and inserted one after another, whichever process of the hall takes them.

No names and no addresses are stored: a contribution carries the public half of its browser's signed identity
(``core.board.rules.issue_identity``; the half that withdraws stays in the browser) and, for one minute only, an HMAC
of its network address under the board's own random salt, to limit floods. A database that cannot be reached is
``LabError("board_db_down")``, and the next call tries again.
"""
from __future__ import annotations

import functools
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError

from ..guard.errors import LabError

DATA_DIR_ENV, DB_URL_ENV = "LAB_DATA_DIR", "LAB_BOARD_DB"
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "data"

BOARD_STATES = ("open", "locked", "closed")  # locked: shown, no new sends; closed: gone from the join link
SHOWN, HIDDEN, WITHDRAWN, CLEARED = "shown", "hidden", "withdrawn", "cleared"
PENDING = "pending"  # approve-before-show: sent, not shown until the lecturer approves it
# what the board cap counts: what is, or can be made, part of the projection (a pending sentence can be approved)
CAPPED = (SHOWN, HIDDEN, PENDING)

metadata = MetaData()
boards = Table(
    "boards", metadata,
    Column("id", String(16), primary_key=True),
    Column("word", String(40), nullable=False),
    Column("senses", Text, nullable=False),  # JSON list of the sense labels students choose from
    Column("model", String(200), nullable=False),
    Column("state", String(8), nullable=False),
    Column("created", Float, nullable=False),
    Column("last_number", Integer, nullable=False, server_default="0"),  # the board's own sentence numbers
    Column("salt", String(32), nullable=False, server_default=""),  # the key of its origins' HMAC
    Column("approval", Integer, nullable=False, server_default="0"),  # 1: new sentences wait for approval
    Column("expires", Float),  # when the board closes by itself (None: never)
)
contributions = Table(
    "contributions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("board", String(16), ForeignKey("boards.id"), nullable=False, index=True),
    Column("number", Integer),  # 1, 2, … within the board: what the student, the picture and the lecturer see
    Column("client", String(64), nullable=False, index=True),
    Column("origin", String(64), nullable=False),
    Column("sentence", Text, nullable=False),
    Column("sense", String(40)),
    Column("status", String(10), nullable=False),
    Column("created", Float, nullable=False),
    Index("contributions_board_number", "board", "number", unique=True),
)
# rate-limited events that are not contributions: identities issued ("join", per board), wrong lecturer secrets
# ("guess", board "")
events = Table(
    "events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("board", String(16), nullable=False),
    Column("kind", String(8), nullable=False),
    Column("origin", String(64), nullable=False),
    Column("created", Float, nullable=False),
    Index("events_kind_origin", "kind", "origin", "created"),
)
settings = Table(
    "settings", metadata,
    Column("name", String(32), primary_key=True),
    Column("value", Text, nullable=False),
)


@dataclass(frozen=True)
class Board:
    id: str
    word: str
    senses: tuple[str, ...]
    model: str
    state: str
    created: float
    salt: str = ""
    approval: bool = False  # new sentences hidden until the lecturer approves them
    expires: float | None = None  # closed by itself from then on


@dataclass(frozen=True)
class Contribution:
    id: int  # the board's own number: 第 1 号 is a board's first sentence
    client: str  # the public half of the sender's identity
    sentence: str
    sense: str | None
    status: str
    created: float


@dataclass(frozen=True)
class Limits:
    """What :meth:`Store.add_checked` holds to: sends per ``window`` seconds per client and per origin (0: no
    origin limit), and the board's cap."""
    window: float
    client: int
    origin: int
    cap: int


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def private_dir(path: Path) -> Path:
    """``path`` created if missing, entered by its owner only (0700)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def _state(state: str, expires: float | None) -> str:
    """A board's state as stored, or closed once its expiry has passed."""
    return "closed" if expires is not None and time.time() >= expires else state


def default_url() -> str:
    return os.environ.get(DB_URL_ENV) or f"sqlite:///{data_dir() / 'class-board.sqlite3'}"


def _sqlite_pragmas(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, across processes
    cursor.execute("PRAGMA synchronous=FULL")  # a commit is on disk before the send is acknowledged
    cursor.execute("PRAGMA busy_timeout=10000")  # another process writing: wait, do not fail
    cursor.close()


def _private_sqlite_file(path: Path) -> None:
    """The database file created 0600 before SQLite opens it (its -wal and -shm files take the file's mode), in a
    folder of its owner's; an existing file and its WAL files are made 0600 too."""
    if path.parent == data_dir() or not path.parent.exists():
        private_dir(path.parent)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file.exists():
            os.chmod(file, 0o600)


T = TypeVar("T")


def _reachable(method: Callable[..., T]) -> Callable[..., T]:
    """A database that cannot be reached (or answers with an error of its own) is one bilingual LabError."""
    @functools.wraps(method)
    def call(*args, **kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except IntegrityError:
            raise
        except DBAPIError as err:
            raise LabError("board_db_down") from err
    return call


class Store:
    """The board tables behind one SQLAlchemy engine (created when missing, older files brought up to date)."""

    def __init__(self, url: str):
        self.url = url
        if url.startswith("sqlite:///"):
            try:
                _private_sqlite_file(Path(url.removeprefix("sqlite:///")))
            except OSError as err:  # e.g. the folder is gone or not a folder: as unreachable as a server
                raise LabError("board_db_down") from err
            self.engine: Engine = create_engine(url, connect_args={"timeout": 10})
            event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = create_engine(url, pool_pre_ping=True)
        self._key: bytes | None = None
        _reachable(self._create)()

    def _create(self) -> None:
        metadata.create_all(self.engine)
        self._migrate()

    def _migrate(self) -> None:
        """A database written before boards had their own numbers, salts, approval and expiry: the columns added,
        the numbers continued from the old global ids, the old unsalted origins dropped."""
        found = inspect(self.engine)
        board_columns = {c["name"] for c in found.get_columns("boards")}
        contribution_columns = {c["name"] for c in found.get_columns("contributions")}
        statements = []
        if "last_number" not in board_columns:
            statements.append("ALTER TABLE boards ADD COLUMN last_number INTEGER NOT NULL DEFAULT 0")
        if "salt" not in board_columns:
            statements.append("ALTER TABLE boards ADD COLUMN salt VARCHAR(32) NOT NULL DEFAULT ''")
        if "approval" not in board_columns:
            statements.append("ALTER TABLE boards ADD COLUMN approval INTEGER NOT NULL DEFAULT 0")
        if "expires" not in board_columns:
            statements.append("ALTER TABLE boards ADD COLUMN expires FLOAT")
        if "number" not in contribution_columns:
            statements += ["ALTER TABLE contributions ADD COLUMN number INTEGER",
                           "UPDATE contributions SET number = id, origin = ''",
                           "UPDATE boards SET last_number = (SELECT COALESCE(MAX(c.number), 0) FROM contributions c "
                           "WHERE c.board = boards.id)",
                           "CREATE UNIQUE INDEX IF NOT EXISTS contributions_board_number "
                           "ON contributions (board, number)"]
        for statement in statements:
            try:
                with self.engine.begin() as conn:
                    conn.execute(text(statement))
            except DBAPIError:  # another process of the hall migrated first
                pass
        with self.engine.begin() as conn:
            for row in conn.execute(select(boards.c.id).where(boards.c.salt == "")).all():
                conn.execute(update(boards).where(boards.c.id == row.id).values(salt=secrets.token_hex(16)))

    # ---- the server's own key (signs the students' identities) ----
    @_reachable
    def key(self) -> bytes:
        """A random key kept in the database, the same for every process of the hall; made on first use."""
        if self._key is None:
            with self.engine.begin() as conn:
                value = conn.execute(select(settings.c.value).where(settings.c.name == "identity_key")).scalar()
            if value is None:
                try:
                    with self.engine.begin() as conn:
                        conn.execute(settings.insert().values(name="identity_key", value=secrets.token_hex(32)))
                except IntegrityError:  # another process made it first
                    pass
                with self.engine.begin() as conn:
                    value = conn.execute(select(settings.c.value).where(settings.c.name == "identity_key")).scalar()
            self._key = bytes.fromhex(str(value))
        return self._key

    @_reachable
    def setting(self, name: str) -> str | None:
        """A named value every process of the hall shares (e.g. the presenter's scene), or None."""
        with self.engine.connect() as conn:
            return conn.execute(select(settings.c.value).where(settings.c.name == name)).scalar()

    @_reachable
    def set_setting(self, name: str, value: str) -> None:
        try:
            with self.engine.begin() as conn:
                if conn.execute(update(settings).where(settings.c.name == name).values(value=value)).rowcount == 0:
                    conn.execute(settings.insert().values(name=name, value=value))
        except IntegrityError:  # another process inserted it first: this value is the newer one
            with self.engine.begin() as conn:
                conn.execute(update(settings).where(settings.c.name == name).values(value=value))

    # ---- boards ----
    @_reachable
    def create_board(self, board_id: str, word: str, senses: tuple[str, ...], model: str, *,
                     approval: bool = False, expires: float | None = None) -> Board:
        board = Board(board_id, word, tuple(senses), model, "open", time.time(), secrets.token_hex(16), approval,
                      expires)
        with self.engine.begin() as conn:
            conn.execute(boards.insert().values(id=board.id, word=word, senses=json.dumps(list(senses),
                         ensure_ascii=False), model=model, state=board.state, created=board.created,
                         last_number=0, salt=board.salt, approval=int(approval), expires=expires))
        return board

    @staticmethod
    def _board(row) -> Board:
        """A row as a Board; past its expiry a board reads as closed (no process has to close it)."""
        return Board(row.id, row.word, tuple(json.loads(row.senses)), row.model, _state(row.state, row.expires),
                     row.created, row.salt, bool(row.approval), row.expires)

    @_reachable
    def board(self, board_id: str) -> Board | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(boards).where(boards.c.id == board_id)).first()
        return None if row is None else self._board(row)

    @_reachable
    def newest_board(self) -> Board | None:
        """The most recently opened board, whatever its state: what the projector follows (a closed newest board
        is a closed board, never a way back to an older one)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(boards).order_by(boards.c.created.desc()).limit(1)).first()
        return None if row is None else self._board(row)

    @_reachable
    def recent_boards(self, limit: int = 20) -> list[Board]:
        """The newest boards first, closed ones included (the lecturer's list)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(boards).order_by(boards.c.created.desc()).limit(limit)).all()
        return [self._board(row) for row in rows]

    @_reachable
    def latest_board(self) -> Board | None:
        """The most recently opened board that is not closed, by the lecturer or by its expiry."""
        with self.engine.connect() as conn:
            row = conn.execute(select(boards.c.id).where(
                boards.c.state != "closed", or_(boards.c.expires.is_(None), boards.c.expires > time.time()))
                               .order_by(boards.c.created.desc()).limit(1)).first()
        return self.board(row.id) if row else None

    @_reachable
    def set_state(self, board_id: str, state: str) -> None:
        if state not in BOARD_STATES:
            raise ValueError(f"unknown board state {state!r}")
        with self.engine.begin() as conn:
            conn.execute(update(boards).where(boards.c.id == board_id).values(state=state))

    def _lock_board(self, conn: Connection, board_id: str, *, number: bool) -> tuple[str, int, bool] | None:
        """The board's row written first in the transaction: SQLite's write lock, PostgreSQL's row lock, held to
        the commit, so that what this transaction counts next no other send to the board can change.
        ``number``: the board's sentence counter moves on (rolled back with the rest if the send is refused).
        The board's state (closed past its expiry), counter and approval, or None for no such board."""
        values = {"last_number": boards.c.last_number + 1} if number else {"state": boards.c.state}
        if conn.execute(update(boards).where(boards.c.id == board_id).values(**values)).rowcount != 1:
            return None
        row = conn.execute(select(boards.c.state, boards.c.last_number, boards.c.approval, boards.c.expires)
                           .where(boards.c.id == board_id)).one()
        return _state(row.state, row.expires), int(row.last_number), bool(row.approval)

    # ---- contributions ----
    @_reachable
    def add_checked(self, board_id: str, client: str, origin: str, sentence: str, sense: str | None,
                    limits: Limits, now: float | None = None) -> int:
        """Store one contribution if the board is open and under its cap and neither the client nor the origin
        has used up its sends in the window, all in one transaction (pending when the board approves before it
        shows); the board's number of the contribution once committed.
        LabError ``board_unknown`` / ``board_locked`` / ``board_rate`` / ``board_rate_origin`` /
        ``board_full`` otherwise (nothing written)."""
        now = time.time() if now is None else now
        since = now - limits.window
        with self.engine.begin() as conn:
            locked = self._lock_board(conn, board_id, number=True)
            if locked is None or locked[0] == "closed":
                raise LabError("board_unknown")
            state, number, approval = locked
            if state == "locked":
                raise LabError("board_locked")

            def count(*where) -> int:
                return int(conn.execute(select(func.count()).select_from(contributions).where(
                    contributions.c.board == board_id, *where)).scalar_one())

            if count(contributions.c.client == client, contributions.c.created >= since) >= limits.client:
                raise LabError("board_rate", limit=limits.client)
            if limits.origin and count(contributions.c.origin == origin,
                                       contributions.c.created >= since) >= limits.origin:
                raise LabError("board_rate_origin", limit=limits.origin)
            if count(contributions.c.status.in_(CAPPED)) >= limits.cap:
                raise LabError("board_full", limit=limits.cap)
            conn.execute(contributions.insert().values(
                board=board_id, number=number, client=client, origin=origin, sentence=sentence, sense=sense,
                status=PENDING if approval else SHOWN, created=now))
            # an origin is needed for one window only: older ones are forgotten
            conn.execute(update(contributions).where(contributions.c.origin != "", contributions.c.created < since)
                         .values(origin=""))
            return number

    @_reachable
    def add_event(self, board_id: str, kind: str, origin: str, limit: int, window: float,
                  now: float | None = None) -> bool:
        """Record one ``kind`` event of ``origin`` unless ``limit`` of them (0: no limit) happened within
        ``window`` seconds: True when recorded. For a board, counted under the board's lock."""
        now = time.time() if now is None else now
        with self.engine.begin() as conn:
            if board_id:
                self._lock_board(conn, board_id, number=False)
            if limit:
                seen = conn.execute(select(func.count()).select_from(events).where(
                    events.c.board == board_id, events.c.kind == kind, events.c.origin == origin,
                    events.c.created >= now - window)).scalar_one()
                if int(seen) >= limit:
                    return False
            conn.execute(events.insert().values(board=board_id, kind=kind, origin=origin, created=now))
            conn.execute(events.delete().where(events.c.created < now - 2 * window, events.c.kind == kind))
            return True

    @_reachable
    def count_events(self, board_id: str, kind: str, origin: str, since: float) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(events).where(
                events.c.board == board_id, events.c.kind == kind, events.c.origin == origin,
                events.c.created >= since)).scalar_one())

    @_reachable
    def contributions(self, board_id: str, statuses: tuple[str, ...] = (SHOWN,)) -> list[Contribution]:
        """The board's contributions with one of ``statuses``, oldest first."""
        query = (select(contributions).where(contributions.c.board == board_id,
                                             contributions.c.status.in_(statuses))
                 .order_by(contributions.c.number))
        with self.engine.connect() as conn:
            return [Contribution(r.number, r.client, r.sentence, r.sense, r.status, r.created)
                    for r in conn.execute(query)]

    @_reachable
    def set_status(self, board_id: str, number: int, status: str, *, client: str | None = None,
                   only_from: tuple[str, ...] = (SHOWN, HIDDEN, PENDING)) -> bool:
        """Change one contribution's status (``client``: only if that browser sent it); True when one changed."""
        query = update(contributions).where(contributions.c.board == board_id,
                                            contributions.c.number == number,
                                            contributions.c.status.in_(only_from)).values(status=status)
        if client is not None:
            query = query.where(contributions.c.client == client)
        with self.engine.begin() as conn:
            return conn.execute(query).rowcount == 1

    @_reachable
    def clear(self, board_id: str) -> int:
        """Every shown, hidden or pending contribution becomes ``cleared`` (kept in the database, off the board)."""
        with self.engine.begin() as conn:
            return conn.execute(update(contributions).where(contributions.c.board == board_id,
                                                            contributions.c.status.in_((SHOWN, HIDDEN, PENDING)))
                                .values(status=CLEARED)).rowcount


def store(url: str | None = None) -> Store:
    """The process's store for ``url`` (default: ``LAB_BOARD_DB`` or the SQLite file in the data folder)."""
    return _store(url or default_url())


@functools.lru_cache(maxsize=4)
def _store(url: str) -> Store:
    return Store(url)
