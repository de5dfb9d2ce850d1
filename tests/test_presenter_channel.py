"""The presenter view's line to the projector (core.board.presenter) on a real SQLite store: only the lecturer moves
it, a second device joins the running presentation, a second process sees every move, a stale follow link follows
nothing, and the projector's link holds no credential."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from board_support import SECRET, sqlite_store

from core.board import presenter
from core.board import rules as board
from core.board.store import Store
from core.guard.errors import LabError
from ui import lecture_scenes


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    return sqlite_store(tmp_path, monkeypatch)


def test_only_the_lecturer_starts_and_moves_the_presentation(store):
    for wrong in (None, "", "a-guess-of-a-student"):
        with pytest.raises(LabError) as err:
            presenter.start(store, wrong, "home")
        assert err.value.code == "board_forbidden"
    running = presenter.start(store, SECRET, "home")
    with pytest.raises(LabError) as err:
        presenter.move(store, "a-guess-of-a-student", running.id, "pair")
    assert err.value.code == "board_forbidden"
    token = board.lecturer_token(SECRET)  # the lecturer link's token moves it as the secret does
    moved = presenter.move(store, token, running.id, "pair")
    assert (moved.scene, moved.moves) == ("pair", 1)
    assert presenter.following(store, running.id) == moved


def test_a_second_device_joins_and_a_second_process_sees_every_move(store):
    laptop = presenter.start(store, SECRET, "home")
    presenter.move(store, SECRET, laptop.id, "senses")
    phone = presenter.start(store, board.lecturer_token(SECRET), "home")  # the same presentation, where it stands
    assert (phone.id, phone.scene, phone.moves) == (laptop.id, "senses", 1)
    other_process = Store(store.url)
    assert presenter.following(other_process, laptop.id).scene == "senses"
    presenter.move(store, SECRET, phone.id, "oov")
    assert presenter.following(other_process, laptop.id).moves == 2


def test_a_stale_or_made_up_follow_link_follows_nothing(store, monkeypatch):
    assert presenter.following(store, "made-up") is None
    running = presenter.start(store, SECRET, "home", now=1_000.0)
    assert presenter.following(store, "made-up", now=1_001.0) is None
    assert presenter.following(store, running.id, now=1_001.0) == running
    hours = board.default_hours()
    later = 1_000.0 + hours * 3600 + 1  # left alone for the board's hours: the next lecture starts afresh
    assert presenter.following(store, running.id, now=later) is None
    with pytest.raises(LabError) as err:
        presenter.move(store, SECRET, running.id, "pair", now=later)
    assert err.value.code == "presenter_ended"
    fresh = presenter.start(store, SECRET, "home", now=later)
    assert fresh.id != running.id and fresh.started == later


@pytest.mark.parametrize("scene", ["", "../etc", "<script>", "x" * 25, "Pair"])
def test_a_scene_that_is_no_scene_id_is_refused(store, scene):
    running = presenter.start(store, SECRET, "home")
    with pytest.raises(LabError) as err:
        presenter.move(store, SECRET, running.id, scene)
    assert err.value.code == "presenter_bad_scene"
    assert presenter.following(store, running.id).scene == "home"


def test_every_lecture_scene_is_a_scene_id_the_channel_takes():
    assert all(presenter.SCENE_ID.fullmatch(scene.id) for scene in lecture_scenes.SCENES)


def test_the_projector_tells_which_scene_it_shows_and_the_clock_restarts(store):
    running = presenter.start(store, SECRET, "home", now=100.0)
    assert presenter.shown(store, running.id) is None
    presenter.report_shown(store, running.id, "home", 0, now=101.0)
    assert presenter.shown(store, running.id) == presenter.Shown("home", 0, 101.0)
    presenter.report_shown(store, "made-up", "pair", 0)  # a window following nothing tells nothing
    assert presenter.shown(store, running.id).scene == "home"
    assert presenter.following(store, running.id, now=160.0).elapsed(now=160.0) == 60.0
    restarted = presenter.restart_clock(store, SECRET, running.id, now=170.0)
    assert restarted.elapsed(now=175.0) == 5.0 and restarted.scene == "home"


def test_the_projector_link_holds_no_credential(store):
    running = presenter.start(store, SECRET, "home")
    url = presenter.follow_url(f"http://10.0.0.5:8501/presenter?key={board.lecturer_token(SECRET)}", running.id, "en")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "10.0.0.5:8501", "/")
    assert parse_qs(parts.query) == {"present": ["1"], "follow": [running.id], "lang": ["en"]}
    assert SECRET not in url and "key=" not in url
