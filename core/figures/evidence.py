"""Figures of the evidence page (layer-wise experiments): numbers in, ``go.Figure`` out.

All translated text (titles, axis names, legend names) is passed in by the page; nothing here
translates. Model names, words and layer names are escaped before they reach plotly.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import PALETTE, STATIC_COLOUR, base_layout, esc, font_size, titled_axis

KIND_COLOURS = {"elmo": PALETTE[1], "bert": PALETTE[0], "static": STATIC_COLOUR}
BASELINE_COLOURS = ("#6b7280", "#9467bd", "#8c564b", "#ff7f0e")


@dataclass
class Series:
    """One model's values over its layers (``None`` = not measured); ``low`` / ``high`` (optional):
    each value's 95 % interval, drawn as error bars."""

    name: str
    layer_names: Sequence[str]
    values: Sequence[float | None]
    kind: str = "bert"
    dash: str = "solid"
    low: Sequence[float | None] | None = None
    high: Sequence[float | None] | None = None


@dataclass
class Estimate:
    """One measured value with its 95 % interval; rows of one ``group`` share a colour and a legend entry."""

    label: str
    value: float
    low: float
    high: float
    group: str = ""


def _colour(series: Series, index: int) -> str:
    return KIND_COLOURS.get(series.kind, PALETTE[(index + 2) % len(PALETTE)])


def _layer_axis(fig: go.Figure, series: Sequence[Series], xaxis_title: str, **where) -> None:
    longest = max((len(s.layer_names) for s in series), default=1)
    fig.update_xaxes(tickmode="array", tickvals=list(range(longest)), ticktext=[str(i) for i in range(longest)],
                     range=[-0.3, longest - 0.7], **titled_axis(xaxis_title), **where)


def _error_bars(values, low, high, colour: str) -> dict:
    """Asymmetric error bars from interval ends (a missing end draws no bar)."""
    def gap(a, b):
        return [0.0 if x is None or y is None else max(float(x) - float(y), 0.0) for x, y in zip(a, b)]
    return {"type": "data", "symmetric": False, "array": gap(high, values), "arrayminus": gap(values, low),
            "color": colour, "thickness": 2, "width": 6}


def _trace(series: Series, index: int, *, percent: bool, showlegend: bool = True) -> go.Scatter:
    fmt = ".1%" if percent else ".3f"
    colour = _colour(series, index)
    single = len(series.values) == 1
    error = None if series.low is None or series.high is None else _error_bars(series.values, series.low,
                                                                               series.high, colour)
    return go.Scatter(
        error_y=error,
        x=list(range(len(series.values))), y=[None if v is None else float(v) for v in series.values],
        mode="markers" if single else "lines+markers", name=esc(series.name), legendgroup=esc(series.name),
        showlegend=showlegend,
        line={"color": colour, "width": 4, "dash": series.dash},
        marker={"size": 16 if single else 12, "color": colour, "symbol": "diamond" if single else "circle"},
        customdata=[esc(n) for n in series.layer_names],
        hovertemplate=f"{esc(series.name)}<br>%{{customdata}}: %{{y:{fmt}}}<extra></extra>",
    )


def layer_curves(series: Sequence[Series], *, title: str | None = None, xaxis_title: str = "layer",
                 yaxis_title: str = "", baselines: Sequence[tuple[str, float]] = (), percent: bool = True,
                 y_range: tuple[float, float] | None = None, large: bool = False, height: int = 600) -> go.Figure:
    """Accuracy (or any score) per layer, one line per model; baselines as dashed horizontal lines.

    ``baselines``: ``[(label, value)]``; the label is drawn at the right end of its line.
    """
    font = font_size(large)
    fig = go.Figure()
    for i, s in enumerate(series):
        fig.add_trace(_trace(s, i, percent=percent))
    for j, (label, value) in enumerate(baselines):
        if value is None:
            continue
        colour = BASELINE_COLOURS[j % len(BASELINE_COLOURS)]
        # a legend entry (a line trace) plus the drawn line, so the label never collides with data
        fig.add_hline(y=float(value), line={"color": colour, "width": 2, "dash": "dash"})
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=esc(f"{label}: {value:.1%}" if percent
                                                                            else f"{label}: {value:.3f}"),
                                 line={"color": colour, "width": 2, "dash": "dash"}, hoverinfo="skip"))
    _layer_axis(fig, series, xaxis_title)
    if y_range is None:  # every curve, interval and baseline inside the frame
        shown = [float(v) for s in series for part in (s.values, s.low or (), s.high or ()) for v in part
                 if v is not None]
        shown += [float(v) for _, v in baselines if v is not None]
        if shown:
            pad = max(0.02, 0.08 * (max(shown) - min(shown)))
            y_range = (min(shown) - pad, max(shown) + pad)
    fig.update_yaxes(tickformat=".0%" if percent else ".2f", range=y_range, **titled_axis(yaxis_title))
    base_layout(fig, title, large=large, height=height)
    # legend below the plot: beside it, its long baseline names would squeeze the curves on a 1280-px screen.
    # Anchored to the figure's bottom edge (yref "container"), not a fraction of the plot's height below it:
    # in a short figure that fraction is fewer pixels than the axis title needs, and the two overlapped
    fig.update_layout(legend={"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": 0,
                              "yanchor": "bottom", "font": {"size": font}}, margin={"r": 20, "b": 140})
    return fig


def specificity_panels(panels: Sequence[tuple[str, Sequence[Series]]], *, title: str | None = None,
                       xaxis_title: str = "layer", large: bool = False, height: int = 520) -> go.Figure:
    """Side-by-side panels (self-similarity, intra-sentence, anisotropy), one line per model each."""
    font = font_size(large)
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[esc(name) for name, _ in panels],
                        horizontal_spacing=0.07)
    for col, (_, series) in enumerate(panels, start=1):
        for i, s in enumerate(series):
            fig.add_trace(_trace(s, i, percent=False, showlegend=(col == 1)), row=1, col=col)
        _layer_axis(fig, series, xaxis_title, row=1, col=col)
        fig.add_hline(y=0, line={"color": "#9ca3af", "width": 1}, row=1, col=col)
    fig.update_yaxes(tickformat=".2f")
    base_layout(fig, title, large=large, height=height)
    fig.update_annotations(font_size=font + 1, yshift=8)
    fig.update_layout(legend={"orientation": "h", "x": 0, "y": -0.3, "xanchor": "left", "yanchor": "top",
                              "font": {"size": font}})
    fig.update_layout(margin={"b": 130, "t": 110 if title else 60})
    return fig


def word_heatmap(words: Sequence[str], layer_names: Sequence[str], values: Sequence[Sequence[float]], *,
                 title: str | None = None, colorbar_title: str = "", zrange: tuple[float, float] | None = (0.0, 1.0),
                 large: bool = False) -> go.Figure:
    """Rows = words, columns = layers, colour = value (e.g. self-similarity), numbers in the cells.

    ``zrange`` fixes the colour scale (None: from the data)."""
    font = font_size(large)
    z = [[None if v is None else float(v) for v in row] for row in values]
    labels = [esc(w) for w in words]
    zmin, zmax = zrange if zrange is not None else (None, None)
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(len(layer_names))), y=list(range(len(words))), colorscale="Blues", zmin=zmin, zmax=zmax,
        text=[[("" if v is None else f"{v:.2f}") for v in row] for row in z], texttemplate="%{text}",
        textfont={"size": font - 2}, customdata=[[esc(n) for n in layer_names] for _ in words],
        hovertemplate="%{customdata}<br>%{z:.3f}<extra></extra>",
        colorbar={"title": {"text": esc(colorbar_title)}},
    ))
    fig.update_xaxes(tickvals=list(range(len(layer_names))), ticktext=[esc(n) for n in layer_names], side="top")
    fig.update_yaxes(tickvals=list(range(len(words))), ticktext=labels, autorange="reversed",
                     tickfont={"size": font + 1})
    top = 120 if title else 70
    base_layout(fig, title, large=large, height=top + 40 + (font + 20) * max(len(words), 3))
    fig.update_layout(margin={"t": top})
    return fig


def _lighten(hex_colour: str, amount: float = 0.6) -> str:
    """``hex_colour`` mixed with white (``amount`` = share of white)."""
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(c + (255 - c) * amount):02x}" for c in (r, g, b))


def preset_bars(layer_labels: Sequence[str], groups: Sequence[tuple[str, Sequence[float], str]], *,
                title: str | None = None, yaxis_title: str = "s", large: bool = False, height: int = 460,
                ranges: Sequence[tuple[Sequence[float], Sequence[float]] | None] = ()) -> go.Figure:
    """Grouped bars of layer weights: ``groups`` = ``[(legend name, weights, pattern ('' or '/'))]``.

    ``ranges[i]`` (optional, one per group): ``(low, high)`` per layer, drawn as an error bar around
    the bar, e.g. the spread of learned weights over seeds; such bars carry no value label (the error
    bar would run through it), their values are in the hover text.
    """
    fig = go.Figure()
    for i, (name, weights, pattern) in enumerate(groups):
        colour = (PALETTE[2], PALETTE[3])[i % 2]  # syntax green, semantics orange; pattern = lecture
        fill = colour if not pattern else _lighten(colour)
        spread = ranges[i] if i < len(ranges) else None
        error = None if spread is None else {
            "type": "data", "symmetric": False, "color": "#111827", "thickness": 2, "width": 6,
            "array": [max(float(h) - float(w), 0.0) for h, w in zip(spread[1], weights)],
            "arrayminus": [max(float(w) - float(lo), 0.0) for lo, w in zip(spread[0], weights)]}
        fig.add_trace(go.Bar(
            x=[esc(label) for label in layer_labels], y=[float(w) for w in weights], name=esc(name),
            marker={"color": fill, "pattern": {"shape": pattern, "fgcolor": colour},
                    "line": {"color": colour, "width": 2}}, error_y=error,
            text=[f"{float(w):.2f}" for w in weights] if error is None else None, textposition="outside",
            textfont={"color": "#111827"},
            hovertemplate=f"{esc(name)}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
        ))
    fig.update_yaxes(range=[0, 1.1], tickformat=".1f", **titled_axis(yaxis_title))
    base_layout(fig, title, large=large, height=height)
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.18, "x": 0})
    return fig


def interval_dots(rows: Sequence[Estimate], *, title: str | None = None, xaxis_title: str = "",
                  reference: Sequence[tuple[str, float]] = (), percent: bool = True, large: bool = False,
                  height: int | None = None) -> go.Figure:
    """Values with their 95 % intervals side by side: one row per estimate (first on top), a dot and a
    horizontal error bar; two rows whose bars overlap are not told apart by the data.

    ``reference``: ``[(label, value)]`` drawn as dashed vertical lines (e.g. a lookup baseline).
    """
    font = font_size(large)
    fmt = ".1%" if percent else ".3f"
    fig = go.Figure()
    groups = list(dict.fromkeys(r.group for r in rows))
    for g, group in enumerate(groups):
        mine = [r for r in rows if r.group == group]
        colour = PALETTE[g % len(PALETTE)]
        fig.add_trace(go.Scatter(
            x=[float(r.value) for r in mine], y=[esc(r.label) for r in mine], mode="markers+text", name=esc(group),
            showlegend=bool(group) and len(groups) > 1,
            marker={"size": 14, "color": colour},
            error_x=_error_bars([r.value for r in mine], [r.low for r in mine], [r.high for r in mine], colour),
            text=[format(float(r.value), fmt) for r in mine], textposition="top center", cliponaxis=False,
            textfont={"size": font - 1, "color": "#111827"},
            customdata=[[float(r.low), float(r.high)] for r in mine],
            hovertemplate=f"%{{y}}: %{{x:{fmt}}} (%{{customdata[0]:{fmt}}}–%{{customdata[1]:{fmt}}})<extra></extra>",
        ))
    for j, (label, value) in enumerate(reference):
        colour = BASELINE_COLOURS[j % len(BASELINE_COLOURS)]
        fig.add_vline(x=float(value), line={"color": colour, "width": 2, "dash": "dash"})
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=esc(f"{label}: {format(float(value), fmt)}"),
                                 line={"color": colour, "width": 2, "dash": "dash"}, hoverinfo="skip"))
    ends = [float(v) for r in rows for v in (r.low, r.high)] + [float(v) for _, v in reference]
    pad = max(0.01, 0.08 * (max(ends) - min(ends))) if ends else 0.0
    fig.update_xaxes(title_text=xaxis_title, tickformat=".0%" if percent else ".2f",
                     range=[min(ends) - pad, max(ends) + pad] if ends else None)
    fig.update_yaxes(autorange="reversed", tickfont={"size": font})
    # the legend sits a fixed distance below the tick labels (and the axis title), whatever the height
    below = 2 * font + (2 * font if xaxis_title else 0)
    top, bottom = (90 if title else 40), below + 2 * font + 20
    height = height or top + bottom + (font + 40) * max(len(rows), 2)
    base_layout(fig, title, large=large, height=height)
    fig.update_layout(margin={"t": top, "b": bottom},
                      legend={"orientation": "h", "x": 0, "y": -below / (height - top - bottom), "xanchor": "left",
                              "yanchor": "top", "font": {"size": font}})
    return fig
