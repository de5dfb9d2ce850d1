"""The presenter view's line to the projector: the lecturer steps through the lecture's scenes on their own device
(``app_pages/presenter/``) and the projector window, opened with the presentation's follow link, goes to the same
scene within a second (``ui.presentation``). Pure Python, no Streamlit.

- The presentation lives in the board's database (``core.board.store``), so the lecturer's device and the projector
  may be served by different processes of a lecture hall. One presentation per server (one lecturer per hall): a
  second device of the lecturer (a phone beside the laptop) joins the running one, and a presentation left alone for
  the board's hours (``LAB_BOARD_HOURS``) ends, so the next lecture starts a new one with a new follow link.
- Only the lecturer moves it (:func:`start`, :func:`move`, :func:`restart_clock`: the lecturer secret or the lecturer
  link's token, ``core.board.rules.is_lecturer``). The follow link's id lets a window read the scene and tell which
  scene it shows (:func:`report_shown`), nothing more; the notes never leave the lecturer's device.
"""
from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import asdict, dataclass
from urllib.parse import urlencode, urlsplit

from ..guard.errors import LabError
from . import rules
from .store import Store

# the store's setting names: what the presenter set, what the projector says it shows
PRESENTATION, SHOWN = "presentation", "presentation_shown"
FOLLOW_PARAM = "follow"  # the projector link's parameter: the presentation it follows
SCENE_ID = re.compile(r"[a-z0-9_-]{1,24}")


@dataclass(frozen=True)
class Presentation:
    id: str  # what the follow link carries
    scene: str  # the scene the projector is to show (an id of ui.lecture_scenes)
    moves: int  # every move counts, so that a projector moved away by hand is moved back by the next one
    started: float  # the lecture's clock
    moved: float

    def elapsed(self, now: float | None = None) -> float:
        return max(0.0, (time.time() if now is None else now) - self.started)


@dataclass(frozen=True)
class Shown:
    """What a projector following the presentation said it shows, and when."""
    scene: str
    moves: int
    at: float


def _check_scene(scene: str) -> str:
    if not isinstance(scene, str) or not SCENE_ID.fullmatch(scene):
        raise LabError("presenter_bad_scene")
    return scene


def _read(store: Store) -> Presentation | None:
    value = store.setting(PRESENTATION)
    if value is None:
        return None
    try:
        return Presentation(**json.loads(value))
    except (TypeError, ValueError):  # a row written by another version: as if there were none
        return None


def _write(store: Store, presentation: Presentation) -> Presentation:
    store.set_setting(PRESENTATION, json.dumps(asdict(presentation)))
    return presentation


def _live(presentation: Presentation | None, now: float) -> bool:
    return presentation is not None and now - presentation.moved < rules.default_hours() * 3600


def start(store: Store, secret: str | None, first_scene: str, now: float | None = None) -> Presentation:
    """The running presentation (a second device of the lecturer joins it), else a new one at ``first_scene``."""
    rules.require_lecturer(secret)
    now = time.time() if now is None else now
    running = _read(store)
    if _live(running, now):
        assert running is not None
        return running
    return _write(store, Presentation(secrets.token_urlsafe(8), _check_scene(first_scene), 0, now, now))


def _own(store: Store, secret: str | None, presentation_id: str, now: float) -> Presentation:
    rules.require_lecturer(secret)
    running = _read(store)
    if running is None or running.id != presentation_id or not _live(running, now):
        raise LabError("presenter_ended")
    return running


def move(store: Store, secret: str | None, presentation_id: str, scene: str, now: float | None = None) -> Presentation:
    """The projector is to show ``scene`` next."""
    now = time.time() if now is None else now
    running = _own(store, secret, presentation_id, now)
    return _write(store, Presentation(running.id, _check_scene(scene), running.moves + 1, running.started, now))


def restart_clock(store: Store, secret: str | None, presentation_id: str, now: float | None = None) -> Presentation:
    """The lecture's clock from zero (the scene stays)."""
    now = time.time() if now is None else now
    running = _own(store, secret, presentation_id, now)
    return _write(store, Presentation(running.id, running.scene, running.moves, now, now))


def following(store: Store, presentation_id: str | None, now: float | None = None) -> Presentation | None:
    """The presentation a follow link names, or None when it ended or was never started (a stale link)."""
    running = _read(store)
    now = time.time() if now is None else now
    if not presentation_id or running is None or running.id != presentation_id or not _live(running, now):
        return None
    return running


def report_shown(store: Store, presentation_id: str, scene: str, moves: int, now: float | None = None) -> None:
    """A following projector says which scene it shows (after the move numbered ``moves``)."""
    if following(store, presentation_id, now) is None:
        return
    store.set_setting(SHOWN, json.dumps({"id": presentation_id, "scene": _check_scene(scene), "moves": int(moves),
                                         "at": time.time() if now is None else now}))


def shown(store: Store, presentation_id: str) -> Shown | None:
    """What the projector last said it shows, if it follows this presentation."""
    value = store.setting(SHOWN)
    try:
        told = json.loads(value) if value else None
        if not told or told.get("id") != presentation_id:
            return None
        return Shown(str(told["scene"]), int(told["moves"]), float(told["at"]))
    except (TypeError, ValueError, KeyError):
        return None


def follow_url(page_url: str | None, presentation_id: str, lang: str | None = None) -> str:
    """The projector window's link: presentation mode following this presentation, on the host the lecturer's
    browser uses (the projector's computer is in the same room). It holds no lecturer credential."""
    parts = urlsplit(page_url or "")
    query = {"present": "1", FOLLOW_PARAM: presentation_id, **({"lang": lang} if lang else {})}
    return f"{parts.scheme or 'http'}://{parts.netloc or 'localhost:8501'}/?{urlencode(query)}"
