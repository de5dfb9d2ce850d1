"""A figure's numbers as a table: the text alternative of a chart for a reader who cannot see it (a screen
reader reads the table that ``ui.page.chart`` puts beside every chart).

One row per point of a scatter or bar trace, one row per cell of a heatmap: the trace's name (its legend
entry), the point's label, its x and y (tick labels where the axis names its positions), the ends of its error
bar (an interval a sighted reader sees as the bar), a heatmap cell's value, and a point's hover text. A legend
entry with no points of its own (a reference line's "name: value") is a row with its name alone. Plotly markup
is removed and entities decoded: the cells are plain text.
"""
from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

COLUMNS = ("series", "label", "x", "y", "low", "high", "value", "detail")
MAX_ROWS = 400  # a 12-layer × 12-head attention grid has tens of thousands of cells: no one reads past this
_TAG = re.compile(r"<[^>]*>")


def plain(value: object) -> str:
    """Plotly markup (``<b>``, ``<br>``, ``<sub>``, escaped entities) as plain text."""
    return " ".join(html.unescape(_TAG.sub(" ", str(value))).split())


def _cell(value: object) -> str:
    """A cell as text (one type per column, whatever the traces hold): numbers to 4 significant digits."""
    if value is None or (isinstance(value, float | np.floating) and np.isnan(value)):
        return ""
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    return plain(value)


def _ticks(fig: go.Figure, axis_ref: str | None, letter: str) -> dict:
    """Position → tick label of the axis ``axis_ref`` ("x", "x2", …), where the axis names its positions."""
    axis = fig.layout[f"{letter}axis{(axis_ref or letter)[1:]}"]
    if axis.tickvals is None or axis.ticktext is None:
        return {}
    return {v: plain(text) for v, text in zip(axis.tickvals, axis.ticktext)}


def _seq(values: object, n: int) -> list:
    """A per-point property as a list of ``n`` (a single value repeated; missing: empty)."""
    if values is None or isinstance(values, str | int | float):
        return [values] * n
    values = list(np.asarray(values, dtype=object).tolist()) if not isinstance(values, Sequence) else list(values)
    return (values + [None] * n)[:n]


def _detail(trace) -> object:
    """A trace's per-point hover text (``hovertext``, else ``customdata`` when it is text)."""
    if getattr(trace, "hovertext", None) is not None:
        return trace.hovertext
    custom = getattr(trace, "customdata", None)
    if custom is not None and len(custom) and isinstance(custom[0], str):
        return custom
    return None


def _heatmap_rows(fig: go.Figure, trace) -> list[tuple]:
    """A cell per row. A heatmap that writes a text in its cells (a token strip) uses its colour for a kind,
    named in the legend rows: its cells are their texts and hover, not the colour's code."""
    z = np.asarray(trace.z, dtype=float)
    xs = list(trace.x) if trace.x is not None else list(range(z.shape[1]))
    ys = list(trace.y) if trace.y is not None else list(range(z.shape[0]))
    xt, yt = _ticks(fig, trace.xaxis, "x"), _ticks(fig, trace.yaxis, "y")
    texts = np.asarray(trace.text, dtype=object) if trace.text is not None else None
    custom = np.asarray(trace.customdata, dtype=object) if trace.customdata is not None else None
    rows = []
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            if np.isnan(z[i, j]):
                continue
            x, y = xt.get(xs[j], xs[j]), yt.get(ys[i], ys[i])
            if texts is None:
                rows.append((trace.name, "", x, y, "", "", z[i, j], ""))
            else:
                detail = custom[i, j] if custom is not None and isinstance(custom[i, j], str) else ""
                rows.append((trace.name, texts[i, j], x, y, "", "", "", "" if detail == texts[i, j] else detail))
    return rows


def _interval(trace, xs: list, ys: list, n: int) -> tuple[list, list]:
    """Each point's error-bar ends (``error_y`` around y, else ``error_x`` around x); empty without bars."""
    for error, values in ((getattr(trace, "error_y", None), ys), (getattr(trace, "error_x", None), xs)):
        if error is None or error.array is None or error.visible is False:
            continue
        up = _seq(error.array, n)
        down = up if error.symmetric is not False or error.arrayminus is None else _seq(error.arrayminus, n)
        ok = [isinstance(v, int | float) and u is not None and d is not None for v, u, d in zip(values, up, down)]
        return ([v - d if good else None for v, d, good in zip(values, down, ok)],
                [v + u if good else None for v, u, good in zip(values, up, ok)])
    return [None] * n, [None] * n


def _point_rows(fig: go.Figure, trace) -> list[tuple]:
    xs = list(trace.x) if trace.x is not None else []
    ys = list(trace.y) if trace.y is not None else []
    n = max(len(xs), len(ys))
    if n == 0 or all(v is None for v in xs + ys):
        return [(trace.name, "", "", "", "", "", "", "")] if trace.name else []
    xs, ys = _seq(xs, n), _seq(ys, n)
    xt, yt = _ticks(fig, trace.xaxis, "x"), _ticks(fig, trace.yaxis, "y")
    labels, details = _seq(getattr(trace, "text", None), n), _seq(_detail(trace), n)
    low, high = _interval(trace, xs, ys, n)
    return [(trace.name, labels[i], xt.get(xs[i], xs[i]), yt.get(ys[i], ys[i]), low[i], high[i], "", details[i])
            for i in range(n)]


def figure_table(fig: go.Figure, max_rows: int = MAX_ROWS) -> tuple[pd.DataFrame, int]:
    """``(table, rows in all)``: the figure's numbers (at most ``max_rows`` rows; columns :data:`COLUMNS`, the
    ones that are empty in every row left out) and how many rows the whole table has. Traces that only
    decorate (no name and no hover) are left out."""
    rows: list[tuple] = []
    for trace in fig.data:
        if getattr(trace, "hoverinfo", None) == "skip" and not trace.name:
            continue
        rows += _heatmap_rows(fig, trace) if trace.type == "heatmap" else _point_rows(fig, trace)
    cells = [[_cell(v) for v in row] for row in rows[:max_rows]]
    for row in cells:  # a hover that repeats the point's label or position says nothing more
        if row[-1] in row[:-1]:
            row[-1] = ""
    table = pd.DataFrame(cells, columns=list(COLUMNS))
    used = [c for c in COLUMNS if (table[c] != "").any()]
    return table[used], len(rows)
