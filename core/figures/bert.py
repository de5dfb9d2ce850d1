"""Figures of the two BERT pages (fill-mask, attention): arrays and strings in, ``go.Figure`` out.

Every string that may come from the user (tokens, words, sentences) is passed through
:func:`esc` before it reaches plotly, which renders a subset of HTML in labels and hover text.
All translated UI text (titles, axis names) is passed in by the page; nothing here translates.

Token axes use integer positions with ``ticktext`` (a sentence may repeat a character, and a
categorical axis would merge the repeats), horizontal labels (``tickangle=0``) and square cells.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .grid import subplot_grid
from .style import PALETTE, esc, style_layout, titled_axis

MAX_FIGURE_WIDTH = 1400  # px: the main area of a 1920-wide screen with the sidebar open
ROW_NAME_PX = 280  # a token strip's row name wider than this goes on two lines
# a bar chart's axis title wider than this goes on more lines: beside the characters on the projector, the whole
# words' chart has a narrow column, and plotly neither wraps a title nor keeps it inside the figure
AXIS_TITLE_PX = 300
HEATMAP_SCALE = "Blues"


def _font(large: bool) -> int:
    return 20 if large else 15


def text_width(label: str, font_px: float) -> float:
    """Approximate rendered width in px: CJK/fullwidth characters are one em, others ~0.6 em."""
    width = 0.0
    for ch in str(label):
        wide = unicodedata.east_asian_width(ch) in ("W", "F") or ord(ch) >= 0x1F000
        width += font_px * (1.0 if wide else 0.62)
    return width


_PIECE = re.compile(r"[\u3000-\u9fff\uff00-\uffef]|[^\s\u3000-\u9fff\uff00-\uffef]+\s*|\s+")
_CLOSING = "）」』，。、：；！？)"  # never the first character of a line


def wrap_note(text: str, font_px: float, max_px: float) -> str:
    """``text`` (plotly markup, lines split by ``<br>``) broken between words, or between CJK characters,
    so that no line is wider than ``max_px``."""
    lines = []
    for line in text.split("<br>"):
        current = ""
        for piece in _PIECE.findall(line):
            if (current.strip() and piece[0] not in _CLOSING
                    and text_width((current + piece).rstrip(), font_px) > max_px):
                lines.append(current.rstrip())
                current = piece.lstrip()
            else:
                current += piece
        lines.append(current.rstrip())
    return "<br>".join(lines)


# ---------------------------------------------------------------------------------------------
# fill-mask
# ---------------------------------------------------------------------------------------------
def fill_replay_cells(masked: str, mask_token: str, steps: Sequence, upto: int) -> tuple[list[str], list[str]]:
    """The sentence after ``upto`` steps of iterative filling, one cell per character or mask.

    Kinds: "text" (typed by the user), "open" (a [MASK] still open), "filled" (filled in an
    earlier step), "new" (filled in step ``upto``). ``steps`` are ``core.fillmask.iterative.FillStep``s,
    whose ``filled_mask`` counts among the masks still open at that step.
    """
    parts = masked.split(mask_token)
    open_slots = list(range(len(parts) - 1))
    filled: dict[int, tuple[str, int]] = {}
    for step in steps[:upto]:
        slot = open_slots.pop(step.filled_mask)
        token = step.token[2:] if step.token.startswith("##") else step.token
        filled[slot] = (token, step.step)
    cells, kinds = [], []
    for k, part in enumerate(parts):
        for ch in part:
            cells.append("␣" if ch.isspace() else ch)
            kinds.append("text")
        if k < len(parts) - 1:
            if k in filled:
                token, when = filled[k]
                cells.append(token)
                kinds.append("new" if when == upto else "filled")
            else:
                cells.append(mask_token)
                kinds.append("open")
    return cells, kinds


def topk_bars(slots: Sequence[tuple[str, Sequence[str], Sequence[float]]], *, title: str | None = None,
              xaxis_title: str = "P", large: bool = False, cols: int | None = None) -> go.Figure:
    """One horizontal bar chart per mask: ``slots`` = [(subplot title, tokens, probabilities)]."""
    if not slots:
        raise ValueError("slots must contain at least one mask")
    font = _font(large)
    cols = cols or min(len(slots), 4)
    rows = math.ceil(len(slots) / cols)
    k = max(len(tokens) for _, tokens, _ in slots)
    axis_title = wrap_note(xaxis_title, font, AXIS_TITLE_PX)
    grid = subplot_grid(rows, cols, count=len(slots), titles=[esc(name) for name, _, _ in slots],
                        h_spacing=0.09, v_spacing=min(0.12, 0.35 / rows) if rows > 1 else 0.1, title_size=font + 1)
    traces = []
    for cell, (_, tokens, probs) in zip(grid.cells, slots):
        probs = [float(p) for p in probs]
        labels = [esc(tok) for tok in tokens]
        traces.append(go.Bar(
            x=probs, y=list(range(len(tokens))), orientation="h", marker_color=PALETTE[0],
            text=[f"{p:.1%}" if p >= 0.001 else f"{p:.1e}" for p in probs], textposition="auto",
            customdata=labels, hovertemplate="%{customdata}: %{x:.4f}<extra></extra>", showlegend=False,
            xaxis=cell.x, yaxis=cell.y,
        ))
        grid.layout[cell.yaxis].update(tickvals=list(range(len(tokens))), ticktext=labels, autorange="reversed",
                                       tickfont={"size": font + 2})
        grid.layout[cell.xaxis].update(range=[0, max(max(probs, default=0.0) * 1.15, 1e-6)], tickformat=".0%")
        if cell.row == rows:
            grid.layout[cell.xaxis].update(titled_axis(axis_title))
    height = rows * (70 + (font + 16) * k) + 60 + axis_title.count("<br>") * round(1.3 * font)  # the title's lines
    return go.Figure(data=traces, layout={**style_layout(title, large=large, height=height), **grid.layout})


def candidate_bars(words: Sequence[str], scores: Sequence[float], *, title: str | None = None,
                   xaxis_title: str = "P", large: bool = False) -> go.Figure:
    """User candidates and their probability (product over their tokens), on a log axis."""
    font = _font(large)
    scores = [max(float(s), 1e-30) for s in scores]
    labels = [esc(w) for w in words]
    low = math.floor(math.log10(min(scores))) - 1 if scores else -6
    high = math.log10(max(scores)) + 0.8 if scores else 0
    return go.Figure(go.Bar(
        x=scores, y=list(range(len(words))), orientation="h",
        marker_color=[PALETTE[i % len(PALETTE)] for i in range(len(words))],
        text=[f"{s:.2e}" for s in scores], customdata=labels,
        textposition="auto", cliponaxis=False,  # inside a long bar: outside, a phone's narrow plot cut it off
        hovertemplate="%{customdata}: %{x:.3e}<extra></extra>",
    ), layout={
        **style_layout(title, large=large, height=110 + (font + 26) * max(len(words), 1)),
        "yaxis": {"tickvals": list(range(len(words))), "ticktext": labels, "autorange": "reversed",
                  "tickfont": {"size": font + 2}},
        "xaxis": {"type": "log", "title": {"text": xaxis_title}, "range": [low, min(high, 0.3)], "dtick": 1,
                  "exponentformat": "power", "showexponent": "all"},
    })


def token_strip(tracks: Sequence[Sequence[str]], kinds: Sequence[Sequence[str]], *,
                colours: dict[str, str], kind_names: dict[str, str], track_names: Sequence[str],
                hover: Sequence[Sequence[str]] | None = None, per_line: int = 24, title: str | None = None,
                large: bool = False) -> go.Figure:
    """Sentences as rows of coloured cells, one cell per token.

    ``tracks``: one or more aligned rows of cell texts (e.g. original / what the model sees);
    ``kinds``: a kind per cell (its colour, from ``colours``; the legend uses ``kind_names``).
    Long sentences wrap every ``per_line`` cells; each wrapped line repeats all tracks.
    """
    if not tracks or any(len(t) != len(tracks[0]) for t in tracks) or len(kinds) != len(tracks):
        raise ValueError("tracks and kinds must be aligned rows of equal length")
    n = len(tracks[0])
    if n == 0:
        raise ValueError("nothing to draw")
    font = _font(large)
    order = list(colours)
    code = {kind: i for i, kind in enumerate(order)}
    lines = math.ceil(n / per_line)
    width_cells = min(n, per_line)
    z, text, custom, ylabels = [], [], [], []
    for line in range(lines):
        for t_index, (track, track_kinds) in enumerate(zip(tracks, kinds)):
            cells = range(line * per_line, line * per_line + width_cells)
            z.append([code[track_kinds[c]] + 0.5 if c < n else None for c in cells])
            text.append([esc(track[c]) if c < n else "" for c in cells])
            custom.append([esc(hover[t_index][c]) if hover and c < n else (esc(track[c]) if c < n else "")
                           for c in cells])
            ylabels.append(esc(track_names[t_index]))
    k = len(order)
    scale = []
    for i, kind in enumerate(order):
        scale += [[i / k, colours[kind]], [(i + 1) / k, colours[kind]]]
    longest = max(text_width(cell, font + 2) for row in text for cell in row) if text else font
    cell_w = max(46, min(110, longest + 14))
    traces = [go.Heatmap(
        z=z, text=text, customdata=custom, texttemplate="%{text}", textfont={"size": font + 2},
        colorscale=scale, zmin=0, zmax=k, showscale=False, xgap=3, ygap=3,
        hovertemplate="%{customdata}<extra></extra>", hoverongaps=False,
    )]
    traces += [go.Scatter(x=[None], y=[None], mode="markers", name=esc(kind_names[kind]),  # legend entries:
                          marker={"size": 16, "symbol": "square", "color": colours[kind],  # a heatmap has none
                                  "line": {"width": 1, "color": "#888"}})
               for kind in order if kind in kind_names]
    rows = len(z)
    # a long row name on two lines: on one it took the width the cells need ([MASK] spilled out of its cell)
    ylabels = [label if text_width(label, font) <= ROW_NAME_PX else
               wrap_note(label, font, text_width(label, font) / 2 + font * 3) for label in ylabels]
    left = max(text_width(line, font) for label in ylabels for line in label.split("<br>")) + 30
    cell_h = font * 2 + 14
    top = (50 if title else 0) + font * 2 + 24  # the legend sits above the cells, at the top of the figure
    return go.Figure(data=traces, layout={
        **style_layout(title, large=large),
        "yaxis": {"tickvals": list(range(rows)), "ticktext": ylabels, "autorange": "reversed", "showgrid": False,
                  "zeroline": False},
        "xaxis": {"showticklabels": False, "showgrid": False, "zeroline": False},
        "width": int(min(MAX_FIGURE_WIDTH, left + 30 + cell_w * width_cells)),
        "height": int(top + 16 + cell_h * rows),
        "margin": {"l": int(left), "r": 20, "t": int(top), "b": 16},
        "legend": {"orientation": "h", "yref": "container", "yanchor": "top", "y": 0.995, "xanchor": "left", "x": 0,
                   "font": {"size": font}},
        "plot_bgcolor": "white",
    })


# ---------------------------------------------------------------------------------------------
# attention
# ---------------------------------------------------------------------------------------------
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
    font = _font(large)
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
                   head_names: Sequence[str], title: str | None = None, large: bool = False) -> go.Figure:
    """Every layer (rows) × head (columns) as a small heatmap; each has its own colour scale."""
    a = np.asarray(att, dtype=float)
    layers, heads, n, _ = a.shape
    safe = [esc(label) for label in labels]
    size = int(max(90, min(280, (MAX_FIGURE_WIDTH - 120) / heads - 14)))
    titles = [f"{layer_names[l]} · {head_names[h]}" for l in range(layers) for h in range(heads)]
    grid = subplot_grid(layers, heads, titles=[esc(t) for t in titles], h_spacing=min(0.03, 0.3 / heads),
                        v_spacing=min(0.06, 0.4 / layers), title_size=_font(large) - 2)
    custom = _pair_labels(safe)
    traces = [go.Heatmap(
        z=a[cell.row - 1, cell.col - 1], colorscale=HEATMAP_SCALE, zmin=0, showscale=False, customdata=custom,
        hovertemplate=f"{esc(name)}<br>%{{customdata[0]}} → %{{customdata[1]}}: %{{z:.3f}}<extra></extra>",
        xaxis=cell.x, yaxis=cell.y,
    ) for cell, name in zip(grid.cells, titles)]
    grid.axes(x={"showticklabels": False, "showgrid": False, "zeroline": False, "constrain": "domain"},
              y={"showticklabels": False, "showgrid": False, "zeroline": False, "autorange": "reversed",
                 "constrain": "domain"})
    for cell in grid.cells:  # square small maps
        grid.layout[cell.yaxis]["scaleanchor"] = cell.x
    top = 70 if title else 40
    return go.Figure(data=traces, layout={
        **style_layout(title, large=large), **grid.layout,
        "width": heads * (size + 16) + 60, "height": layers * (size + 40) + top + 20,
        "margin": {"l": 30, "r": 30, "t": top, "b": 20}})


def layer_maps(mats: np.ndarray, labels: Sequence[str], *, titles: Sequence[str], title: str | None = None,
               large: bool = False, cols: int = 4, hover_prefix: str = "") -> go.Figure:
    """One (n, n) map per layer (head average, rollout ...), ``cols`` per row, labels when they fit."""
    m = np.asarray(mats, dtype=float)
    count, n, _ = m.shape
    font = _font(large)
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
    font = _font(large)
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
