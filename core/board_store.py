"""Where the class board's contributions live: a real database, shared by every app process of a lecture hall.

SQLite in WAL mode by default (one file in the data folder, ``LAB_DATA_DIR``, default ``data/`` beside the
code), so several processes on one machine read and write it together; any SQLAlchemy URL in ``LAB_BOARD_DB``
instead, e.g. ``postgresql+psycopg://user:password@host/lab`` for a hall spread over several machines.
A send is acknowledged only after its transaction committed (``synchronous=FULL`` for SQLite), so a killed
process loses nothing it acknowledged.

No names are stored: a contribution carries a random per-browser token and a hash of its network origin,
only to let its author withdraw it and to limit floods.
"""
from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine

DATA_DIR_ENV, DB_URL_ENV = "LAB_DATA_DIR", "LAB_BOARD_DB"
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / "data"

BOARD_STATES = ("open", "locked", "closed")  # locked: shown, no new sends; closed: gone from the join link
SHOWN, HIDDEN, WITHDRAWN, CLEARED = "shown", "hidden", "withdrawn", "cleared"
PENDING = "pending"  # approve-before-show: sent, not shown until the lecturer approves it

metadata = MetaData()
boards = Table(
    "boards", metadata,
    Column("id", String(16), primary_key=True),
    Column("word", String(40), nullable=False),
    Column("senses", Text, nullable=False),  # JSON list of the sense labels students choose from
    Column("model", String(200), nullable=False),
    Column("state", String(8), nullable=False),
    Column("created", Float, nullable=False),
    Column("approval", Integer, nullable=False, server_default="0"),  # 1: new sentences wait for approval
    Column("expires", Float),  # when the board closes by itself (None: never)
)
# columns added after the first release: a database created before them gets them on first use
_ADDED_BOARD_COLUMNS = {"approval": "INTEGER NOT NULL DEFAULT 0", "expires": "FLOAT"}
contributions = Table(
    "contributions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("board", String(16), ForeignKey("boards.id"), nullable=False, index=True),
    Column("client", String(64), nullable=False, index=True),
    Column("origin", String(64), nullable=False),
    Column("sentence", Text, nullable=False),
    Column("sense", String(40)),
    Column("status", String(10), nullable=False),
    Column("created", Float, nullable=False),
)


@dataclass(frozen=True)
class Board:
    id: str
    word: str
    senses: tuple[str, ...]
    model: str
    state: str
    created: float
    approval: bool = False  # new sentences hidden until the lecturer approves them
    expires: float | None = None  # closed by itself from then on


@dataclass(frozen=True)
class Contribution:
    id: int
    client: str
    sentence: str
    sense: str | None
    status: str
    created: float


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def default_url() -> str:
    return os.environ.get(DB_URL_ENV) or f"sqlite:///{data_dir() / 'class-board.sqlite3'}"


def _sqlite_pragmas(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, across processes
    cursor.execute("PRAGMA synchronous=FULL")  # a commit is on disk before the send is acknowledged
    cursor.execute("PRAGMA busy_timeout=10000")  # another process writing: wait, do not fail
    cursor.close()


class Store:
    """The board tables behind one SQLAlchemy engine (created when missing)."""

    def __init__(self, url: str):
        self.url = url
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = create_engine(url, connect_args={"timeout": 10})
            event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = create_engine(url, pool_pre_ping=True)
        metadata.create_all(self.engine)
        self._add_columns()

    def _add_columns(self) -> None:
        """The board columns a database made by an earlier version lacks (approval, expiry), added in place."""
        present = {c["name"] for c in inspect(self.engine).get_columns("boards")}
        missing = [name for name in _ADDED_BOARD_COLUMNS if name not in present]
        if missing:
            with self.engine.begin() as conn:
                for name in missing:
                    conn.execute(text(f"ALTER TABLE boards ADD COLUMN {name} {_ADDED_BOARD_COLUMNS[name]}"))

    # ---- boards ----
    def create_board(self, board_id: str, word: str, senses: tuple[str, ...], model: str, *,
                     approval: bool = False, expires: float | None = None) -> Board:
        board = Board(board_id, word, tuple(senses), model, "open", time.time(), approval, expires)
        with self.engine.begin() as conn:
            conn.execute(boards.insert().values(id=board.id, word=word, senses=json.dumps(list(senses),
                         ensure_ascii=False), model=model, state=board.state, created=board.created,
                         approval=int(approval), expires=expires))
        return board

    @staticmethod
    def _board(row) -> Board:
        """A row as a Board; past its expiry a board reads as closed (no process has to close it)."""
        expires = row.expires
        state = "closed" if expires is not None and time.time() >= expires else row.state
        return Board(row.id, row.word, tuple(json.loads(row.senses)), row.model, state, row.created,
                     bool(row.approval), expires)

    def board(self, board_id: str) -> Board | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(boards).where(boards.c.id == board_id)).first()
        return None if row is None else self._board(row)

    def newest_board(self) -> Board | None:
        """The most recently opened board, whatever its state: what the projector follows (a closed newest board
        is a closed board, never a way back to an older one)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(boards).order_by(boards.c.created.desc()).limit(1)).first()
        return None if row is None else self._board(row)

    def recent_boards(self, limit: int = 20) -> list[Board]:
        """The newest boards first, closed ones included (the lecturer's list)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(boards).order_by(boards.c.created.desc()).limit(limit)).all()
        return [self._board(row) for row in rows]

    def latest_board(self) -> Board | None:
        """The most recently opened board that is not closed (the lecturer's page reopens it after a restart)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(boards.c.id).where(boards.c.state != "closed")
                               .order_by(boards.c.created.desc()).limit(1)).first()
        return self.board(row.id) if row else None

    def set_state(self, board_id: str, state: str) -> None:
        if state not in BOARD_STATES:
            raise ValueError(f"unknown board state {state!r}")
        with self.engine.begin() as conn:
            conn.execute(update(boards).where(boards.c.id == board_id).values(state=state))

    # ---- contributions ----
    def add(self, board_id: str, client: str, origin: str, sentence: str, sense: str | None,
            status: str = SHOWN) -> int:
        """Store one contribution; returns its id once the transaction has committed."""
        with self.engine.begin() as conn:
            result = conn.execute(contributions.insert().values(
                board=board_id, client=client, origin=origin, sentence=sentence, sense=sense, status=status,
                created=time.time()))
            key = result.inserted_primary_key
            assert key is not None  # an insert into a table with a primary key
            return int(key[0])

    def recent_sends(self, board_id: str, since: float, *, client: str | None = None,
                     origin: str | None = None) -> int:
        """How many sends to the board since ``since`` (any status: a withdrawn send still counts)."""
        query = select(func.count()).select_from(contributions).where(
            contributions.c.board == board_id, contributions.c.created >= since)
        if client is not None:
            query = query.where(contributions.c.client == client)
        if origin is not None:
            query = query.where(contributions.c.origin == origin)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())

    def contributions(self, board_id: str, statuses: tuple[str, ...] = (SHOWN,)) -> list[Contribution]:
        """The board's contributions with one of ``statuses``, oldest first."""
        query = (select(contributions).where(contributions.c.board == board_id,
                                             contributions.c.status.in_(statuses))
                 .order_by(contributions.c.id))
        with self.engine.connect() as conn:
            return [Contribution(r.id, r.client, r.sentence, r.sense, r.status, r.created)
                    for r in conn.execute(query)]

    def set_status(self, board_id: str, contribution_id: int, status: str, *, client: str | None = None,
                   only_from: tuple[str, ...] = (SHOWN, HIDDEN, PENDING)) -> bool:
        """Change one contribution's status (``client``: only if that browser sent it); True when one changed."""
        query = update(contributions).where(contributions.c.board == board_id,
                                            contributions.c.id == contribution_id,
                                            contributions.c.status.in_(only_from)).values(status=status)
        if client is not None:
            query = query.where(contributions.c.client == client)
        with self.engine.begin() as conn:
            return conn.execute(query).rowcount == 1

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
