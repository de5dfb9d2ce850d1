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
from typing import Any

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


SUMMARY_TOP = 3  # the items a spoken summary names, the largest first


def _axis_title(fig: go.Figure, letter: str) -> str:
    axis = fig.layout[f"{letter}axis"]
    return plain(axis.title.text) if axis.title and axis.title.text else ""


def _subplot_title(fig: go.Figure, trace) -> str:
    """The title above a trace's subplot (``make_subplots``' subplot titles are annotations over its x domain)."""
    ref = trace.xaxis or "x"
    axis = fig.layout[f"xaxis{ref[1:]}"]
    if axis.domain is None:
        return ""
    lo, hi = axis.domain
    for note in fig.layout.annotations or ():
        if note.xref == "paper" and note.yref == "paper" and note.x is not None and lo <= note.x <= hi \
                and note.yanchor == "bottom" and note.text:
            return plain(note.text)
    return ""


def figure_summary(fig: go.Figure, top: int = SUMMARY_TOP) -> dict:
    """What a screen reader says of a chart in one breath: its title, its axes' titles, and per series (named by its
    legend entry, else its subplot's title: which blank, which layer) its kind and size with its largest items (a bar's
    label and value, as the bar writes it: ``[["奶", "7.8%"], …]``), a heatmap's shape and largest cell (row, column,
    value), a token strip's rows of words, a legend entry's name. Plain text, no markup; cheap enough for every run."""
    title = plain(fig.layout.title.text) if fig.layout.title and fig.layout.title.text else ""
    series: list[dict[str, Any]] = []
    for trace in fig.data:
        if getattr(trace, "hoverinfo", None) == "skip" and not trace.name:
            continue
        name = plain(trace.name or "") or _subplot_title(fig, trace)
        if trace.type == "heatmap" and trace.z is not None and trace.text is not None:  # a token strip: its words
            cells = np.asarray(trace.text, dtype=object)
            ys = list(trace.y) if trace.y is not None else list(range(len(cells)))
            yt = _ticks(fig, trace.yaxis, "y")
            series.append({"kind": "strip", "name": name, "rows": [
                [plain(yt.get(ys[i], ys[i])) if i < len(ys) else "", [plain(c) for c in cells[i][:40] if c]]
                for i in range(min(len(cells), 3))]})
            continue
        if trace.type == "heatmap" and trace.z is not None:
            z = np.asarray(trace.z, dtype=float)
            if not z.size or np.isnan(z).all():
                continue
            i, j = np.unravel_index(int(np.nanargmax(z)), z.shape)
            xs = list(trace.x) if trace.x is not None else list(range(z.shape[1]))
            ys = list(trace.y) if trace.y is not None else list(range(z.shape[0]))
            xt, yt = _ticks(fig, trace.xaxis, "x"), _ticks(fig, trace.yaxis, "y")
            series.append({"kind": "heatmap", "name": name, "rows": z.shape[0], "columns": z.shape[1],
                           "largest": [plain(yt.get(ys[i], ys[i])), plain(xt.get(xs[j], xs[j])), f"{z[i, j]:.3g}"]})
            continue
        xs = list(trace.x) if getattr(trace, "x", None) is not None else []
        ys = list(trace.y) if getattr(trace, "y", None) is not None else []
        n = max(len(xs), len(ys))
        if not n or all(v is None for v in xs + ys):  # a legend entry with no points of its own
            if trace.name:
                series.append({"kind": "legend", "name": name})
            continue
        if trace.type == "bar":
            horizontal = trace.orientation == "h"
            values, labels = (xs, ys) if horizontal else (ys, xs)
            ticks = _ticks(fig, trace.yaxis if horizontal else trace.xaxis, "y" if horizontal else "x")
            texts = _seq(getattr(trace, "text", None), n)
            numbers = [(float(v), k) for k, v in enumerate(_seq(values, n)) if isinstance(v, int | float | np.number)]
            largest = [[plain(ticks.get(labels[k], labels[k])) if k < len(labels) else "",
                        plain(texts[k]) if texts[k] not in (None, "") else f"{v:.3g}"]
                       for v, k in sorted(numbers, key=lambda pair: -pair[0])[:top]]
            series.append({"kind": "bar", "name": name, "count": n, "largest": largest})
        else:
            series.append({"kind": "points", "name": name, "count": n})
    return {"title": title, "x": _axis_title(fig, "x"), "y": _axis_title(fig, "y"), "series": series}
