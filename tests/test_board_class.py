"""The class board under a real class (issue #49): one sentence one point, caps that hold under concurrent sends,
the server-signed student identity, a class of 60 behind one NAT address, text normalised before every check,
and the store's own hygiene (file modes, salted origins, secret guesses, per-board numbers, an outage)."""
from __future__ import annotations

import hashlib
import os
import stat
import threading
import time

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from core.board import rules as board
from core.board.store import Store, contributions, data_dir
from core.board.store import store as board_store
from core.compute.occurrences import word_vectors
from core.guard.errors import LabError

SECRET = "class-board-test-secret"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(board.ORIGIN_LIMIT_ENV, raising=False)
    return Store(f"sqlite:///{tmp_path / 'data' / 'board.sqlite3'}")


@pytest.fixture
def apple(store):
    return board.open_board(store, SECRET, "苹果", "水果，公司", "elmo")


def phone(store, b, address="10.0.0.1") -> str:
    return board.issue_identity(store, b.id, None, board.origin_of(address))


def together(calls) -> list:
    """Each call in a thread of its own, all released at once; each result or LabError."""
    gate = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i, call):
        gate.wait()
        try:
            results[i] = call()
        except LabError as err:
            results[i] = err

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


# ---- 1. one sentence, one contribution --------------------------------------------------------------------

def test_a_sentence_holds_the_word_a_bounded_number_of_times(store, apple):
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, phone(store, apple), "o", "苹果" * 50, None)
    assert err.value.code == "board_word_repeated"
    assert "3" in err.value.message("zh") and "3" in err.value.message("en")
    assert store.contributions(apple.id) == []
    board.send(store, apple.id, phone(store, apple), "o", "苹果、苹果，还是苹果。", None)  # three: a natural sentence
    assert len(store.contributions(apple.id)) == 1


class _OneVector:
    """A static encoder stand-in: one vector for the word, whatever the sentence."""
    name, layer_names = "fake-static", ["static"]

    def word_vector(self, word):
        import numpy as np
        return np.ones(4, np.float32)


def test_each_sentence_is_one_point_in_the_picture_and_the_accuracy(monkeypatch):
    from core.models import encoders
    monkeypatch.setattr(encoders, "StaticEncoder", _OneVector)
    import core.compute.occurrences as occ
    monkeypatch.setattr(occ, "StaticEncoder", _OneVector)
    sentences = ["苹果苹果苹果", "我吃苹果", "苹果公司和苹果"]
    every = word_vectors(_OneVector(), sentences, "苹果", ["水果", "水果", "公司"])  # type: ignore[arg-type]
    first = word_vectors(_OneVector(), sentences, "苹果", ["水果", "水果", "公司"],  # type: ignore[arg-type]
                         first_only=True)
    assert len(every.occurrences) == 6
    assert [o.sentence_index for o in first.occurrences] == [0, 1, 2]  # points == sentences


def test_the_board_view_counts_one_point_per_sentence(tiny_bert):
    from core.vectors.view import occurrence_layers
    sentences = ["苹果苹果苹果好吃", "我吃了一个苹果", "苹果公司的苹果手机", "他买了苹果"]
    labels = ["水果", "水果", "公司", "水果"]
    word = next(w for w in ("苹果", "苹", "果") if all(w in s for s in sentences))
    view = occurrence_layers(tiny_bert, None, sentences, word, labels, first_only=True)
    assert view.num_occurrences == len(sentences)
    assert view.scored <= len(sentences)


# ---- 2. caps that hold under concurrency ------------------------------------------------------------------

def test_the_board_cap_holds_under_concurrent_sends(store, apple, monkeypatch):
    monkeypatch.setenv(board.ORIGIN_LIMIT_ENV, "0")
    limits = board.Limits(board.WINDOW_S, 10_000, 0, board.MAX_CONTRIBUTIONS)
    for i in range(board.MAX_CONTRIBUTIONS - 5):  # 195 sentences on the board
        store.add_checked(apple.id, f"filler-{i}", "o", f"苹果{i}", None, limits)
    phones = [phone(store, apple, f"10.0.1.{i}") for i in range(20)]
    results = together([lambda me=me: board.send(store, apple.id, me, "o", "又一个苹果", None) for me in phones])
    assert sum(isinstance(r, int) for r in results) == 5
    assert {r.code for r in results if isinstance(r, LabError)} == {"board_full"}
    assert len(store.contributions(apple.id)) == board.MAX_CONTRIBUTIONS


def test_the_per_browser_and_per_origin_limits_hold_under_concurrent_sends(store, apple, monkeypatch):
    me = phone(store, apple)
    results = together([lambda i=i: board.send(store, apple.id, me, "o1", f"苹果{i}", None) for i in range(20)])
    assert sum(isinstance(r, int) for r in results) == board.CLIENT_LIMIT
    monkeypatch.setenv(board.ORIGIN_LIMIT_ENV, "7")
    phones = [phone(store, apple, "10.9.9.9") for _ in range(20)]
    results = together([lambda me=me: board.send(store, apple.id, me, "nat", "苹果", None) for me in phones])
    assert sum(isinstance(r, int) for r in results) == 7
    assert {r.code for r in results if isinstance(r, LabError)} == {"board_rate_origin"}


# ---- 3. a student identity the server issues and signs ----------------------------------------------------

def test_only_an_identity_the_server_issued_can_send(store, apple, tmp_path):
    for forged in ("", "benchmark-student-0001", "a" * 16 + "." + "b" * 22, "x" * 43):
        with pytest.raises(LabError) as err:
            board.send(store, apple.id, forged, "o", "我吃了一个苹果。", None)
        assert err.value.code == "board_identity"
    me = phone(store, apple)
    assert board.issue_identity(store, apple.id, me, "o") == me  # a reload of the join link keeps it
    other = board.open_board(store, SECRET, "苹果", "", "bert")
    assert not board.valid_identity(store, other.id, me)  # one board's identity is not another's
    tampered = me[:-1] + ("A" if me[-1] != "A" else "B")
    assert not board.valid_identity(store, apple.id, tampered)
    number = board.send(store, apple.id, me, "o", "我吃了一个苹果。", None)
    # what the database holds cannot withdraw: the signature never leaves the browser
    stored = store.contributions(apple.id)[0].client
    assert stored != me and not board.withdraw(store, apple.id, number, stored)
    assert board.withdraw(store, apple.id, number, me)
    # another process of the hall (same database) accepts it: the key lives in the database
    assert board.valid_identity(Store(store.url), apple.id, me)


def test_identities_are_issued_a_bounded_number_per_address(store, apple):
    for _ in range(board.JOIN_LIMIT):
        phone(store, apple, "10.0.0.5")
    with pytest.raises(LabError) as err:
        phone(store, apple, "10.0.0.5")
    assert err.value.code == "board_join_rate"
    phone(store, apple, "10.0.0.6")  # another address is not held up


# ---- 4. a class behind one NAT address --------------------------------------------------------------------

def test_a_class_of_60_behind_one_address_all_send(store, apple):
    nat = board.origin_of("203.0.113.7")
    phones = [board.issue_identity(store, apple.id, None, nat) for _ in range(60)]
    for round_ in range(2):  # two sentences each within the minute
        texts = [f"第{i}位同学的苹果{round_}" for i in range(len(phones))]
        results = together([lambda me=me, text=text: board.send(store, apple.id, me, nat, text, None)
                            for me, text in zip(phones, texts)])
        assert [r for r in results if not isinstance(r, int)] == []
    assert len(store.contributions(apple.id)) == 120


def test_the_load_benchmark_fails_when_a_send_is_refused_or_lost():
    from benchmarks.class_board_load import verdict
    good = {"students": 60, "acknowledged": 60, "stored": 60, "on_projector": 60, "send_p95_s": 0.5,
            "shown_max_s": 1.0}
    assert all(r["pass"] for r in verdict(good))
    for broken in ({"acknowledged": 59}, {"stored": 59}, {"on_projector": 30}):
        results = verdict({**good, **broken})
        assert not all(r["pass"] for r in results)


# ---- 5. text normalised before every check ----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "这个苹果真傻\u200b逼", "这个苹果真傻 逼", "苹果真他媽的贵", "苹果雞巴", "苹果真他妈贵，傻B才买",
    "苹果真他妈贵，傻Ｂ才买",
    "苹果傻\u00ad逼", "苹果傻\u2060逼", "苹果傻\ufe0f逼", "苹果傻\u202e逼", "苹果傻\u2066逼\u2069", "苹果傻\u200d逼",
    "苹果傻\u200c逼", "苹果傻*逼", "苹果 他 妈 的",
])
def test_variants_of_a_listed_word_are_refused(store, apple, text):
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, phone(store, apple), "o", text, None)
    assert err.value.code == "board_vulgar"


@pytest.mark.parametrize(("typed", "stored"), [
    ("苹果\u200b很甜", "苹果很甜"),
    ("\u202e苹果很甜", "苹果很甜"),  # a right-to-left override would show the sentence reversed
    ("苹\u00ad果很甜", "苹果很甜"),  # the word is found through a soft hyphen
    ("ＵＳＢ接口的苹果，很好！", "USB接口的苹果，很好！"),  # fullwidth letters plain; Chinese punctuation kept
    ("操作系统里的苹果。", "操作系统里的苹果。"),
])
def test_a_sentence_is_stored_normalised(store, apple, typed, stored):
    board.send(store, apple.id, phone(store, apple), "o", typed, None)
    assert store.contributions(apple.id)[-1].sentence == stored


def test_the_docs_say_what_the_board_does():
    """docs/classroom.md holds the board's rules in full; the README's short version states the same limits."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    doc, readme = (" ".join((root / name).read_text(encoding="utf-8").split())
                   for name in ("docs/classroom.md", "README.md"))
    assert "NFKC" in doc and "category Cf" in doc and "variation selectors" in doc
    assert f"at most {board.MAX_WORD_REPEATS} times" in doc and "first** occurrence only" in doc
    for text in (doc, readme):
        assert f"{board.DEFAULT_ORIGIN_LIMIT} per network address" in text
        assert "30 per network address" not in text and "a hash of the address" not in text
    assert f"at most {board.MAX_WORD_REPEATS} times" in readme


# ---- 6. the store's hygiene --------------------------------------------------------------------------------

def test_database_and_secret_files_are_private(store, apple, tmp_path, monkeypatch):
    monkeypatch.delenv(board.SECRET_ENV)
    board.lecturer_secret()
    board.send(store, apple.id, phone(store, apple), "o", "我吃了一个苹果。", None)
    folder = data_dir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.iterdir() if p.is_file()]
    assert {p.name for p in files} >= {"board.sqlite3", "board.sqlite3-wal", "lecturer-secret"}
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: 0o600 for p in files}


def test_origins_are_salted_per_board_and_forgotten_after_the_window(store, apple):
    other = board.open_board(store, SECRET, "苹果", "", "elmo")
    address = "192.168.1.23"
    board.send(store, apple.id, phone(store, apple), board.origin_of(address), "我吃了一个苹果。", None,
               now=time.time() - 2 * board.WINDOW_S)
    board.send(store, other.id, phone(store, other), board.origin_of(address), "我吃了一个苹果。", None)
    with store.engine.connect() as conn:
        rows = dict(conn.execute(select(contributions.c.board, contributions.c.origin)).all())
    unsalted = hashlib.sha256(f"class-board:{address}".encode()).hexdigest()
    assert address not in rows[other.id] and unsalted[:16] not in rows[other.id]
    assert rows[apple.id] == ""  # older than the window: no longer needed, no longer kept


def test_wrong_secrets_lock_the_address_out_for_a_minute(store):
    for _ in range(board.GUESS_LIMIT):
        assert not board.sign_in(store, "wrong-guess-123", "10.0.0.66")
    with pytest.raises(LabError) as err:
        board.sign_in(store, SECRET, "10.0.0.66")
    assert err.value.code == "board_guess_locked"
    assert board.sign_in(store, SECRET, "10.0.0.67")
    assert board.sign_in(store, SECRET, "10.0.0.66", now=time.time() + board.WINDOW_S + 1)


def test_a_short_board_secret_is_refused(monkeypatch):
    monkeypatch.setenv(board.SECRET_ENV, "abc123")
    with pytest.raises(LabError) as err:
        board.lecturer_secret()
    assert err.value.code == "board_secret_short" and "12" in err.value.message("zh")


def test_sentence_numbers_are_per_board(store, apple):
    board.send(store, apple.id, phone(store, apple), "o", "我吃了一个苹果。", None)
    board.send(store, apple.id, phone(store, apple), "o", "苹果发布了新手机。", None)
    fresh = board.open_board(store, SECRET, "苹果", "", "elmo")
    assert board.send(store, fresh.id, phone(store, fresh), "o", "老师的苹果。", None) == 1
    assert [c.id for c in store.contributions(apple.id)] == [1, 2]


def test_a_database_outage_is_one_message_and_the_store_recovers(store, apple, tmp_path, monkeypatch):
    def down(*_args, **_kwargs):
        raise OperationalError("SELECT 1", {}, Exception("server closed the connection"))
    with monkeypatch.context() as m:
        m.setattr(store.engine, "connect", down)
        m.setattr(store.engine, "begin", down)
        for call in (lambda: store.board(apple.id), lambda: board.send(store, apple.id, "x.y", "o", "苹果", None)):
            with pytest.raises(LabError) as err:
                call()
            assert err.value.code == "board_db_down"
            assert "OperationalError" not in err.value.message("zh") and err.value.message("en")
    assert store.board(apple.id) == apple  # back: the same store answers again
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    url = f"sqlite:///{blocked / 'board.sqlite3'}"
    with pytest.raises(LabError) as err:
        board_store(url)
    assert err.value.code == "board_db_down"
    os.remove(blocked)
    assert board_store(url).board("nothing") is None  # the page's next run opens it


def test_the_server_refuses_a_short_board_secret_at_start(monkeypatch, capsys):
    import serve
    assert (serve.BOARD_SECRET_ENV, serve.MIN_BOARD_SECRET_CHARS) == (board.SECRET_ENV, board.MIN_SECRET_CHARS)
    monkeypatch.setenv(board.SECRET_ENV, "short")
    with pytest.raises(SystemExit) as stopped:
        serve.refuse_short_board_secret()
    assert stopped.value.code == 2 and "LAB_BOARD_SECRET" in capsys.readouterr().err
    monkeypatch.setenv(board.SECRET_ENV, "long-enough-secret")
    serve.refuse_short_board_secret()


def test_a_database_from_before_is_brought_up_to_date(tmp_path, monkeypatch):
    """A board file written by the old schema (global ids, unsalted origins): the columns added, the numbers kept,
    the old origins dropped, and the board takes new sends numbered on from its own."""
    import sqlite3
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE boards (id VARCHAR(16) PRIMARY KEY, word VARCHAR(40) NOT NULL, senses TEXT NOT NULL,
                model VARCHAR(200) NOT NULL, state VARCHAR(8) NOT NULL, created FLOAT NOT NULL);
            CREATE TABLE contributions (id INTEGER PRIMARY KEY AUTOINCREMENT, board VARCHAR(16) NOT NULL,
                client VARCHAR(64) NOT NULL, origin VARCHAR(64) NOT NULL, sentence TEXT NOT NULL, sense VARCHAR(40),
                status VARCHAR(10) NOT NULL, created FLOAT NOT NULL);
            INSERT INTO boards VALUES ('old', '苹果', '[]', 'elmo', 'open', 1.0);
            INSERT INTO contributions VALUES (12, 'old', 'tok', 'a1b2c3d4e5f6', '我吃苹果。', NULL, 'shown', 1.0);
            INSERT INTO contributions VALUES (13, 'old', 'tok', 'a1b2c3d4e5f6', '苹果手机。', NULL, 'shown', 2.0);
        """)
    store = Store(f"sqlite:///{path}")
    assert [c.id for c in store.contributions("old")] == [12, 13]
    with store.engine.connect() as conn:
        assert set(conn.execute(select(contributions.c.origin)).scalars()) == {""}
    old = store.board("old")
    assert old is not None and old.salt
    assert board.send(store, "old", phone(store, old), "o", "又一个苹果", None) == 14
    fresh = board.open_board(store, SECRET, "苹果", "", "elmo")
    assert board.send(store, fresh.id, phone(store, fresh), "o", "新的苹果", None) == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
