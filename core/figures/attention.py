"""Figures of the attention page: attention matrices as heatmaps (one head, a grid of every head, several layers)
and rows as bars; arrays and strings in, ``go.Figure`` out.

Every token label may come from the user and is passed through :func:`esc` before it reaches plotly. Token axes
use integer positions with ``ticktext`` (a sentence may repeat a character, and a categorical axis would merge the
repeats), horizontal labels (``tickangle=0``) and square cells.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .grid import subplot_grid
from .style import MAX_FIGURE_WIDTH, PALETTE, esc, font_size, style_layout, text_width

HEATMAP_SCALE = "Blues"


def _pair_labels(safe: Sequence[str]) -> np.ndarray:
    """customdata of an (n, n) map: [row token, column token] per cell, for the hover text.

    A numpy string array: plotly validates nested lists element by element (4× slower).
    """
    return np.array([[[row, col] for col in safe] for row in safe], dtype=str)


def _cell_px(labels: Sequence[str], font: int, n: int, max_width: int = MAX_FIGURE_WIDTH - 260) -> tuple[int, int]:
    """Cell size (px) that fits the widest horizontal label, and the step for thinning x labels."""
    widest = max((text_width(label, font) for label in labels), default=font)
    cell = int(max(font * 1.9, min(widest + 10, 96)))
    if n * cell > max_width:  # long sentences: smaller cells, every k-th label on the x axis
        cell = max(12, max_width // n)
    step = max(1, math.ceil((widest + 8) / cell))
    return cell, step


def attention_heatmap(matrix: np.ndarray, labels: Sequence[str], *, title: str | None = None,
                      x_title: str = "", y_title: str = "", highlight_row: int | None = None,
                      large: bool = False, hover_template: str | None = None,
                      max_height: int | None = None) -> go.Figure:
    """One (n, n) attention matrix: row = query (from), column = key (to), square cells. ``max_height``:
    the figure's height at most (the cells shrink); x labels too wide for their cell alternate between
    two rows, so that every column keeps its label."""
    m = np.asarray(matrix, dtype=float)
    n = m.shape[0]
    if m.shape != (n, n) or len(labels) != n:
        raise ValueError(f"matrix {m.shape} and {len(labels)} labels do not match")
    font = font_size(large)
    safe = [esc(label) for label in labels]
    cell, step = _cell_px(labels, font, n)
    top = 60 if title else 20
    bottom = int(font * 2.2 + (font * 2 if x_title else 0) + 10)
    if max_height is not None:
        cell = max(12, min(cell, (max_height - top - bottom - font) // n))  # a line more for a 2nd label row
        step = max(1, math.ceil((max(text_width(label, font) for label in labels) + 8) / cell))
    if step == 2:  # two rows of labels: each has two cells' width
        xtext = [s if i % 2 == 0 else "<br>" + s for i, s in enumerate(safe)]
        bottom += int(font * 1.3)
    else:
        xtext = [s if i % step == 0 else "" for i, s in enumerate(safe)]
    custom = _pair_labels([f"{i}: {label}" for i, label in enumerate(safe)])
    left = int(max(text_width(label, font) for label in labels) + 24 + (font * 2 if y_title else 0))
    layout = {
        **style_layout(title, large=large),
        "width": left + n * cell + 110, "height": top + n * cell + bottom,
        "margin": {"l": left, "r": 100, "t": top, "b": bottom}, "plot_bgcolor": "white",
        "xaxis": {"tickvals": list(range(n)), "ticktext": xtext, "tickangle": 0, "side": "bottom", "showgrid": False,
                  "title": {"text": x_title}, "constrain": "domain", "range": [-0.5, n - 0.5],
                  "tickfont": {"size": font}},
        "yaxis": {"tickvals": list(range(n)), "ticktext": safe, "autorange": "reversed", "showgrid": False,
                  "title": {"text": y_title}, "scaleanchor": "x", "scaleratio": 1, "constrain": "domain",
                  "tickfont": {"size": font}},
    }
    if highlight_row is not None and 0 <= highlight_row < n:
        layout["shapes"] = [{"type": "rect", "x0": -0.5, "x1": n - 0.5, "y0": highlight_row - 0.5,
                             "y1": highlight_row + 0.5, "line": {"color": "#d62728", "width": 3},
                             "fillcolor": "rgba(0,0,0,0)"}]
    return go.Figure(go.Heatmap(
        z=m, x=list(range(n)), y=list(range(n)), colorscale=HEATMAP_SCALE, zmin=0, customdata=custom,
        hovertemplate=hover_template or "%{customdata[0]} → %{customdata[1]}<br>%{z:.3f}<extra></extra>",
        colorbar={"thickness": 16, "len": 0.9},
    ), layout=layout)


def attention_grid(att: np.ndarray, labels: Sequence[str], *, layer_names: Sequence[str],
                   head_names: Sequence[str], title: str | None = None, large: bool = False,
                   labelled: bool = False) -> go.Figure:
    """Every layer (rows) × head (columns) as a small heatmap; each has its own colour scale. ``labelled`` (for a
    file that is printed): the tokens on both axes of every map (rows: from, columns: to) and one colour scale
    for all maps, 0 to the largest weight, with its colour bar."""
    a = np.asarray(att, dtype=float)
    layers, heads, n, _ = a.shape
    safe = [esc(label) for label in labels]
    size = int(max(90, min(280, (MAX_FIGURE_WIDTH - 120) / heads - 14)))
    h_spacing, v_spacing = min(0.03, 0.3 / heads), min(0.06, 0.4 / layers)
    label_room = 0
    if labelled:  # every map's labels need their own room between the maps
        size = max(size, 12 * n + 40)  # a 10-px label per row and column
        label_room = int(max((text_width(label, 10) for label in labels), default=10) + 10)
        gap_x, gap_y = label_room + 16, label_room + 40
        h_spacing = gap_x / (heads * size + (heads - 1) * gap_x)
        v_spacing = gap_y / (layers * size + (layers - 1) * gap_y)
    titles = [f"{layer_names[l]} · {head_names[h]}" for l in range(layers) for h in range(heads)]
    grid = subplot_grid(layers, heads, titles=[esc(t) for t in titles], h_spacing=h_spacing,
                        v_spacing=v_spacing, title_size=font_size(large) - 2)
    custom = _pair_labels(safe)
    traces = [go.Heatmap(
        z=a[cell.row - 1, cell.col - 1], customdata=custom,
        hovertemplate=f"{esc(name)}<br>%{{customdata[0]}} → %{{customdata[1]}}: %{{z:.3f}}<extra></extra>",
        xaxis=cell.x, yaxis=cell.y,
        **({"coloraxis": "coloraxis"} if labelled else {"colorscale": HEATMAP_SCALE, "zmin": 0, "showscale": False}),
    ) for cell, name in zip(grid.cells, titles)]
    ticks = {"showticklabels": labelled, "tickvals": list(range(n)), "ticktext": safe, "tickfont": {"size": 10}} \
        if labelled else {"showticklabels": False}
    grid.axes(x={**ticks, "showgrid": False, "zeroline": False, "constrain": "domain"},
              y={**ticks, "showgrid": False, "zeroline": False, "autorange": "reversed", "constrain": "domain"})
    for cell in grid.cells:  # square small maps
        grid.layout[cell.yaxis]["scaleanchor"] = cell.x
    top = 70 if title else 40
    if labelled:
        return go.Figure(data=traces, layout={
            **style_layout(title, large=large), **grid.layout,
            "coloraxis": {"colorscale": HEATMAP_SCALE, "cmin": 0, "cmax": float(a.max()) if a.size else 1.0,
                          "colorbar": {"title": {"text": "attention weight"}, "thickness": 14}},
            "width": heads * size + (heads - 1) * (label_room + 16) + label_room + 150,
            "height": layers * size + (layers - 1) * (label_room + 40) + label_room + top + 20,
            "margin": {"l": label_room + 30, "r": 120, "t": top, "b": label_room + 20}})
    return go.Figure(data=traces, layout={
        **style_layout(title, large=large), **grid.layout,
        "width": heads * (size + 16) + 60, "height": layers * (size + 40) + top + 20,
        "margin": {"l": 30, "r": 30, "t": top, "b": 20}})


def layer_maps(mats: np.ndarray, labels: Sequence[str], *, titles: Sequence[str], title: str | None = None,
               large: bool = False, cols: int = 4, hover_prefix: str = "") -> go.Figure:
    """One (n, n) map per layer (head average, rollout ...), ``cols`` per row, labels when they fit."""
    m = np.asarray(mats, dtype=float)
    count, n, _ = m.shape
    font = font_size(large)
    tick_font = font - 1
    safe = [esc(label) for label in labels]
    widest = max(text_width(label, tick_font) for label in labels)
    left = int(widest + 20)

    def map_size(c: int) -> int:
        return int((MAX_FIGURE_WIDTH - left - 40) / c - 30)

    # as many maps per row as still leave room for horizontal labels (at most ``cols``)
    cols = min(cols, count)
    while cols > 2 and (map_size(cols) / n < widest + 6 or count % cols):
        cols -= 1
    rows = math.ceil(count / cols)
    size = map_size(cols)
    show_x = widest + 4 <= size / n
    show_y = n * (tick_font + 2) <= size
    grid = subplot_grid(rows, cols, count=count, titles=[esc(t) for t in titles], h_spacing=0.06,
                        v_spacing=min(0.12, 0.4 / rows), title_size=font)
    custom = _pair_labels(safe)
    traces = [go.Heatmap(
        z=m[k], colorscale=HEATMAP_SCALE, zmin=0, showscale=False, customdata=custom,
        hovertemplate=f"{esc(hover_prefix)}{esc(titles[k])}<br>%{{customdata[0]}} → %{{customdata[1]}}: "
                      "%{z:.3f}<extra></extra>",
        xaxis=cell.x, yaxis=cell.y,
    ) for k, cell in enumerate(grid.cells)]
    ticks = {"tickvals": list(range(n)), "ticktext": safe, "showgrid": False, "tickfont": {"size": tick_font},
             "zeroline": False, "constrain": "domain"}
    grid.axes(x={**ticks, "tickangle": 0, "showticklabels": show_x},
              y={**ticks, "showticklabels": False, "autorange": "reversed"})
    for cell in grid.cells:
        grid.layout[cell.yaxis]["scaleanchor"] = cell.x
        if show_y and cell.col == 1:  # token labels on the left of each row of maps only
            grid.layout[cell.yaxis]["showticklabels"] = True
    top = 70 if title else 40
    return go.Figure(data=traces, layout={
        **style_layout(title, large=large), **grid.layout,
        "width": MAX_FIGURE_WIDTH, "height": rows * (size + 60) + top,
        "margin": {"l": left if show_y else 20, "r": 20, "t": top, "b": 30}})


def row_bars(rows: np.ndarray, labels: Sequence[str], *, layer_names: Sequence[str], title: str | None = None,
             y_title: str = "", highlight: int | None = None, large: bool = False) -> go.Figure:
    """Where one token looks: its attention row (layers, n) as one bar chart per layer, stacked."""
    r = np.asarray(rows, dtype=float)
    count, n = r.shape
    font = font_size(large)
    safe = [esc(label) for label in labels]
    grid = subplot_grid(count, 1, titles=[esc(x) for x in layer_names], v_spacing=min(0.08, 0.5 / count),
                        title_size=font)
    cell_px, step = _cell_px(labels, font, n, max_width=MAX_FIGURE_WIDTH - 120)
    colours = [PALETTE[1] if j == highlight else PALETTE[0] for j in range(n)]
    traces = []
    for k, cell in enumerate(grid.cells):
        traces.append(go.Bar(
            x=list(range(n)), y=r[k], marker_color=colours, customdata=safe, showlegend=False,
            hovertemplate=f"{esc(layer_names[k])}<br>→ %{{customdata}}: %{{y:.3f}}<extra></extra>",
            xaxis=cell.x, yaxis=cell.y,
        ))
        grid.layout[cell.yaxis].update(range=[0, max(1e-6, float(r[k].max()) * 1.1)],
                                       title={"text": y_title if k == count // 2 else ""})
        # one shared token axis: every layer's x axis follows the bottom one, which alone shows the labels
        grid.layout[cell.xaxis].update(
            tickvals=list(range(n)), ticktext=[s if i % step == 0 else "" for i, s in enumerate(safe)], tickangle=0,
            showticklabels=cell.row == count, matches=None if cell.row == count else grid.cells[-1].x)
    grid.layout[grid.cells[-1].xaxis]["tickfont"] = {"size": font}
    top = 70 if title else 40
    return go.Figure(data=traces, layout={
        **style_layout(title, large=large), **grid.layout,
        "width": int(min(MAX_FIGURE_WIDTH, max(1000, n * cell_px + 140))), "height": top + count * (font * 9) + 60,
        "margin": {"l": 80, "r": 20, "t": top, "b": 50}})
