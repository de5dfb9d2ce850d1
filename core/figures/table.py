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


Trace = dict[str, Any]  # a trace as plain data (``BaseTraceType.to_plotly_json``)
Layout = dict[str, Any]  # the layout as plain data


def _plain_figure(fig: go.Figure) -> tuple[list[Trace], Layout]:
    """The figure's traces and layout as plain dicts, read once: plotly's own property objects cost a lookup and a
    validator per attribute, four times what the whole summary costs on plain data (issue #50)."""
    return [trace.to_plotly_json() for trace in fig.data], fig.layout.to_plotly_json()


def _axis(layout: Layout, letter: str, ref: str | None) -> dict:
    """The layout's axis that a trace names (``ref``: "x", "x2", …; None: the first)."""
    return layout.get(f"{letter}axis{(ref or letter)[1:]}") or {}


def _ticks(layout: Layout, ref: str | None, letter: str) -> dict:
    """Position → tick label of the axis ``ref`` ("x", "x2", …), where the axis names its positions."""
    axis = _axis(layout, letter, ref)
    if axis.get("tickvals") is None or axis.get("ticktext") is None:
        return {}
    return {v: plain(text) for v, text in zip(axis["tickvals"], axis["ticktext"])}


def _seq(values: object, n: int) -> list:
    """A per-point property as a list of ``n`` (a single value repeated; missing: empty)."""
    if values is None or isinstance(values, str | int | float):
        return [values] * n
    values = list(np.asarray(values, dtype=object).tolist()) if not isinstance(values, Sequence) else list(values)
    return (values + [None] * n)[:n]


def _positions(trace: Trace, key: str) -> list:
    values = trace.get(key)
    return list(values) if values is not None else []


def _detail(trace: Trace) -> object:
    """A trace's per-point hover text (``hovertext``, else ``customdata`` when it is text)."""
    if trace.get("hovertext") is not None:
        return trace["hovertext"]
    custom = trace.get("customdata")
    if custom is not None and len(custom) and isinstance(custom[0], str):
        return custom
    return None


def _heatmap_rows(layout: Layout, trace: Trace) -> list[tuple]:
    """A cell per row. A heatmap that writes a text in its cells (a token strip) uses its colour for a kind,
    named in the legend rows: its cells are their texts and hover, not the colour's code."""
    z = np.asarray(trace["z"], dtype=float)
    xs = _positions(trace, "x") or list(range(z.shape[1]))
    ys = _positions(trace, "y") or list(range(z.shape[0]))
    xt, yt = _ticks(layout, trace.get("xaxis"), "x"), _ticks(layout, trace.get("yaxis"), "y")
    texts = np.asarray(trace["text"], dtype=object) if trace.get("text") is not None else None
    custom = np.asarray(trace["customdata"], dtype=object) if trace.get("customdata") is not None else None
    name = trace.get("name")
    rows = []
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            if np.isnan(z[i, j]):
                continue
            x, y = xt.get(xs[j], xs[j]), yt.get(ys[i], ys[i])
            if texts is None:
                rows.append((name, "", x, y, "", "", z[i, j], ""))
            else:
                detail = custom[i, j] if custom is not None and isinstance(custom[i, j], str) else ""
                rows.append((name, texts[i, j], x, y, "", "", "", "" if detail == texts[i, j] else detail))
    return rows


def _interval(trace: Trace, xs: list, ys: list, n: int) -> tuple[list, list]:
    """Each point's error-bar ends (``error_y`` around y, else ``error_x`` around x); empty without bars."""
    for error, values in ((trace.get("error_y"), ys), (trace.get("error_x"), xs)):
        if not error or error.get("array") is None or error.get("visible") is False:
            continue
        up = _seq(error["array"], n)
        down = up if error.get("symmetric") is not False or error.get("arrayminus") is None \
            else _seq(error["arrayminus"], n)
        ok = [isinstance(v, int | float) and u is not None and d is not None for v, u, d in zip(values, up, down)]
        return ([v - d if good else None for v, d, good in zip(values, down, ok)],
                [v + u if good else None for v, u, good in zip(values, up, ok)])
    return [None] * n, [None] * n


def _point_rows(layout: Layout, trace: Trace) -> list[tuple]:
    xs, ys, name = _positions(trace, "x"), _positions(trace, "y"), trace.get("name")
    n = max(len(xs), len(ys))
    if n == 0 or all(v is None for v in xs + ys):
        return [(name, "", "", "", "", "", "", "")] if name else []
    xs, ys = _seq(xs, n), _seq(ys, n)
    xt, yt = _ticks(layout, trace.get("xaxis"), "x"), _ticks(layout, trace.get("yaxis"), "y")
    labels, details = _seq(trace.get("text"), n), _seq(_detail(trace), n)
    low, high = _interval(trace, xs, ys, n)
    return [(name, labels[i], xt.get(xs[i], xs[i]), yt.get(ys[i], ys[i]), low[i], high[i], "", details[i])
            for i in range(n)]


def _decorative(trace: Trace) -> bool:
    """A trace that only decorates (no name, no hover): not read out."""
    return trace.get("hoverinfo") == "skip" and not trace.get("name")


def figure_table(fig: go.Figure, max_rows: int = MAX_ROWS) -> tuple[pd.DataFrame, int]:
    """``(table, rows in all)``: the figure's numbers (at most ``max_rows`` rows; columns :data:`COLUMNS`, the
    ones that are empty in every row left out) and how many rows the whole table has. Traces that only
    decorate (no name and no hover) are left out."""
    traces, layout = _plain_figure(fig)
    rows: list[tuple] = []
    for trace in traces:
        if not _decorative(trace):  # a series is named by its legend entry, else by its subplot's title
            named = {**trace, "name": plain(trace.get("name") or "") or _subplot_title(layout, trace) or None}
            rows += _heatmap_rows(layout, named) if trace["type"] == "heatmap" else _point_rows(layout, named)
    cells = [[_cell(v) for v in row] for row in rows[:max_rows]]
    for row in cells:  # a hover that repeats the point's label or position says nothing more
        if row[-1] in row[:-1]:
            row[-1] = ""
    table = pd.DataFrame(cells, columns=list(COLUMNS))
    used = [c for c in COLUMNS if (table[c] != "").any()]
    return table[used], len(rows)


def axis_titles(fig: go.Figure) -> dict[str, str]:
    """The titles of the x and y axes ({"x": …, "y": …}, those that have one) of a figure with one pair of axes: the
    table's x and y columns are named by them. Subplots each have their own: their columns keep generic names."""
    layout = fig.layout.to_plotly_json()
    if any(name[1:5] == "axis" and name[5:].isdigit() for name in layout):
        return {}
    titles = {letter: _title_text(layout.get(f"{letter}axis")) for letter in ("x", "y")}
    return {letter: title for letter, title in titles.items() if title}


SUMMARY_TOP = 3  # the items a spoken summary names, the largest first


def _title_text(part: dict | None) -> str:
    """The plain title of the layout or of one of its axes ("" without one)."""
    title = (part or {}).get("title") or {}
    return plain(title["text"]) if title.get("text") else ""


def _subplot_title(layout: Layout, trace: Trace) -> str:
    """The title above a trace's subplot (``make_subplots``' subplot titles are annotations over its x domain)."""
    domain = _axis(layout, "x", trace.get("xaxis")).get("domain")
    if domain is None:
        return ""
    lo, hi = domain
    for note in layout.get("annotations") or ():
        if note.get("xref") == "paper" and note.get("yref") == "paper" and note.get("x") is not None \
                and lo <= note["x"] <= hi and note.get("yanchor") == "bottom" and note.get("text"):
            return plain(note["text"])
    return ""


def figure_summary(fig: go.Figure, top: int = SUMMARY_TOP) -> dict:
    """What a screen reader says of a chart in one breath: its title, its axes' titles, and per series (named by its
    legend entry, else its subplot's title: which blank, which layer) its kind and size with its largest items (a bar's
    label and value, as the bar writes it: ``[["奶", "7.8%"], …]``), a heatmap's shape and largest cell (row, column,
    value), a token strip's rows of words, a legend entry's name. Plain text, no markup; cheap enough for every run."""
    traces, layout = _plain_figure(fig)
    series: list[dict[str, Any]] = []
    for trace in traces:
        if _decorative(trace):
            continue
        name = plain(trace.get("name") or "") or _subplot_title(layout, trace)
        xt, yt = _ticks(layout, trace.get("xaxis"), "x"), _ticks(layout, trace.get("yaxis"), "y")
        if trace["type"] == "heatmap" and trace.get("z") is not None and trace.get("text") is not None:
            cells = np.asarray(trace["text"], dtype=object)  # a token strip: its words
            ys = _positions(trace, "y") or list(range(len(cells)))
            series.append({"kind": "strip", "name": name, "rows": [
                [plain(yt.get(ys[i], ys[i])) if i < len(ys) else "", [plain(c) for c in cells[i][:40] if c]]
                for i in range(min(len(cells), 3))]})
            continue
        if trace["type"] == "heatmap" and trace.get("z") is not None:
            z = np.asarray(trace["z"], dtype=float)
            if not z.size or np.isnan(z).all():
                continue
            i, j = np.unravel_index(int(np.nanargmax(z)), z.shape)
            xs = _positions(trace, "x") or list(range(z.shape[1]))
            ys = _positions(trace, "y") or list(range(z.shape[0]))
            series.append({"kind": "heatmap", "name": name, "rows": z.shape[0], "columns": z.shape[1],
                           "largest": [plain(yt.get(ys[i], ys[i])), plain(xt.get(xs[j], xs[j])), f"{z[i, j]:.3g}"]})
            continue
        xs, ys = _positions(trace, "x"), _positions(trace, "y")
        n = max(len(xs), len(ys))
        if not n or all(v is None for v in xs + ys):  # a legend entry with no points of its own
            if trace.get("name"):
                series.append({"kind": "legend", "name": name})
            continue
        if trace["type"] == "bar":
            horizontal = trace.get("orientation") == "h"
            values, labels = (xs, ys) if horizontal else (ys, xs)
            ticks = yt if horizontal else xt
            texts = _seq(trace.get("text"), n)
            numbers = [(float(v), k) for k, v in enumerate(_seq(values, n)) if isinstance(v, int | float | np.number)]
            largest = [[plain(ticks.get(labels[k], labels[k])) if k < len(labels) else "",
                        plain(texts[k]) if texts[k] not in (None, "") else f"{v:.3g}"]
                       for v, k in sorted(numbers, key=lambda pair: -pair[0])[:top]]
            series.append({"kind": "bar", "name": name, "count": n, "largest": largest})
        else:
            series.append({"kind": "points", "name": name, "count": n})
    return {"title": _title_text(layout), "x": _title_text(layout.get("xaxis")), "y": _title_text(layout.get("yaxis")),
            "series": series}
