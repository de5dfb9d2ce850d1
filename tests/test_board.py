"""The class board's store and rules (core.board.store, core.board.rules) on a real SQLite file and the real models."""
from __future__ import annotations

import sqlite3

import pytest

from core.board import rules as board
from core.board.store import HIDDEN, SHOWN, WITHDRAWN, Store
from core.guard.errors import LabError
from core.models.cache import load_encoder
from core.vectors.view import occurrence_layers

SECRET = "test-lecturer-secret"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    return Store(f"sqlite:///{tmp_path / 'board.sqlite3'}")


_IDENTITIES: dict[tuple[str, str], str] = {}


def me(store: Store, b, name: str) -> str:
    """The identity the server issued to the browser called ``name`` (one per name and board, as a reload keeps)."""
    key = (b.id, name)
    if key not in _IDENTITIES:
        _IDENTITIES[key] = board.issue_identity(store, b.id, None, f"address-of-{name}")
    return _IDENTITIES[key]


@pytest.fixture
def apple(store):
    return board.open_board(store, SECRET, "苹果", "水果，公司", "elmo")


def test_sqlite_is_in_wal_mode_and_a_second_store_sees_every_send(store, apple, tmp_path):
    first = board.send(store, apple.id, me(store, apple, "phone-a"), "o1", "我吃了一个苹果。", "水果")
    board.send(store, apple.id, me(store, apple, "phone-b"), "o2", "苹果发布了新手机。", "公司")
    with sqlite3.connect(tmp_path / "board.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = Store(store.url)  # another process, or the same one after a restart
    assert again.board(apple.id) == apple
    assert [(c.id, c.sentence, c.sense) for c in again.contributions(apple.id)] == [
        (first, "我吃了一个苹果。", "水果"), (first + 1, "苹果发布了新手机。", "公司")]


@pytest.mark.parametrize(("text", "code"), [
    ("", "empty_input"),
    ("   \n\t ", "empty_input"),
    ("我喜欢吃香蕉。", "board_no_word"),
    ("我喜歡吃蘋果。", "board_no_word"),  # Traditional characters are another spelling: said in the message
    ("I like apples.", "board_no_word"),
    ("苹果" + "很好吃" * 40, "too_long"),
    ("这个苹果真牛逼", "board_vulgar"),
])
def test_a_refused_sentence_says_why_and_stores_nothing(store, apple, text, code):
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, me(store, apple, "phone-a"), "o1", text, None)
    assert err.value.code == code
    assert err.value.message("zh") and err.value.message("en")
    assert store.contributions(apple.id) == []


def test_markup_emoji_and_controls_are_stored_as_plain_text(store, apple):
    board.send(store, apple.id, me(store, apple, "p1"), "o", "<b>苹果</b> [链接](http://x.example) 🍎\x00\x1b真甜",
               None)
    board.send(store, apple.id, me(store, apple, "p2"), "o", "苹果\n\n发布会", None)
    sentences = [c.sentence for c in store.contributions(apple.id)]
    assert sentences == ["<b>苹果</b> [链接](http://x.example) 🍎真甜", "苹果 发布会"]


def test_sense_must_be_one_of_the_boards(store, apple):
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, me(store, apple, "p"), "o", "我吃了一个苹果。", "手机")
    assert err.value.code == "board_bad_sense"


def test_a_flood_from_one_browser_or_one_origin_is_limited(store, apple, monkeypatch):
    for i in range(board.CLIENT_LIMIT):
        board.send(store, apple.id, me(store, apple, "flooder"), "o1", f"苹果{i}", None)
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, me(store, apple, "flooder"), "o1", "苹果又来了", None)
    assert err.value.code == "board_rate"
    # the others are not held up
    board.send(store, apple.id, me(store, apple, "other-phone"), "o2", "我也有一个苹果", None)
    monkeypatch.setenv(board.ORIGIN_LIMIT_ENV, "3")
    for i in range(2):
        board.send(store, apple.id, me(store, apple, f"tab-{i}"), "o3", f"苹果{i}", None)
    board.send(store, apple.id, me(store, apple, "tab-2"), "o3", "苹果3", None)
    with pytest.raises(LabError):
        board.send(store, apple.id, me(store, apple, "tab-3"), "o3", "苹果4", None)


def test_only_the_author_can_withdraw(store, apple):
    mine = board.send(store, apple.id, me(store, apple, "mine"), "o", "我吃了一个苹果。", None)
    assert not board.withdraw(store, apple.id, mine, me(store, apple, "someone-else"))
    assert [c.id for c in store.contributions(apple.id)] == [mine]
    assert board.withdraw(store, apple.id, mine, me(store, apple, "mine"))
    assert store.contributions(apple.id) == []
    assert [c.status for c in store.contributions(apple.id, (WITHDRAWN,))] == [WITHDRAWN]


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET + " ", SECRET[:-1]])
def test_forged_moderation_changes_nothing(store, apple, secret):
    kept = board.send(store, apple.id, me(store, apple, "p"), "o", "我吃了一个苹果。", None)
    for action, target in (("hide", kept), ("clear", None), ("lock", None), ("close", None)):
        with pytest.raises(LabError) as err:
            board.moderate(store, secret, apple.id, action, target)
        assert err.value.code == "board_forbidden"
    with pytest.raises(LabError):
        board.open_board(store, secret, "东西", "", "bert")
    assert store.board(apple.id).state == "open"
    assert [c.status for c in store.contributions(apple.id)] == [SHOWN]


def test_lecturer_hides_locks_clears_and_closes(store, apple):
    first = board.send(store, apple.id, me(store, apple, "p1"), "o", "我吃了一个苹果。", None)
    board.send(store, apple.id, me(store, apple, "p2"), "o", "苹果发布了新手机。", None)
    board.moderate(store, SECRET, apple.id, "hide", first)
    assert [c.status for c in store.contributions(apple.id, (SHOWN, HIDDEN))] == [HIDDEN, SHOWN]
    board.moderate(store, SECRET, apple.id, "show", first)
    board.moderate(store, SECRET, apple.id, "lock")
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, me(store, apple, "p3"), "o", "苹果很甜", None)
    assert err.value.code == "board_locked"
    board.moderate(store, SECRET, apple.id, "unlock")
    board.moderate(store, SECRET, apple.id, "clear")
    assert store.contributions(apple.id) == []
    board.moderate(store, SECRET, apple.id, "close")
    with pytest.raises(LabError) as err:
        board.send(store, apple.id, me(store, apple, "p3"), "o", "苹果很甜", None)
    assert err.value.code == "board_unknown"
    assert store.latest_board() is None


def test_generated_secret_is_shared_through_the_data_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(board.SECRET_ENV, raising=False)
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    secret = board.lecturer_secret()
    assert len(secret) >= 12 and board.lecturer_secret() == secret
    assert (tmp_path / "lecturer-secret").stat().st_mode & 0o077 == 0
    assert board.is_lecturer(secret) and not board.is_lecturer("x")


def test_open_board_refuses_bad_settings(store):
    for word, senses, model, code in (("", "", "elmo", "empty_word"), ("苹" * 11, "", "elmo", "too_long"),
                                      ("苹果", "a,b,c,d,e,f,g", "elmo", "board_too_many_senses"),
                                      ("苹果", "", "gpt", "unknown_model")):
        with pytest.raises(LabError) as err:
            board.open_board(store, SECRET, word, senses, model)
        assert err.value.code == code


CLASS = [("水果", "我吃了一个苹果。"), ("水果", "这个苹果又甜又脆。"), ("水果", "妈妈买了一斤苹果。"),
         ("水果", "苹果和香蕉都是水果。"), ("公司", "苹果发布了新手机。"), ("公司", "苹果公司的股价上涨了。"),
         ("公司", "他在苹果上班。"), ("公司", "苹果的新电脑很贵。")]


@pytest.mark.realmodel
def test_the_class_view_is_the_static_pages_projection_and_accuracy(store, apple):
    for i, (sense, sentence) in enumerate(CLASS):
        board.send(store, apple.id, me(store, apple, f"p{i}"), f"o{i}", sentence, sense)
    shown = store.contributions(apple.id)
    elmo = load_encoder(board.MODELS["elmo"])
    view = occurrence_layers(elmo, load_encoder("word2vec-zh"), [c.sentence for c in shown], "苹果",
                                [c.sense for c in shown])
    assert view.coords.shape == (len(elmo.layer_names), len(CLASS), 2)
    assert all(a is not None for a in view.accuracy[False])
    assert view.static_accuracy[False] == pytest.approx(3 / 7, abs=1e-9)  # one vector: a random neighbour's level
    mix = board.mix_points(view)
    assert mix.coords.shape == (len(CLASS), 2) and mix.accuracy is not None
    assert max(view.accuracy[False]) > view.static_accuracy[False]


def test_export_csv_neutralises_formulas(store, apple):
    board.send(store, apple.id, me(store, apple, "p"), "o", "=苹果+1", None)
    text = board.export_csv(store.contributions(apple.id))
    assert text.splitlines()[0] == "id,sentence,sense,status,sent_at"
    assert "'=苹果+1" in text


def test_join_link_qr_code_and_client_address(monkeypatch):
    monkeypatch.delenv(board.URL_ENV, raising=False)
    link = board.join_url("http://localhost:8501/class-board?view=projector", "abc")
    assert link == "http://localhost:8501/class-board?board=abc" and board.is_loopback(link)
    monkeypatch.setenv(board.URL_ENV, "http://192.168.1.20:8500/")
    link = board.join_url("http://localhost:8501/", "a&b")
    assert link == "http://192.168.1.20:8500/class-board?board=a%26b" and not board.is_loopback(link)
    svg = board.qr_svg(link)
    assert svg.startswith("<svg") and "<path" in svg and "href" not in svg  # drawn here, nothing to fetch
    # behind the hall's nginx the address nginx appended; a browser's own X-Forwarded-For is not believed
    assert board.client_address("127.0.0.1", "6.6.6.6, 10.0.0.7") == "10.0.0.7"
    assert board.client_address("10.0.0.9", "6.6.6.6") == "10.0.0.9"
    assert board.origin_of("10.0.0.7") != board.origin_of("10.0.0.9")
