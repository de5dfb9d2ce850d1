"""URL-shareable state: each page declares the values it keeps once, seeds its widgets from the query
string, and writes the current values back, so a teacher can copy the address bar and get the same page,
language, model and inputs again::

    seed(Field("att_sentence", "sentence", "苹果昨天发布了新手机。"),
         Field("att_layer", "layer", 1, cast=in_range(1)),
         Field("att_hide", "hide", False, cast=bool))
    st.text_input(label, key="att_sentence", persist_state="session")
    ...
    sync_to_url(sentence=…, layer=…, hide=True if hide else None)

Encoding in the URL: ``bool`` -> ``"1"``/``"0"``; ``list``/``tuple``/``dict`` -> compact JSON;
``None`` -> the parameter is removed; everything else -> ``str(value)``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from core.guard import safe_json

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def encode(value: Any) -> str | None:
    """The query-string form of ``value`` (``None`` means: remove the parameter)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def decode(raw: str, cast: Callable[[Any], Any] = str) -> Any:
    """Turn a query-string value back into ``cast``'s type. Raises ValueError/TypeError if invalid
    (JSON values also when too long, too deeply nested or not finite: see ``core.guard.safe_json``)."""
    if cast is bool:
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"not a boolean: {raw!r}")
    if cast in (list, tuple, dict):
        value = safe_json.loads(raw)  # bounded: a URL can nest [[[… deep enough to exhaust the stack
        if cast is tuple and isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, cast):
            raise TypeError(f"expected {cast.__name__}, got {type(value).__name__}")
        return value
    return cast(raw)


def url_param(key: str, default: Any, cast: Callable[[Any], Any] = str) -> Any:
    """``st.query_params[key]`` converted with ``cast``; ``default`` if absent or not convertible.

    ``cast`` may be any one-argument callable (``int``, ``float``, a validator ...); ``bool``,
    ``list``, ``tuple`` and ``dict`` are decoded as written by :func:`sync_to_url`.
    """
    raw = st.query_params.get(key)
    if raw is None:
        return default
    try:
        return decode(raw, cast)
    except (ValueError, TypeError):  # json.JSONDecodeError is a ValueError
        return default


def one_of(*choices: str) -> Callable[[str], str]:
    """A ``cast`` for :func:`url_param` that accepts only ``choices`` (anything else: the default)."""
    def check(value: str) -> str:
        if value not in choices:
            raise ValueError(value)
        return value
    return check


def in_range(low: float, high: float | None = None, kind: Callable[[str], Any] = int) -> Callable[[str], Any]:
    """A ``cast`` for :func:`url_param`: a ``kind`` number with ``low <= n <= high`` (``high=None``: no upper
    limit); anything else, NaN included, falls back to the default."""
    def check(value: str):
        number = kind(value)
        if not (low <= number and (high is None or number <= high)):
            raise ValueError(value)
        return number
    return check


def sync_to_url(**values: Any) -> None:
    """Write ``values`` to the query string; only parameters whose encoded value changed are touched
    (each write to ``st.query_params`` updates the browser's address bar)."""
    for key, value in values.items():
        new = encode(value)
        old = st.query_params.get(key)
        if new is None:
            if old is not None:
                del st.query_params[key]
        elif new != old:
            st.query_params[key] = new


@dataclass(frozen=True)
class Field:
    """One value a page keeps: its widget's session key, the query parameter that seeds it (``None``: kept in
    the session only) and its default. ``cast`` turns the URL's text into a value (``int``, ``one_of(…)``,
    ``in_range(…)``, ``bool``, ``list``) and also judges a value the session kept: one it would not give back
    unchanged (a layer the new model lacks, say) is replaced."""
    key: str
    param: str | None
    default: Any
    cast: Callable[[Any], Any] = str

    def initial(self) -> Any:
        return url_param(self.param, self.default, self.cast) if self.param else self.default

    def keeps(self, value: Any) -> bool:
        if self.cast is bool:
            return isinstance(value, bool)
        if self.cast in (list, tuple, dict):
            return isinstance(value, self.cast)
        try:
            return self.cast(value) == value
        except (ValueError, TypeError):
            return False


LABELS_KEY = "_option_labels"  # widget key -> the option labels it was last drawn with


def relabel(key: str, labels: list[str]) -> None:
    """Call before drawing the widget ``key`` whose option labels are ``labels``. The browser remembers a
    select widget's value by its label: when the labels change (another model's layer names) and the value
    stays, it finds no such label and shows the first option while the script goes on with the kept value.
    Writing the value again makes Streamlit send it with the new labels."""
    ss = st.session_state
    shown = ss.setdefault(LABELS_KEY, {})
    if key in ss and shown.get(key, labels) != labels:
        ss[key] = ss[key]
    shown[key] = list(labels)


FOLLOWED_KEY = "_followed_sources"  # widget key -> the source its value last started from


def follow(key: str, source: Any, value: Any) -> None:
    """A widget whose value belongs to a source (the candidate box to its masked sentence): when ``source`` is
    not the one the widget last started from, its value starts again as ``value``; otherwise the user's edit
    stays."""
    followed = st.session_state.setdefault(FOLLOWED_KEY, {})
    if key not in followed or followed[key] != source:
        followed[key] = source
        st.session_state[key] = value


KEPT_KEY = "_kept_choices"  # widget key -> (options, names) it was last drawn with


@dataclass(frozen=True)
class KeptChoice:
    """A widget's choice kept by a stable name while the widget's value changes meaning under it: a tab kept by
    its id while its label follows the language; a token kept by its text while the selectbox holds its row,
    which another sentence (or characters ↔ words) moves. ``name`` is the kept name's field: its own session key
    (not a widget's, so it outlives the widget), its URL parameter and default."""
    key: str
    name: Field

    def place(self, options: Sequence[Any], names: Sequence[str], near: Callable[[str], int] | None = None) -> str:
        """Call right before drawing the widget ``key`` with ``options`` (option i named ``names[i]``): the
        widget's value is read against the options it was last drawn with (what the user chose), or the URL's
        or a scene's name wins where it was just seeded; then the widget points at the option of that name
        (the same row if it still bears it, else ``near(name)``'s, by default the first). Returns the name."""
        ss = st.session_state
        drawn = ss.setdefault(KEPT_KEY, {})
        value = ss.get(self.key)
        if self.name.key not in seed(self.name) and self.key in drawn and value in drawn[self.key][0]:
            options_then, names_then = drawn[self.key]
            ss[self.name.key] = names_then[options_then.index(value)]
        wanted = ss[self.name.key]
        if not (value in options and names[options.index(value)] == wanted):
            ss[self.key] = options[near(wanted) if near else (names.index(wanted) if wanted in names else 0)]
        ss[self.name.key] = names[options.index(ss[self.key])]  # a near match is kept by its own name
        drawn[self.key] = (list(options), list(names))
        return ss[self.name.key]


# Scene arrivals (ui/presentation.py): a counter of every arrival in this session, and the number of the one in
# force (0 when no scene is). A field seeded before the scene in force is seeded again, from the scene's URL.
ARRIVALS_KEY = "_scene_arrivals"
SCENE_KEY = "_scene_in_force"
SEEDED_KEY = "_seeded_at"  # widget key -> the scene arrival in force when it was seeded


def start_scene() -> int:
    """A scene link was opened: every field its page seeds from now on starts again from the URL. Returns the
    arrival's number."""
    ss = st.session_state
    ss[ARRIVALS_KEY] = ss[SCENE_KEY] = ss.get(ARRIVALS_KEY, 0) + 1
    return ss[ARRIVALS_KEY]


def end_scene() -> None:
    """The scene was left: what the user changes now is kept."""
    st.session_state[SCENE_KEY] = 0


def seed(*fields: Field, by_scene: bool = True) -> set[str]:
    """Give each field's widget its first value: from the URL, else the default. The value the session kept
    stays (widgets made with ``persist_state="session"`` keep theirs across page switches) unless ``cast``
    refuses it or a scene arrived since it was seeded: a scene starts its page from its own parameters
    (``by_scene=False``: values of the whole session, such as the sidebar's, which scenes leave alone).
    Returns the keys it gave a first value (from the URL or the default) in this call.

    Why not ``bind="query-params"``: it names the query parameter after the widget's key, so keys would have to
    change (tests, stylesheets and scenes find widgets by key), and pages share parameter names that mean
    different things (``sentence``, ``word``, ``mode``, ``layer`` …) while each keeps its own value in the
    session; a bound parameter also cannot be set through ``st.query_params``, which is how scenes arrive, and
    long texts must stay out of the address bar."""
    ss = st.session_state
    in_force = ss.get(SCENE_KEY, 0) if by_scene else 0
    seeded = ss.setdefault(SEEDED_KEY, {})
    fresh = set()
    for field in fields:
        if field.key in ss and seeded.get(field.key, 0) >= in_force and field.keeps(ss[field.key]):
            # Written back: Streamlit keeps a persisted value under the widget's id, and the same key's widget
            # on another page (other label or height) has another id, so it would start empty (static vs
            # contextual → ELMo weights lost the sentences).
            ss[field.key] = ss[field.key]
            continue
        ss[field.key] = field.initial()
        seeded[field.key] = in_force
        fresh.add(field.key)
    return fresh
