"""Figures of what BERT predicts at token positions (the fill-mask and objectives pages, the attention page's top-k):
probability bars per mask, a word's score bars, and strips of tokens; arrays and strings in, ``go.Figure`` out.

Every string that may come from the user (tokens, words, sentences) is passed through
:func:`esc` before it reaches plotly, which renders a subset of HTML in labels and hover text.
All translated UI text (titles, axis names) is passed in by the page; nothing here translates.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate

import plotly.graph_objects as go

from .grid import subplot_grid
from .style import MAX_FIGURE_WIDTH, PALETTE, esc, font_size, style_layout, text_width, titled_axis, wrap_note

ROW_NAME_PX = 280  # a token strip's row name wider than this goes on two lines
NARROW_PX = 330  # a token strip's width on a phone: a 390-px screen's main column, less the figure's margins
NARROW_MIN_CELL = 36  # px: a cell's least width on a phone (a character at the cells' font, padded)
# a bar chart's axis title wider than this goes on more lines: beside the characters on the projector, the whole
# words' chart has a narrow column, and plotly neither wraps a title nor keeps it inside the figure
AXIS_TITLE_PX = 300


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
              xaxis_title: str = "P", large: bool = False, cols: int | None = None, shared_x: bool = False,
              truth: Sequence[tuple[int, str] | None] = ()) -> go.Figure:
    """One horizontal bar chart per mask: ``slots`` = [(subplot title, tokens, probabilities)].

    ``shared_x``: every panel on one probability scale, for panels that compare two models' guesses at the
    same position (each on its own scale, a 6.7 % bar was as long as a 52.3 % one). ``truth[i]``: (index of
    the real token among slot i's tokens, its tick label, e.g. with its rank), drawn in another colour."""
    if not slots:
        raise ValueError("slots must contain at least one mask")
    font = font_size(large)
    cols = cols or min(len(slots), 4)
    rows = math.ceil(len(slots) / cols)
    k = max(len(tokens) for _, tokens, _ in slots)
    axis_title = wrap_note(xaxis_title, font, AXIS_TITLE_PX)
    grid = subplot_grid(rows, cols, count=len(slots), titles=[esc(name) for name, _, _ in slots],
                        h_spacing=0.09, v_spacing=min(0.12, 0.35 / rows) if rows > 1 else 0.1, title_size=font + 1)
    highest = max((float(p) for _, _, probs in slots for p in probs), default=0.0)
    traces = []
    for i, (cell, (_, tokens, probs)) in enumerate(zip(grid.cells, slots)):
        probs = [float(p) for p in probs]
        labels = [esc(tok) for tok in tokens]
        ticks, colours = list(labels), [PALETTE[0]] * len(tokens)
        real = truth[i] if i < len(truth) else None
        if real is not None:
            ticks[real[0]], colours[real[0]] = esc(real[1]), PALETTE[2]
        traces.append(go.Bar(
            x=probs, y=list(range(len(tokens))), orientation="h", marker_color=colours,
            text=[f"{p:.1%}" if p >= 0.001 else f"{p:.1e}" for p in probs], textposition="auto",
            customdata=ticks, hovertemplate="%{customdata}: %{x:.4f}<extra></extra>", showlegend=False,
            xaxis=cell.x, yaxis=cell.y,
        ))
        grid.layout[cell.yaxis].update(tickvals=list(range(len(tokens))), ticktext=ticks, autorange="reversed",
                                       tickfont={"size": font + 2})
        top = highest if shared_x else max(probs, default=0.0)
        grid.layout[cell.xaxis].update(range=[0, max(top * 1.15, 1e-6)], tickformat=".0%")
        if cell.row == rows:
            grid.layout[cell.xaxis].update(titled_axis(axis_title))
    height = rows * (70 + (font + 16) * k) + 60 + axis_title.count("<br>") * round(1.3 * font)  # the title's lines
    return go.Figure(data=traces, layout={**style_layout(title, large=large, height=height), **grid.layout})


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def score_text(p: float) -> str:
    """A probability as seen and read aloud: a percentage from 0.01 % up (43.8%, 1.14%, 0.155%), below it a power of ten
    (3.95×10⁻⁸), never "1.14e-02" or 3.953918460234424e-8."""
    if p >= 1e-4:
        return f"{p:.1%}" if p >= 0.1 else f"{p * 100:.3g}%"  # three digits: 1.14%, 0.155%
    mantissa, exponent = f"{p:.2e}".split("e")
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def candidate_bars(words: Sequence[str], scores: Sequence[float], *, title: str | None = None,
                   xaxis_title: str = "P", large: bool = False) -> go.Figure:
    """User candidates and their probability (product over their tokens), on a log axis."""
    font = font_size(large)
    scores = [max(float(s), 1e-30) for s in scores]
    labels = [esc(w) for w in words]
    low = math.floor(math.log10(min(scores))) - 1 if scores else -6
    high = math.log10(max(scores)) + 0.8 if scores else 0
    return go.Figure(go.Bar(
        x=scores, y=list(range(len(words))), orientation="h",
        marker_color=[PALETTE[i % len(PALETTE)] for i in range(len(words))],
        text=[score_text(s) for s in scores], customdata=labels,
        textposition="auto", cliponaxis=False,  # inside a long bar: outside, a phone's narrow plot cut it off
        hovertemplate="%{customdata}: %{text}<extra></extra>",
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
                large: bool = False, narrow: bool = False) -> go.Figure:
    """Sentences as rows of coloured cells, one cell per token.

    ``tracks``: one or more aligned rows of cell texts (e.g. original / what the model sees);
    ``kinds``: a kind per cell (its colour, from ``colours``; the legend uses ``kind_names``).
    Long sentences wrap every ``per_line`` cells; each wrapped line repeats all tracks.
    ``narrow``: a phone's width (``NARROW_PX``), see :func:`_narrow_strip`.
    """
    if not tracks or any(len(t) != len(tracks[0]) for t in tracks) or len(kinds) != len(tracks):
        raise ValueError("tracks and kinds must be aligned rows of equal length")
    n = len(tracks[0])
    if n == 0:
        raise ValueError("nothing to draw")
    font = font_size(large)
    order = list(colours)
    code = {kind: i for i, kind in enumerate(order)}
    if narrow:
        per_line = _narrow_per_line(tracks, font + 2, per_line)
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
    traces = [go.Heatmap(
        z=z, text=text, customdata=custom, texttemplate="%{text}", textfont={"size": font + 2},
        colorscale=scale, zmin=0, zmax=k, showscale=False, xgap=3, ygap=3,
        hovertemplate="%{customdata}<extra></extra>", hoverongaps=False,
    )]
    traces += [go.Scatter(x=[None], y=[None], mode="markers", name=esc(kind_names[kind]),  # legend entries:
                          marker={"size": 16, "symbol": "square", "color": colours[kind],  # a heatmap has none
                                  "line": {"width": 1, "color": "#888"}})
               for kind in order if kind in kind_names]
    top = (50 if title else 0) + font * 2 + 24  # the legend sits above the cells, at the top of the figure
    layout = {**style_layout(title, large=large),
              "xaxis": {"showticklabels": False, "showgrid": False, "zeroline": False},
              "legend": {"orientation": "h", "yref": "container", "yanchor": "top", "y": 0.995, "xanchor": "left",
                         "x": 0, "font": {"size": font}},
              "plot_bgcolor": "white"}
    if narrow:
        return _narrow_strip(traces, ylabels, layout, font, top)
    rows = len(z)
    longest = max(text_width(cell, font + 2) for row in text for cell in row) if text else font
    cell_w = max(46, min(110, longest + 14))
    # a long row name on two lines: on one it took the width the cells need ([MASK] spilled out of its cell)
    ylabels = [label if text_width(label, font) <= ROW_NAME_PX else
               wrap_note(label, font, text_width(label, font) / 2 + font * 3) for label in ylabels]
    left = max(text_width(line, font) for label in ylabels for line in label.split("<br>")) + 30
    return go.Figure(data=traces, layout={
        **layout,
        "yaxis": {"tickvals": list(range(rows)), "ticktext": ylabels, "autorange": "reversed", "showgrid": False,
                  "zeroline": False},
        "width": int(min(MAX_FIGURE_WIDTH, left + 30 + cell_w * width_cells)),
        "height": int(top + 16 + _cell_height(font) * rows),
        "margin": {"l": int(left), "r": 20, "t": int(top), "b": 16},
    })


def _cell_height(font: int) -> int:
    return font * 2 + 14


def _column_widths(rows: Sequence[Sequence[str]], font: int, per_line: int) -> list[float]:
    """Each column's width when ``per_line`` cells make a line: its widest text (of every row and line), padded."""
    widths = [0.0] * min(per_line, len(rows[0]))
    for row in rows:
        for c, cell in enumerate(row):
            widths[c % per_line] = max(widths[c % per_line], text_width(cell, font))
    return [max(NARROW_MIN_CELL, w + 12) for w in widths]


def _narrow_per_line(tracks: Sequence[Sequence[str]], font: int, per_line: int) -> int:
    """The most cells a line holds at a phone's width (at least one)."""
    shown = [[esc(cell) for cell in track] for track in tracks]
    fits = min(per_line, len(tracks[0]))
    while fits > 1 and sum(_column_widths(shown, font, fits)) > NARROW_PX:
        fits -= 1
    return fits


def _narrow_strip(traces: list, ylabels: list[str], layout: dict, font: int, top: int) -> go.Figure:
    """The strip at a phone's width: beside the cells, the row names left them a sliver (and overlapped each
    other), so each row's name stands on a line of its own above its cells, wrapped to the width; a column is as
    wide as its own widest cell, so that one [MASK] does not widen every character's cell."""
    heatmap = traces[0]
    cells = heatmap.text  # the lines' text, which set the columns' widths
    width_cells = len(cells[0])
    widths = _column_widths(cells, font + 2, width_cells)
    names = [wrap_note(label, font, NARROW_PX) for label in ylabels]
    edges, label_y, cell_h = [0.0], [], _cell_height(font)
    z, text, custom = [], [], []
    for name, row_z, row_text, row_custom in zip(names, heatmap.z, cells, heatmap.customdata):
        band = (name.count("<br>") + 1) * (font + 5) + 8  # the name's lines, then a gap above the cells
        label_y.append(edges[-1] + band / 2)
        edges += [edges[-1] + band, edges[-1] + band + cell_h]
        z += [[None] * width_cells, row_z]
        text += [[""] * width_cells, row_text]
        custom += [[""] * width_cells, row_custom]
    x_edges = [0.0, *accumulate(widths)]
    # plotly wraps a horizontal legend too wide for the figure into a grid of its widest entry (a symbol and a gap,
    # about 40 px, before the text), and scrolls a legend taller than the room left above the cells
    entries = [40 + text_width(trace.name, font) for trace in traces[1:]]
    per_row = len(entries) if sum(entries) <= NARROW_PX else max(1, int(NARROW_PX // max(entries, default=1)))
    top += (math.ceil(len(entries) / per_row) - 1) * (font + 8) if entries else 0
    heatmap.update(x=x_edges, y=edges, z=z, text=text, customdata=custom)
    return go.Figure(data=traces, layout={
        **layout,
        # hidden ticks: the chart's table (core.figures.table) names a cell's row and position by them, as on a desktop
        "yaxis": {"range": [edges[-1], 0], "showticklabels": False, "showgrid": False, "zeroline": False,
                  "tickvals": edges[1::2], "ticktext": ylabels},
        "xaxis": {**layout["xaxis"], "range": [0, x_edges[-1]], "tickvals": x_edges[:-1],
                  "ticktext": list(range(width_cells))},
        "annotations": [{"text": name, "x": 0, "xref": "paper", "xanchor": "left", "y": y, "yref": "y",
                         "yanchor": "middle", "align": "left", "showarrow": False, "font": {"size": font}}
                        for name, y in zip(names, label_y)],
        "width": int(x_edges[-1] + 16), "height": int(top + 16 + edges[-1]),
        "margin": {"l": 8, "r": 8, "t": int(top), "b": 16},
    })


