"""Figures of the vector pages: arrays and (already translated, already escaped) strings in,
``go.Figure`` out. Hover strings that contain user text must be ``html.escape``d by the caller
(core.vectors does it); words from a model's vocabulary are escaped here.
"""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ..compute.stats import wilson_interval
from .grid import subplot_grid
from .style import PALETTE, STATIC_COLOUR, SYMBOLS, base_layout, style_layout, wrap_note

TEXT_COLOUR = "#111827"
# A note drawn in the middle of the left subplot: about its width on a 1280-px screen with the sidebar open
# (a longer line ran into the right subplot's "PC2" axis title)
NOTE_WIDTH_PX = 260
def sense_markers(labels: Sequence[str | None], order: Sequence[str] = ()) -> dict[str | None, dict[str, str]]:
    """A stable colour and marker shape per sense label, in ``order`` (e.g. the class board's senses as the
    lecturer gave them: two boards with the same senses agree), then in order of first appearance: two senses
    differ in both, so that they can be told apart without seeing colours. Unlabelled points (None) are blue
    circles when nothing is labelled, else grey circles."""
    markers: dict[str | None, dict[str, str]] = {}
    named = [l for l in dict.fromkeys([*order, *labels]) if l]
    for i, label in enumerate(named):
        markers[label] = {"color": PALETTE[i % len(PALETTE)], "symbol": SYMBOLS[i % len(SYMBOLS)]}
    if None in labels:
        markers[None] = {"color": PALETTE[0] if not named else "#7f7f7f", "symbol": "circle"}
    return markers


def padded_range(values: np.ndarray, pad: float = 0.12) -> list[float]:
    """[min, max] of ``values`` widened by ``pad`` of the span (or ±1 when all equal)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return [-1.0, 1.0]
    lo, hi = float(values.min()), float(values.max())
    span = hi - lo
    if span <= 1e-12:
        return [lo - 1.0, hi + 1.0]
    return [lo - pad * span, hi + pad * span]


def _pct(x: float) -> str:
    return f"{100 * float(x):.0f}%"


_LABEL_SPOTS = (("top center", (0.0, 1.0)), ("bottom center", (0.0, -1.0)),
                ("middle right", (1.0, 0.0)), ("middle left", (-1.0, 0.0)))


def label_positions(coords: np.ndarray) -> list[str]:
    """A text position per point that keeps its number clear of the other points and numbers.

    Greedy, in the order given: each label takes the side (above, below, right, left) whose label
    spot lies farthest from every point and every label placed so far, in axis-normalised units.
    """
    xy = np.asarray(coords, dtype=float)
    if len(xy) == 0:
        return []
    span = np.ptp(xy, axis=0)
    unit = xy / np.where(span > 0, span, 1.0)
    step = 0.035  # about one label height on a chart of ordinary size
    occupied = list(unit)
    positions = []
    for point in unit:
        def clearance(spot, point=point):
            anchor = point + step * np.asarray(spot[1])
            return min(np.linalg.norm(anchor - other) for other in occupied if other is not point)
        name, offset = max(_LABEL_SPOTS, key=clearance) if len(occupied) > 1 else _LABEL_SPOTS[0]
        positions.append(name)
        occupied.append(point + step * np.asarray(offset))
    return positions


def shared_labels(coords: np.ndarray, ids: Sequence[str]) -> list[str]:
    """One label per spot: points drawn on the same spot (at layer 0 every occurrence of a character has the same
    vector) share one label, ``1–16`` (or ``1, 3, 5``), on the first of them, instead of numbers stacked into a blob;
    the others' labels are empty."""
    xy = np.asarray(coords, dtype=float)
    if len(xy) == 0:
        return []
    tolerance = 1e-6 * max(1.0, float(np.ptp(xy)))
    texts = [""] * len(xy)
    taken = [False] * len(xy)
    for i in range(len(xy)):
        if taken[i]:
            continue
        here = [j for j in range(i, len(xy)) if not taken[j] and np.abs(xy[j] - xy[i]).max() <= tolerance]
        for j in here:
            taken[j] = True
        names = [str(ids[j]) for j in here]
        numbers = [int(n) for n in names if n.isdigit()]
        consecutive = len(numbers) == len(names) > 2 and numbers == list(range(numbers[0], numbers[0] + len(names)))
        texts[i] = f"{names[0]}–{names[-1]}" if consecutive else ", ".join(names)
    return texts


def _groups(labels: Sequence[str | None], first: Sequence[str] = ()) -> list[tuple[str | None, list[int]]]:
    order = [label for label in dict.fromkeys([*first, *labels]) if label in labels]
    return [(label, [i for i, l in enumerate(labels) if l == label]) for label in order]


def static_vs_contextual_figure(
    *,
    static_words: Sequence[str] | None,
    static_coords: np.ndarray | None,
    static_explained: np.ndarray | None,
    static_label: str,
    static_hover: str,
    static_note: str | None,
    coords: np.ndarray | None,
    ids: Sequence[str],
    labels: Sequence[str | None],
    hover: Sequence[str],
    explained: np.ndarray | None,
    axis_range: tuple[list[float], list[float]] | None,
    static_title: str,
    contextual_title: str,
    contextual_note: str | None = None,
    unlabelled_name: str = "—",
    neighbour_name: str = "neighbours",
    background_tokens: Sequence[str] = (),
    background_coords: np.ndarray | None = None,
    background_name: str = "other tokens",
    title: str | None = None,
    large: bool = False,
    height: int = 560,
    stacked: bool = False,
) -> go.Figure:
    """Left: the ONE word2vec point (with its vocabulary neighbours for orientation). Right: one
    point per occurrence in the contextual model's layer, over the sentences' other tokens (grey) when
    ``background_coords`` is given. Two separate spaces, two subplots
    (``stacked``: one above the other, for a phone's narrow screen)."""
    if stacked:  # a phone's width: the long title in two lines
        contextual_title = contextual_title.replace(" · ", "<br>", 1)
    size = 20 if large else 15
    has_static_points = static_words is not None and static_coords is not None and len(static_words)
    # With points the note goes under the left title: at the bottom it ran into the right plot's axis title
    static_heading = (f"{static_title}<br><span style='color:#8a1c1c'>{static_note}</span>"
                      if static_note and has_static_points else static_title)
    grid = (subplot_grid(2, 1, v_spacing=0.2, titles=[static_heading, contextual_title], title_size=size + 1)
            if stacked else subplot_grid(1, 2, widths=[0.38, 0.62], h_spacing=0.08,
                                         titles=[static_heading, contextual_title], title_size=size + 1))
    here, there = grid.cells
    layout = grid.layout
    traces: list[go.Scatter] = []
    notes: list[dict] = []

    def note(cell, text: str) -> None:  # a note in the middle of a subplot
        (x0, x1), (y0, y1) = layout[cell.xaxis]["domain"], layout[cell.yaxis]["domain"]
        notes.append({"x": (x0 + x1) / 2, "y": (y0 + y1) / 2, "xref": "paper", "yref": "paper", "text": text,
                      "xanchor": "center", "showarrow": False, "font": {"size": size, "color": "#8a1c1c"},
                      "align": "center"})

    # ---- left: static space
    if has_static_points and static_words is not None:
        xy = np.asarray(static_coords, dtype=float)
        if len(static_words) > 1:
            traces.append(go.Scatter(
                x=xy[1:, 0], y=xy[1:, 1], mode="markers+text", name=neighbour_name,
                text=[html.escape(w) for w in static_words[1:]], textposition="top center",
                marker={"size": 9, "color": "#b0b0b0"}, textfont={"color": "#6b6b6b", "size": size - 2},
                hovertemplate="%{text}<extra></extra>", legendgroup="static", xaxis=here.x, yaxis=here.y,
            ))
        traces.append(go.Scatter(
            x=[xy[0, 0]], y=[xy[0, 1]], mode="markers+text", name=static_label,
            text=[f"<b>{html.escape(static_words[0])}</b>"], textposition="bottom center",
            marker={"size": 26, "color": STATIC_COLOUR, "symbol": "star", "line": {"width": 2, "color": "white"}},
            textfont={"size": size + 3, "color": STATIC_COLOUR},
            hovertext=[static_hover], hoverinfo="text", legendgroup="static", xaxis=here.x, yaxis=here.y,
        ))
        layout[here.xaxis].update(range=padded_range(xy[:, 0], 0.2), zeroline=False)
        layout[here.yaxis].update(range=padded_range(xy[:, 1], 0.2), zeroline=False)
        if static_explained is not None:
            layout[here.xaxis]["title"] = {"text": f"PC1 ({_pct(static_explained[0])})"}
            layout[here.yaxis]["title"] = {"text": f"PC2 ({_pct(static_explained[1])})"}
    else:
        layout[here.xaxis].update(visible=False, range=[0, 1])
        layout[here.yaxis].update(visible=False, range=[0, 1])
    if static_note and not has_static_points:
        note(here, wrap_note(static_note, size, NOTE_WIDTH_PX))

    # ---- right: contextual space, one point per occurrence
    if coords is not None and len(ids):
        xy = np.asarray(coords, dtype=float)
        if background_coords is not None and len(background_tokens):
            bg = np.asarray(background_coords, dtype=float)
            traces.append(go.Scatter(
                x=bg[:, 0], y=bg[:, 1], mode="markers+text", name=background_name,
                text=[html.escape(token) for token in background_tokens], textposition="top center",
                marker={"size": 8, "color": "#b0b0b0"}, textfont={"color": "#6b6b6b", "size": size - 3},
                hovertemplate="%{text}<extra></extra>", legendgroup="background", xaxis=there.x, yaxis=there.y,
            ))
        markers = sense_markers(labels)
        spots = label_positions(xy)
        texts = shared_labels(xy, ids)
        for label, members in _groups(labels):
            traces.append(go.Scatter(
                x=xy[members, 0], y=xy[members, 1], mode="markers+text",
                name=html.escape(label) if label else unlabelled_name,
                showlegend=any(labels),  # a legend of one "unlabelled" entry says nothing
                # a number over the top or beside the edge of the plot is drawn whole, not cut by the axes
                text=[texts[i] for i in members], textposition=[spots[i] for i in members], cliponaxis=False,
                marker={"size": 15, **markers[label], "line": {"width": 1, "color": "white"}},
                textfont={"size": size - 1},
                customdata=[hover[i] for i in members],
                hovertemplate="%{customdata}<extra></extra>",  # (a shared label is on the first point of its spot)
                xaxis=there.x, yaxis=there.y,
            ))
        if explained is not None:
            layout[there.xaxis]["title"] = {"text": f"PC1 ({_pct(explained[0])})"}
            layout[there.yaxis]["title"] = {"text": f"PC2 ({_pct(explained[1])})"}
        if axis_range is not None:
            layout[there.xaxis]["range"] = axis_range[0]
            layout[there.yaxis]["range"] = axis_range[1]
    else:
        layout[there.xaxis].update(visible=False, range=[0, 1])
        layout[there.yaxis].update(visible=False, range=[0, 1])
    if contextual_note:
        note(there, contextual_note)
    layout["annotations"] = layout.get("annotations", []) + notes
    # the legend starts a fixed distance below the plots, clear of the axis titles however short the figure
    # (projector: 20 px less above the titles and below the legend, room for the pinned sentence row above)
    top, bottom = (95 if static_heading != static_title else 70) - (20 if large else 0), 110 if large else 130
    style = style_layout(title, large=large, height=height)
    return go.Figure(data=traces, layout={
        **style, **layout,
        "legend": {**style["legend"], "orientation": "h", "yanchor": "top",
                   "y": -((4.6 if stacked else 3.6) * size) / (height - top - bottom), "x": 0},
        "margin": {**style["margin"], "b": bottom, "t": top}})


def cosine_range(matrix: np.ndarray) -> tuple[float, float]:
    """The colour range of a cosine heatmap: from the smallest value (rounded down to 0.05) to 1.

    Contextual vectors of one word are all fairly similar (0.7–1.0 is common): on a fixed −1…1
    scale the whole matrix would be one block of colour.
    """
    low = float(np.nanmin(matrix)) if np.size(matrix) else -1.0
    low = min(np.floor(low * 20) / 20, 0.95)
    return max(low, -1.0), 1.0


def cosine_heatmap(matrix: np.ndarray, ids: Sequence[str], title: str, *, large: bool = False,
                   height: int = 560, colorbar_title: str = "cos") -> go.Figure:
    """Pairwise cosine similarity between occurrences, coloured over the data's own range
    (:func:`cosine_range`); values printed when the matrix is small."""
    m = np.asarray(matrix, dtype=float)
    labels = [f"#{i}" for i in ids]
    show_values = len(ids) <= 14
    low, high = cosine_range(m)
    return go.Figure(go.Heatmap(
        z=m, x=labels, y=labels, zmin=low, zmax=high, colorscale="Blues",
        colorbar={"title": {"text": colorbar_title}},
        texttemplate="%{z:.2f}" if show_values else None,
        hovertemplate="%{y} · %{x}: %{z:.3f}<extra></extra>",
    ), layout={**style_layout(title, large=large, height=height),
               "yaxis": {"autorange": "reversed", "type": "category"},
               "xaxis": {"type": "category", "tickangle": 0 if len(ids) <= 14 else -90}})


def accuracy_chart(layer_names: Sequence[str], accuracies: Sequence[float | None], static_accuracy: float | None,
                   *, n: int, contextual_name: str, static_name: str, title: str, large: bool = False,
                   height: int = 380, current: int | None = None) -> go.Figure:
    """Leave-one-out nearest-neighbour sense accuracy per contextual layer vs the static line, each point with its
    95 % Wilson interval over the ``n`` labelled occurrences (one of twelve is 8 points: the bars show it)."""
    y = [None if a is None else float(a) for a in accuracies]
    bounds = [None if a is None else wilson_interval(a, n) for a in y]
    traces = [go.Scatter(
        x=list(layer_names), y=y, mode="lines+markers+text", name=contextual_name,
        text=[("" if a is None else _pct(a)) for a in y], textposition="top center", cliponaxis=False,
        marker={"size": 11, "color": PALETTE[0]}, line={"width": 3},
        error_y={"type": "data", "symmetric": False, "thickness": 1.5, "width": 4, "color": PALETTE[0],
                 "array": [0.0 if b is None or a is None else b[1] - a for a, b in zip(y, bounds)],
                 "arrayminus": [0.0 if b is None or a is None else a - b[0] for a, b in zip(y, bounds)]},
        customdata=[[b[0], b[1]] if b else [None, None] for b in bounds],
        hovertemplate=(f"%{{x}}: %{{y:.0%}} (95%: %{{customdata[0]:.0%}}–%{{customdata[1]:.0%}}, n = {n})"
                       "<extra></extra>"),
    )]
    if current is not None and 0 <= current < len(y) and y[current] is not None:
        ring = {"size": 20, "color": "rgba(0,0,0,0)", "line": {"width": 3, "color": PALETTE[1]}}
        traces.append(go.Scatter(x=[layer_names[current]], y=[y[current]], mode="markers", showlegend=False,
                                 marker=ring, hoverinfo="skip"))
    if static_accuracy is not None:
        traces.append(go.Scatter(
            x=list(layer_names), y=[float(static_accuracy)] * len(layer_names), mode="lines",
            name=f"{static_name}: {_pct(static_accuracy)}", line={"dash": "dash", "width": 3, "color": STATIC_COLOUR},
            hovertemplate=f"{static_name}: %{{y:.0%}}<extra></extra>",
        ))
    style = style_layout(f"{title} · n = {n}", large=large, height=height)
    # "100%" over a top point is drawn whole (cliponaxis above), and the axis starts a little below 0 so that
    # the "0%" tick stands clear of the first layer's name under it
    return go.Figure(data=traces, layout={
        **style, "yaxis": {"range": [-0.08, 1.16], "tickvals": [0, 0.5, 1], "tickformat": ".0%"},
        "xaxis": {"type": "category"},
        "legend": {**style["legend"], "orientation": "h", "yanchor": "top", "y": -0.18, "x": 0}})


def weights_bar(layer_names: Sequence[str], s: Sequence[float] | np.ndarray, title: str | None, *, large: bool = False,
                height: int = 320) -> go.Figure:
    """The layer weights s_j as bars labelled with their values, each named "s_j" over its layer name.
    The names stay horizontal (rotated ones are unreadable on a projector): a long name breaks before
    a Latin word ("第 1 层 biLSTM" → "第 1 层" / "biLSTM")."""
    values = [float(v) for v in s]
    names = [f"s<sub>{j}</sub><br>" + (re.sub(r" (?=[A-Za-z])", "<br>", nm) if len(nm) > 6 else nm)
             for j, nm in enumerate(layer_names)]
    return go.Figure(go.Bar(
        x=names, y=values, text=[f"{v:.2f}" for v in values], textposition="outside",
        marker={"color": [PALETTE[j % len(PALETTE)] for j in range(len(values))]},
        hovertemplate="%{x}: s = %{y:.3f}<extra></extra>",
    ), layout={**style_layout(title, large=large, height=height),
               "yaxis": {"range": [0, 1.15], "title": {"text": "s"}}, "xaxis": {"type": "category", "tickangle": 0}})


def mix_scatter(coords: np.ndarray, ids: Sequence[str], labels: Sequence[str | None], hover: Sequence[str],
                *, layer_coords: np.ndarray | None = None, layer_names: Sequence[str] = (),
                explained: np.ndarray | None = None, title: str | None = None, mixed_name: str = "ELMo",
                large: bool = False, height: int = 560, sense_order: Sequence[str] = ()) -> go.Figure:
    """The mixed vector of each occurrence (coloured by sense, in ``sense_order`` then as they come), with faint
    per-layer points behind."""
    size = 20 if large else 15
    traces: list[go.Scatter] = []
    # line marks, none of the sense groups' shapes (style.SYMBOLS): a layer's point is never read as a sense's
    symbols = ["cross-thin-open", "x-thin-open", "asterisk-open", "hash-open", "y-up-open", "y-down-open"]
    if layer_coords is not None:
        for j, name in enumerate(layer_names):
            xy = np.asarray(layer_coords[j], dtype=float)
            traces.append(go.Scatter(
                x=xy[:, 0], y=xy[:, 1], mode="markers", name=name,
                marker={"size": 12, "color": "#5f5f5f", "symbol": symbols[j % len(symbols)], "opacity": 0.85,
                        "line": {"width": 2}},
                customdata=list(hover), text=list(ids),
                hovertemplate=f"{html.escape(name)} · %{{text}}: %{{customdata}}<extra></extra>",
            ))
    xy = np.asarray(coords, dtype=float)
    markers = sense_markers(labels, sense_order)
    spots = label_positions(xy)
    for label, members in _groups(labels, sense_order):
        name = f"{mixed_name} · {html.escape(label)}" if label else mixed_name
        traces.append(go.Scatter(
            x=xy[members, 0], y=xy[members, 1], mode="markers+text", name=name,
            text=[ids[i] for i in members], textposition=[spots[i] for i in members], textfont={"size": size - 1},
            marker={"size": 15, **markers[label], "line": {"width": 1, "color": "white"}},
            customdata=[hover[i] for i in members],
            hovertemplate="%{text}: %{customdata}<extra></extra>",
        ))
    style = style_layout(title, large=large, height=height)
    axes = ({"xaxis": {"title": {"text": f"PC1 ({_pct(explained[0])})"}},
             "yaxis": {"title": {"text": f"PC2 ({_pct(explained[1])})"}}} if explained is not None else {})
    return go.Figure(data=traces, layout={
        **style, **axes, "legend": {**style["legend"], "orientation": "h", "yanchor": "top", "y": -0.14, "x": 0},
        "margin": {**style["margin"], "b": 110}})


def pair_cosine_bars(layer_names: Sequence[str], layer_cosines: Sequence[float] | np.ndarray, mixed_cosine: float, *,
                     mixed_name: str, axis_title: str, title: str | None = None, large: bool = False,
                     height: int = 420) -> go.Figure:
    """Two occurrences of a word: their cosine in each layer (grey) and in the current mix (coloured), the one
    thing two points show truthfully (a 2-D projection centred on them puts them at mirrored ends). The chart
    sits in the page's narrower column: its title wraps, and each layer's name goes under its number."""
    size = 20 if large else 15
    values = [float(c) for c in layer_cosines] + [float(mixed_cosine)]
    names = [f"{j}<br>{re.sub(r' (?=[A-Za-z])', '<br>', html.escape(nm))}" for j, nm in enumerate(layer_names)]
    return go.Figure(go.Bar(
        x=names + [f"<b>{html.escape(mixed_name)}</b>"], y=values, text=[f"{v:.2f}" for v in values],
        textposition="outside", cliponaxis=False, marker={"color": ["#b0b0b0"] * len(layer_names) + [PALETTE[1]]},
        hovertemplate="%{x}: cos = %{y:.3f}<extra></extra>",
    ), layout={**style_layout(title and wrap_note(title, size + 2, 380), large=large, height=height),
               "yaxis": {"range": [min(0.0, min(values) - 0.1), 1.1], "title": {"text": axis_title}},
               "xaxis": {"type": "category", "tickangle": 0}})


def elmo_diagram(top: Sequence[str], middle: Sequence[str], bottom: str, weights: Sequence[str],
                 *, title: str | None = None, large: bool = False, height: int = 430) -> go.Figure:
    """2L+1 representations (top row) → L+1 mixing terms (middle) → the weighted sum (bottom).

    ``top`` has 2L+1 labels: x_k, then forward/backward of each layer; ``middle`` has L+1 labels;
    ``weights`` the L+1 arrow labels (s_j). Labels may use plotly's <b>/<sub>/<br> markup (they are
    constant strings of the app, never user text).
    """
    size = 19 if large else 15
    n_top, n_mid = len(top), len(middle)
    fig = go.Figure()
    top_x = np.linspace(0.08, 0.92, n_top)
    mid_x = np.linspace(0.18, 0.82, n_mid)
    y_top, y_mid, y_bot = 0.86, 0.50, 0.10
    box_w_top, box_w_mid, box_h = 0.074, 0.12, 0.085

    def box(x, y, w, colour, fill):
        fig.add_shape(type="rect", x0=x - w, x1=x + w, y0=y - box_h, y1=y + box_h,
                      line={"color": colour, "width": 2}, fillcolor=fill, layer="below")

    def arrow(x0, y0, x1, y1, text="", colour="#555"):
        fig.add_annotation(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                           showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=2, arrowcolor=colour)
        if text:
            fig.add_annotation(x=(x0 + x1) / 2, y=(y0 + y1) / 2, text=text, showarrow=False,
                               font={"size": size, "color": colour}, bgcolor="white")

    # which top boxes feed which middle box: x_k → h_0; (fwd_j, bwd_j) → h_j
    feeds = {0: [0]}
    for j in range(1, n_mid):
        feeds[j] = [2 * j - 1, 2 * j]
    for i, (x, label) in enumerate(zip(top_x, top)):
        colour = PALETTE[0] if i == 0 else PALETTE[2 if i % 2 else 3]
        box(x, y_top, box_w_top, colour, "#f7f9fc")
        fig.add_annotation(x=x, y=y_top, text=label, showarrow=False, font={"size": size, "color": TEXT_COLOUR})
    for j, (x, label) in enumerate(zip(mid_x, middle)):
        box(x, y_mid, box_w_mid, PALETTE[4], "#f5f0fa")
        fig.add_annotation(x=x, y=y_mid, text=label, showarrow=False, font={"size": size, "color": TEXT_COLOUR})
        for i in feeds.get(j, []):
            if i < n_top:
                arrow(top_x[i], y_top - box_h, x, y_mid + box_h)
        arrow(x, y_mid - box_h, 0.5, y_bot + box_h, weights[j] if j < len(weights) else "", PALETTE[1])
    fig.add_shape(type="rect", x0=0.28, x1=0.72, y0=y_bot - box_h, y1=y_bot + box_h,
                  line={"color": PALETTE[1], "width": 3}, fillcolor="#fdf1f1", layer="below")
    fig.add_annotation(x=0.5, y=y_bot, text=bottom, showarrow=False, font={"size": size + 2, "color": TEXT_COLOUR})
    base_layout(fig, title, large=large, height=height)
    fig.update_xaxes(visible=False, range=[0, 1], fixedrange=True)
    fig.update_yaxes(visible=False, range=[0, 1], fixedrange=True)
    fig.update_layout(showlegend=False, margin={"l": 10, "r": 10, "t": 50 if title else 10, "b": 10})
    return fig
