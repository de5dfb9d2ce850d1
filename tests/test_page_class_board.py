"""The class board's page in Streamlit's AppTest, on the real models and a real SQLite file: a student sends and
withdraws, sees each refusal where they are, and cannot reach the lecturer's controls, not even by forging them."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_bad_input_pages import CASES

from apptest_support import chart, page_app
from core.board import rules as board
from core.board.store import HIDDEN, SHOWN, Store
from core.board.store import store as board_store

PAGE = str(Path(__file__).resolve().parent.parent / "app_pages" / "class_board" / "page.py")
SECRET = "page-test-secret"
MODERATION_KEYS = {"board_hide", "board_show", "board_lock", "board_clear", "board_close", "board_pick"}
pytestmark = pytest.mark.usefixtures("tiny_embedded")  # the board's handling, on the embedded models' stand-ins


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path))
    monkeypatch.setenv(board.SECRET_ENV, SECRET)
    return board_store()  # the page's own store: the data folder's SQLite file


@pytest.fixture
def apple(store):
    b = board.open_board(store, SECRET, "苹果", "水果，公司", "elmo")
    board.send(store, b.id, board.issue_identity(store, b.id, None, "o1"), "o1", "我吃了一个苹果。", "水果")
    board.send(store, b.id, board.issue_identity(store, b.id, None, "o2"), "o2", "苹果发布了新手机。", "公司")
    board.send(store, b.id, board.issue_identity(store, b.id, None, "o3"), "o3", "这个苹果很甜。", "水果")
    return b


def run(query: dict, **state):
    at = page_app(PAGE, None, query=query)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def keys(at) -> set[str]:
    return {w.key for kind in ("button", "selectbox", "checkbox") for w in at.get(kind) if w.key}


def send(at, sentence: str, sense: str | None = None):
    at.text_input(key="board_sentence").set_value(sentence)
    if sense:
        at.radio(key="board_sense").set_value(sense)
    next(b for b in at.button if b.label == "发送").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_student_sends_sees_the_class_and_withdraws(store, apple):
    at = run({"board": apple.id})
    me = at.query_params["me"]
    send(at, "妈妈买了一斤苹果。", "水果")
    assert any("已发送" in s.value for s in at.success)
    assert at.text_input(key="board_sentence").value == ""  # the box is empty for the next one
    mine = [c for c in store.contributions(apple.id) if board.is_mine(c, me)]
    assert [(c.sentence, c.sense) for c in mine] == [("妈妈买了一斤苹果。", "水果")]
    assert chart(at, "board_scatter") is None  # the picture on request only
    at.toggle(key="board_show_picture").set_value(True).run()
    traces = chart(at, "board_scatter")["data"]
    assert "我的句子" in [trace.get("name") for trace in traces]  # the own point ringed
    numbers = [n for trace in traces for n in trace.get("text") or []]
    assert sorted(numbers, key=int) == [str(c.id) for c in store.contributions(apple.id)]  # as each sender was told
    assert not MODERATION_KEYS & keys(at)
    at.button(key=f"board_withdraw_{mine[0].id}").click().run()
    assert not [c for c in store.contributions(apple.id) if board.is_mine(c, me)]


def test_the_join_link_gets_a_signed_identity_a_reload_keeps_and_a_made_up_one_loses(store, apple):
    at = run({"board": apple.id, "me": "made-up-by-a-script-0001"})
    me = at.query_params["me"]
    assert me != "made-up-by-a-script-0001" and board.valid_identity(store, apple.id, me)
    again = run({"board": apple.id, "me": me})  # the join link reloaded: the same student
    assert again.query_params["me"] == me
    send(again, "妈妈买了一斤苹果。")
    assert any("已发送" in s.value for s in again.success)


@pytest.mark.parametrize(("sentence", "says"), [
    ("我喜欢香蕉。", "没有“苹果”"),
    ("苹果真牛逼", "不适合"),
    ("   ", "至少"),
])
def test_a_refused_sentence_is_a_message_and_stays_in_the_box(store, apple, sentence, says):
    at = send(run({"board": apple.id}), sentence)
    assert any(says in e.value for e in at.error), [e.value for e in at.error]
    assert at.text_input(key="board_sentence").value == sentence
    assert len(store.contributions(apple.id)) == 3


def test_a_flood_from_one_phone_is_stopped_with_a_message(store, apple):
    at = run({"board": apple.id})
    for i in range(board.CLIENT_LIMIT):
        send(at, f"第{i}个苹果")
    send(at, "再来一个苹果")
    assert any("太频繁" in e.value for e in at.error)
    assert len(store.contributions(apple.id)) == 3 + board.CLIENT_LIMIT


@pytest.mark.parametrize("forged", [{}, {"board_secret": "guess"}, {"board_secret": "guess", "board_close": True,
                                                                     "board_hide": True, "board_pick": 1}])
def test_forged_moderation_from_a_students_session_changes_nothing(store, apple, forged):
    """The projector view opened by anyone: without the secret no control is drawn, and control values put into
    the session by hand (what a forged widget message would set) do nothing."""
    at = run({"board": apple.id, "view": "projector"}, **forged)
    assert not MODERATION_KEYS & keys(at)
    at.run()
    assert store.board(apple.id).state == "open"
    assert [c.status for c in store.contributions(apple.id, (SHOWN, HIDDEN))] == [SHOWN] * 3


def test_the_lecturer_hides_locks_and_the_student_is_told(store, apple):
    at = run({"board": apple.id, "view": "projector"}, board_secret=SECRET)
    assert MODERATION_KEYS <= keys(at)
    first = store.contributions(apple.id)[0].id
    at.selectbox(key="board_pick").set_value(first)
    at.button(key="board_hide").click().run()
    assert [c.status for c in store.contributions(apple.id, (SHOWN, HIDDEN))] == [HIDDEN, SHOWN, SHOWN]
    at.button(key="board_lock").click().run()
    assert store.board(apple.id).state == "locked"
    student = send(run({"board": apple.id}), "我也吃苹果")
    assert any("锁定" in e.value for e in student.error)


def test_an_unknown_or_closed_board_says_so(store, apple):
    at = run({"board": "no-such-board"})
    assert any("不存在" in e.value for e in at.error)
    board.moderate(store, SECRET, apple.id, "close")
    assert any("不存在" in e.value for e in run({"board": apple.id}).error)


RAW_HTML = re.compile(r"(?<!\\)<(script|img)")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_students_box_takes_every_bad_input(store, apple, case):
    """The bad-input matrix of every text box (tests/test_bad_input_pages.py) on the student's sentence box:
    no exception, a message where the student is (sent, or why not), a refused text kept in the box, nothing
    rendered raw."""
    value = CASES[case]
    at = send(run({"board": apple.id}), value)
    said = [e.value for e in at.error] + [s.value for s in at.success]
    assert said and not any(RAW_HTML.search(text) for text in said), said
    new = [c.sentence for c in store.contributions(apple.id)][3:]
    if at.error:
        # as a browser, the box holds at most its max_chars
        assert not new and at.text_input(key="board_sentence").value == value[:board.MAX_SENTENCE_CHARS]
    else:
        assert len(new) == 1 and at.success


@pytest.mark.parametrize("box", ["board_new_word", "board_new_senses"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_lecturers_boxes_take_every_bad_input(store, case, box):
    """The new-board form's word and senses: a board opens, or a message says why not; no exception."""
    at = run({}, board_secret=SECRET)
    at.text_input(key=box).set_value(CASES[case])
    next(b for b in at.button if b.label == "开看板").click().run()
    assert not at.exception, [e.value for e in at.exception]
    opened = "board" in at.query_params
    assert opened or at.error, f"neither a board nor a message for {case!r}"
    assert not any(RAW_HTML.search(e.value) for e in at.error)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_secret_box_takes_every_bad_input(store, case):
    at = run({})
    at.text_input(key="board_secret_box").set_value(CASES[case]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not MODERATION_KEYS & keys(at) and not any(RAW_HTML.search(e.value) for e in at.error)
    if CASES[case]:
        assert at.error, f"a wrong secret {case!r} must be told"


def test_a_database_outage_is_one_message_and_the_page_comes_back(store, apple, monkeypatch):
    from sqlalchemy.exc import OperationalError

    def down(*_args, **_kwargs):
        raise OperationalError("SELECT", {}, Exception("the database server is gone"))
    with monkeypatch.context() as m:
        m.setattr(store.engine, "connect", down)
        m.setattr(store.engine, "begin", down)
        at = run({"board": apple.id})
        errors = [e.value for e in at.error]
        assert len(errors) == 1 and "数据库暂时无法访问" in errors[0], errors
        assert "OperationalError" not in " ".join(errors)
    at.run()  # what the page's own retry does once the database answers
    assert not at.error and at.text_input(key="board_sentence") is not None
