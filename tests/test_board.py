"""The class board's store and rules (core.board.store, core.board.rules) on a real SQLite file and the real models."""
from __future__ import annotations

import csv
import io
import sqlite3
import zipfile

import numpy as np
import pytest
from board_support import SECRET, sqlite_store

from core.board import rules as board
from core.board.store import HIDDEN, PENDING, SHOWN, WITHDRAWN, Store
from core.guard.errors import LabError
from core.models.cache import load_encoder
from core.vectors.view import occurrence_layers


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    return sqlite_store(tmp_path, monkeypatch)


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


# ---- #49: the lecturer's half (approval, expiry, the lecturer link, exports, colours) ----------------------

def test_approve_before_show_keeps_new_sentences_off_the_board_until_approved(store):
    b = board.open_board(store, SECRET, "苹果", "水果，公司", "elmo", approval=True)
    first = board.send(store, b.id, me(store, b, "phone-a"), "o1", "我吃了一个苹果。", "水果")
    assert store.contributions(b.id) == []  # waiting: not on the projector, not in the accuracy
    assert [c.status for c in store.contributions(b.id, (PENDING,))] == [PENDING]
    with pytest.raises(LabError):
        board.moderate(store, "guess", b.id, "approve", first)
    board.moderate(store, SECRET, b.id, "approve", first)
    assert [c.id for c in store.contributions(b.id)] == [first]
    second = board.send(store, b.id, me(store, b, "phone-b"), "o2", "苹果发布了新手机。", "公司")
    board.moderate(store, SECRET, b.id, "hide", second)  # a waiting sentence can be refused outright
    assert [c.status for c in store.contributions(b.id, (SHOWN, HIDDEN, PENDING))] == [SHOWN, HIDDEN]


def test_approval_is_decided_in_the_inserting_transaction_and_pending_counts_against_the_cap(store):
    """Merge of #49's two halves: pending or shown comes from the board's locked row in ``Store.add_checked``,
    and a pending sentence, which the lecturer can still approve, takes a place under the cap."""
    b = board.open_board(store, SECRET, "苹果", None, "elmo", approval=True)
    limits = board.Limits(board.WINDOW_S, 10_000, 0, 3)
    numbers = [store.add_checked(b.id, f"c{i}", "o", f"苹果{i}", None, limits) for i in range(3)]
    assert [c.status for c in store.contributions(b.id, (SHOWN, PENDING))] == [PENDING] * 3
    with pytest.raises(LabError) as err:
        store.add_checked(b.id, "c4", "o", "苹果4", None, limits)
    assert err.value.code == "board_full"
    board.moderate(store, SECRET, b.id, "approve", numbers[0])
    board.moderate(store, SECRET, b.id, "hide", numbers[1])
    assert [(c.id, c.status) for c in store.contributions(b.id, (SHOWN, HIDDEN, PENDING))] == [
        (numbers[0], SHOWN), (numbers[1], HIDDEN), (numbers[2], PENDING)]
    # through board.send (its own cap) a sentence waits too, and its sender can take it back while it waits
    phone = me(store, b, "phone")
    mine = board.send(store, b.id, phone, "o", "我吃了一个苹果。", None)
    assert store.contributions(b.id, (PENDING,))[-1].id == mine
    assert board.withdraw(store, b.id, mine, phone)
    assert store.contributions(b.id, (WITHDRAWN,))[0].id == mine


def test_a_board_closes_by_itself_after_its_hours(store, monkeypatch):
    b = board.open_board(store, SECRET, "苹果", None, "elmo", hours=3)
    assert b.expires == pytest.approx(b.created + 3 * 3600, abs=5)
    assert store.board(b.id).state == "open"
    phone = me(store, b, "phone")  # joined while the board was open
    later = b.created + 3 * 3600 + 1
    monkeypatch.setattr("core.board.store.time.time", lambda: later)
    assert store.board(b.id).state == "closed" and store.newest_board().state == "closed"
    assert store.latest_board() is None  # an expired board is not reopened after a restart either
    with pytest.raises(LabError) as err:
        board.send(store, b.id, phone, "o", "我吃了一个苹果。", None)
    assert err.value.code == "board_unknown"
    # the inserting transaction reads the expiry itself, under the board's lock (a send checked just before)
    with pytest.raises(LabError) as err:
        store.add_checked(b.id, "late", "o", "我吃了一个苹果。", None, board.Limits(board.WINDOW_S, 5, 0, 200))
    assert err.value.code == "board_unknown"
    assert store.contributions(b.id, (SHOWN, PENDING)) == []
    monkeypatch.setenv(board.HOURS_ENV, "1.5")
    assert board.default_hours() == 1.5


def test_closing_the_newest_board_never_brings_back_an_older_one(store):
    older = board.open_board(store, SECRET, "东西", None, "elmo")
    newer = board.open_board(store, SECRET, "苹果", None, "elmo")
    board.moderate(store, SECRET, newer.id, "close")
    newest = store.newest_board()
    assert newest.id == newer.id and newest.state == "closed"  # the projector follows this one: closed
    assert store.board(older.id).state == "open"  # the older board is still open, but not what is projected
    assert [b.id for b in store.recent_boards()] == [newer.id, older.id]


def test_an_older_database_gets_the_new_columns(tmp_path, monkeypatch):
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the boards table as the first release made it
        conn.execute("CREATE TABLE boards (id VARCHAR(16) PRIMARY KEY, word VARCHAR(40) NOT NULL, senses TEXT NOT "
                     "NULL, model VARCHAR(200) NOT NULL, state VARCHAR(8) NOT NULL, created FLOAT NOT NULL)")
        conn.execute("INSERT INTO boards VALUES ('old1', '苹果', '[]', 'elmo', 'open', 1.0)")
    again = Store(f"sqlite:///{path}")
    assert again.board("old1").state == "open" and not again.board("old1").approval
    assert board.open_board(again, SECRET, "行", None, "bert", approval=True).approval


def test_the_lecturer_link_token_is_signed_and_expires(store):
    token = board.lecturer_token(SECRET, now=1000.0 + 0 * 1)
    assert not board.is_lecturer(token)  # issued long ago: expired
    token = board.lecturer_token(SECRET)
    assert board.is_lecturer(token) and SECRET not in token
    expires, _, mac = token.partition(".")
    assert not board.is_lecturer(f"{int(expires) + 3600}.{mac}")  # a longer life cannot be forged
    assert not board.is_lecturer(f"{expires}.{'0' * 32}")
    with pytest.raises(LabError):
        board.lecturer_token("guess")
    b = board.open_board(store, token, "苹果", None, "elmo")  # the token opens and moderates as the secret does
    board.moderate(store, token, b.id, "lock")
    assert store.board(b.id).state == "locked"


def test_export_csv_has_hidden_sentences_their_status_and_not_sure(store, apple):
    shown = board.send(store, apple.id, me(store, apple, "p1"), "o1", "我吃了一个苹果。", "水果")
    hidden = board.send(store, apple.id, me(store, apple, "p2"), "o2", "苹果真好。", None)
    board.moderate(store, SECRET, apple.id, "hide", hidden)
    rows = list(csv.reader(io.StringIO(board.export_csv(store.contributions(apple.id, (SHOWN, HIDDEN)), "不确定"))))
    assert rows[1][:4] == [str(shown), "我吃了一个苹果。", "水果", SHOWN]
    assert rows[2][:4] == [str(hidden), "苹果真好。", "不确定", HIDDEN]


@pytest.mark.usefixtures("tiny_embedded")
def test_the_projector_tsv_numbers_sentences_as_the_csv_does(store, apple):
    # a board's first is not number 0 or 1
    board.send(store, apple.id, me(store, apple, "p0"), "o0", "树上的苹果熟了。", "水果")
    board.moderate(store, SECRET, apple.id, "clear")
    for i, (sense, sentence) in enumerate(CLASS[:4]):
        board.send(store, apple.id, me(store, apple, f"p{i + 1}"), f"o{i + 1}", sentence, sense)
    shown = store.contributions(apple.id)
    view = occurrence_layers(load_encoder(board.MODELS["elmo"]), None, [c.sentence for c in shown], "苹果",
                             [c.sense for c in shown])
    with zipfile.ZipFile(io.BytesIO(board.projector_zip(view, shown))) as archive:
        meta = archive.read("metadata.tsv").decode().splitlines()
    numbers = {int(line.split("\t")[0]) for line in meta[1:]}
    assert numbers == {c.id for c in shown}


def test_colours_follow_the_lecturers_order_of_senses():
    from core.figures.board import class_scatter
    from core.figures.style import PALETTE

    coords = np.array([[0.0, 0.0], [1.0, 1.0]])
    fig = class_scatter(coords, ["1", "2"], ["公司", "水果"], ["a", "b"], points_name="苹果", senses=("水果", "公司"))
    colours = {trace.name: trace.marker.color for trace in fig.data}
    assert colours == {"苹果 · 水果": PALETTE[0], "苹果 · 公司": PALETTE[1]}
    assert [trace.name for trace in fig.data] == ["苹果 · 水果", "苹果 · 公司"]  # the legend in that order too


def test_the_accuracy_chart_draws_its_top_labels_whole_and_lifts_0_off_the_layer_names():
    from core.figures.board import class_scatter
    from core.figures.vectors import accuracy_chart

    acc = accuracy_chart(["字向量层", "第 1 层"], [1.0, 0.5], 0.5, n=23, contextual_name="c", static_name="s",
                         title="t")
    assert acc.data[0].cliponaxis is False  # "100%" over a point at the top
    assert acc.layout.yaxis.range[0] < 0  # the "0%" tick above the first layer's name, not on it
    fig = class_scatter(np.array([[0.0, 1.0], [1.0, 0.0]]), ["23", "24"], ["a", "b"], ["x", "y"])
    assert all(trace.cliponaxis is False for trace in fig.data)  # a point's number at the top edge ("23")
