"""The ELMo page's mixer: one slider per layer weight (pre-softmax w or s directly), γ, presets, and the
mix live on the occurrences of a word. It runs in an ``st.fragment`` and only calls
``core.vectors.mix.mix_view`` on the cached layer arrays, so moving a weight never re-runs the model.
"""
from __future__ import annotations

import html

import numpy as np
import streamlit as st

from core.compute.mixing import (
    PRESETS,
    format_vector,
    layer_normalise,
    mean_norms,
    one_hot,
    pre_softmax_from_normalised,
    scalar_mix,
)
from core.compute.stats import wilson_interval
from core.figures import vectors as figs
from core.guard.errors import LabError
from core.guard.safe_text import md_escape
from core.vectors.mix import mix_view, normalised_s, weights_verdict
from core.vectors.view import MIN_OWN_FRAME, VectorsView
from ui import presentation
from ui.i18n import t
from ui.page import chart, presenting
from ui.state import Field, in_range, seed, sync_to_url, url_param

MODES = ("softmax", "direct")
W_RANGE = (-3.0, 3.0)
GAMMA_RANGE = (0.1, 4.0)
LECTURE_PRESETS = ("syntax", "semantics", "worked_example")  # defined for L + 1 = 3 layers
S_EXERCISE, GAMMA_EXERCISE, _ = PRESETS["worked_example"]  # exercise 2 of the lecture
ss = st.session_state


def slider_key(kind: str, mode: str, j: int) -> str:
    return f"elmo_w_{kind}_{mode}_{j}"


def _set_weights(kind: str, mode: str, values) -> None:
    ss["elmo_mode"] = mode
    for j, v in enumerate(values):
        ss[slider_key(kind, mode, j)] = float(v)


def _preset(name: str, kind: str, n: int) -> None:
    """Button callback: put the sliders where the preset says (runs before the widgets exist)."""
    if name == "uniform":
        weights, gamma, _ = PRESETS["uniform"]
        _set_weights(kind, "softmax", [0.0] * n)
    elif name == "onehot":
        gamma = 1.0
        _set_weights(kind, "direct", one_hot(n, ss["elmo_onehot_k"]))
    else:
        s, gamma, _ = PRESETS[name]
        # the softmax of these slider values is exactly s
        _set_weights(kind, "softmax", pre_softmax_from_normalised(s))
    ss["elmo_gamma"] = float(gamma)


def _switch_mode(kind: str, n: int) -> None:
    """Carry the current s over when the slider mode changes, so the mix does not jump."""
    new = ss["elmo_mode"]
    old = "direct" if new == "softmax" else "softmax"
    values = [float(ss.get(slider_key(kind, old, j), 0.0 if old == "softmax" else 1.0)) for j in range(n)]
    try:
        s = normalised_s(values, old == "softmax")
    except LabError:
        s = np.full(n, 1.0 / n)
    if new == "direct":
        _set_weights(kind, "direct", np.round(s, 2))
    else:
        w = np.log(np.clip(s, np.exp(W_RANGE[0]), None))
        _set_weights(kind, "softmax", np.clip(w - w.max(), *W_RANGE))


def _fields(kind: str, n: int) -> list[Field]:
    """The mixer's values: every slider from the URL's ``w`` (when it fits the mode and the model's layers),
    else neutral; the one-hot layer; the layer-norm switch."""
    url_w = url_param("w", None, cast=list)
    fits = isinstance(url_w, list) and len(url_w) == n and all(isinstance(v, (int, float)) for v in url_w)
    fields = [Field("elmo_onehot_k", None, n - 1, in_range(0, n - 1)), Field("elmo_layer_norm", "norm", False, bool)]
    for mode in MODES:
        (lo, hi), neutral = (W_RANGE, 0.0) if mode == "softmax" else ((0.0, 1.0), 1.0)
        for j in range(n):
            value = float(url_w[j]) if fits and mode == ss["elmo_mode"] else neutral
            fields.append(Field(slider_key(kind, mode, j), None, float(min(max(value, lo), hi)), float))
    return fields


def _controls(kind: str, layer_names: list[str]) -> None:
    n = len(layer_names)
    st.markdown(f"**{t('elmo.controls.title')}**")
    st.radio(t("elmo.mode"), MODES, key="elmo_mode", horizontal=True, persist_state="session",
             format_func=lambda m: t(f"elmo.mode.{m}"), on_change=_switch_mode, args=(kind, n),
             help=t("elmo.mode_help"))
    # two rows: at 1280 px one row of six cuts the layer names and "只用这一层"
    for col, name in zip(st.columns(4), ("uniform", "syntax", "semantics", "worked_example")):
        disabled = name in LECTURE_PRESETS and n != 3
        col.button(t(f"elmo.preset.{name}"), key=f"elmo_preset_{name}", on_click=_preset, args=(name, kind, n),
                   disabled=disabled, help=t("elmo.preset_needs3") if disabled else t(f"elmo.preset_help.{name}"),
                   width="stretch")
    layer_col, onehot_col, _ = st.columns([2, 1, 1])
    layer_col.selectbox(t("elmo.onehot_layer"), list(range(n)), key="elmo_onehot_k",
                        format_func=lambda j: f"{j} · {layer_names[j]}", label_visibility="collapsed")
    onehot_col.button(t("elmo.preset.onehot"), key="elmo_preset_onehot", on_click=_preset, args=("onehot", kind, n),
                      help=t("elmo.preset_help.onehot"), width="stretch")


def _weights(kind: str, mode: str, layer_names: list[str]) -> tuple[np.ndarray, float] | None:
    """The sliders and what they give: (s, γ), or ``None`` after saying that the weights sum to zero."""
    pre_softmax, large = mode == "softmax", presenting()
    lo, hi, step = (*W_RANGE, 0.01) if pre_softmax else (0.0, 1.0, 0.05)
    values, s_notes = [], []
    for j, name in enumerate(layer_names):
        label = t("elmo.slider_w" if pre_softmax else "elmo.slider_s", j=j, name=name)
        values.append(st.slider(label, lo, hi, step=step, key=slider_key(kind, mode, j), format="%.2f",
                                persist_state="session"))
        s_notes.append(st.empty())  # filled below with this slider's s_j: a w or a relative size is not s
    gamma = st.slider(t("elmo.gamma"), *GAMMA_RANGE, step=0.1, key="elmo_gamma", format="%.1f",
                      help=t("elmo.gamma_help"), persist_state="session")
    sync_to_url(w=[round(v, 3) for v in values], gamma=round(gamma, 2), mode=mode)
    try:
        s = normalised_s(values, pre_softmax)
    except LabError:
        st.error(t("elmo.zero_sum"))
        return None
    for j, note in enumerate(s_notes):
        note.caption(t("elmo.slider_gives", j=j, s=f"{s[j]:.2f}"))
    with st.container(key="elmo_s_result"):  # the scenes "syntax" and "semantics": s and what it gives
        st.markdown(f"**{t('elmo.bar_title' if pre_softmax else 'elmo.bar_title_direct')}**")
        # (projector: lower, with the pinned sentence row above it on the screen)
        chart(figs.weights_bar(layer_names, s, None, large=large, height=215 if large else 320), "elmo_bars",
              toolbar=False)
        st.markdown(t("elmo.s_now", s=format_vector(s, 2), gamma=f"{gamma:.1f}"))
        n = len(layer_names)
        toy = scalar_mix(np.identity(n), s, gamma)
        is_exercise = n == 3 and np.allclose(s, S_EXERCISE, atol=5e-3) and abs(gamma - GAMMA_EXERCISE) < 1e-6
        if is_exercise and not ss.get("elmo_reveal"):
            st.markdown(t("elmo.toy_hidden"))  # the live result would give exercise 2's answer away
        else:
            st.markdown(t("elmo.toy_now" if n == 3 else "elmo.toy_now_n", vec=format_vector(toy, 2), n=n))
    return s, gamma


def _live(view: VectorsView, s: np.ndarray, gamma: float, layer_names: list[str], ctx_name: str,
          word: str) -> None:
    large = presenting()
    layer_norm = st.toggle(t("elmo.layer_norm"), key="elmo_layer_norm", help=t("elmo.layer_norm_help"),
                           persist_state="session")
    sync_to_url(norm=True if layer_norm else None)
    stack = view.stacked()
    # standardised layers get a frame of their own (fitted in mix_view); raw ones keep the page's cached frame
    mix = mix_view(stack, s, gamma, False, view.occurrence_labels, None if layer_norm else view.projection,
                      layer_norm=layer_norm)
    if mix.layer_cosines is not None and mix.mixed_cosine is not None:  # two occurrences: their cosines, no map
        chart(figs.pair_cosine_bars(
            layer_names, mix.layer_cosines, mix.mixed_cosine, mixed_name=t("elmo.live.mixed"),
            axis_title=t("elmo.live.pair_axis"),
            title=t("elmo.live.pair_title", name=html.escape(ctx_name), word=html.escape(word)), large=large,
            height=480 if large else 420), "elmo_pair_cosine")
        st.caption(t("elmo.live.pair_caption", dim=mix.mixed.shape[-1]))
    elif view.num_occurrences < MIN_OWN_FRAME:  # one occurrence: nothing to compare, and one point is no picture
        st.info(t("elmo.live.one", word=md_escape(word)))
    else:
        chart(figs.mix_scatter(
            mix.coords, view.ids, view.occurrence_labels, view.hover, layer_coords=mix.layer_coords,
            layer_names=[f"{j} · {nm}" for j, nm in enumerate(layer_names)], explained=mix.explained,
            title=t("elmo.live.fig_title", name=html.escape(ctx_name), word=html.escape(word)),
            mixed_name=t("elmo.live.mixed"), large=large, height=620 if large else 540), "elmo_scatter")
        st.caption(t("elmo.live.caption"))
    _norms_note(stack, layer_names, layer_norm)
    if mix.accuracy is None:
        st.caption(t("static.acc_hint"))
        return
    per_layer = mix.layer_accuracy or []
    c1, c2 = st.columns([1, 1])
    c1.metric(t("elmo.live.acc"), f"{100 * mix.accuracy:.0f}%")
    low, high = wilson_interval(mix.accuracy, view.scored)
    c1.caption(t("acc.n_interval", n=view.scored, low=f"{100 * low:.0f}", high=f"{100 * high:.0f}"))
    c2.markdown(t("elmo.live.acc_layers") + "  \n" + " · ".join(
        f"{layer_names[j]}: {'—' if a is None else f'{100 * a:.0f}%'}" for j, a in enumerate(per_layer)))
    st.caption(t("elmo.live.acc_caption"))
    verdict = weights_verdict(mix)
    if verdict is not None:
        def name(key: int | None) -> str:
            return t("elmo.live.weights.mix") if key is None else layer_names[key]

        def points(x: float) -> str:
            return f"{100 * x:+.1f}"

        st.caption(t(f"elmo.live.weights.{verdict.verdict}", best=name(verdict.best), worst=name(verdict.worst),
                     diff=f"{100 * verdict.diff:.1f}", low=points(verdict.low), high=points(verdict.high), n=verdict.n,
                     layer0=layer_names[0]))


def _norms_note(stack: np.ndarray, layer_names: list[str], layer_norm: bool) -> None:
    """The layers' mean vector lengths: at equal s, the longest layer weighs the most in a raw mix."""
    def listed(norms: np.ndarray) -> str:
        return " · ".join(f"{name} {norm:.1f}" for name, norm in zip(layer_names, norms))

    raw = mean_norms(stack)
    if layer_norm:
        standardised = mean_norms(layer_normalise(stack))
        st.caption(t("elmo.live.norms_normalised", raw=listed(raw), normalised=listed(standardised)))
    else:
        st.caption(t("elmo.live.norms_raw", raw=listed(raw), longest=layer_names[int(np.argmax(raw))],
                     ratio=f"{raw.max() / max(raw.min(), 1e-12):.1f}"))


@presentation.fragment
def mixer(view: VectorsView | None, kind: str, layer_names: list[str], ctx_name: str, word: str) -> None:
    """``kind`` ("elmo" / "bert") keeps each model's sliders apart; ``view`` is ``None`` without a model
    or a usable sentence (the sliders and the lecture's toy vectors still work)."""
    seed(*_fields(kind, len(layer_names)))
    _controls(kind, layer_names)
    with st.container(key="elmo_result"):
        col_sliders, col_live = st.columns([2, 3], gap="large")
        with col_sliders:
            weights = _weights(kind, ss["elmo_mode"], layer_names)
        # what the sentences above drive (ui.presentation.INPUT_RESULTS): the live chart and its numbers
        with col_live, st.container(key="elmo_live_result"):
            if weights is None:
                return
            if view is None or not view.num_occurrences:
                st.info(t("elmo.live.none"))
                return
            _live(view, *weights, layer_names, ctx_name, word)
