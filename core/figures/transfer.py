"""Figures of the feature-based vs fine-tuning page: numbers and translated strings in, go.Figure out.

Labels are the app's own translations (no user text); they are still ``html.escape``d because plotly
renders a subset of HTML.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import base_layout, esc, wrap_note

FEATURE_COLOUR = "#E07B00"  # orange: frozen model + trained logistic regression
FINETUNE_COLOUR = "#0B57D0"  # blue: every parameter trained
LORA_COLOUR = "#2E7D32"  # green: low-rank adapters + head trained, the encoder frozen
KIND_COLOURS = {"feature": FEATURE_COLOUR, "finetune": FINETUNE_COLOUR, "lora": LORA_COLOUR}
FROZEN_COLOUR = "#9CA3AF"  # grey: frozen parameters
TRAINED_COLOUR = "#D62728"  # red: parameters changed by training
BASELINE_COLOUR = "#6B7280"


def _pct(x: float) -> str:
    return f"{100 * float(x):.1f}%"


def accuracy_bars(labels: Sequence[str], accuracies: Sequence[float | None], kinds: Sequence[str], *,
                  baseline: float | None, baseline_label: str, axis_title: str, title: str | None = None,
                  hover: Sequence[str] | None = None, large: bool = False, height: int | None = None) -> go.Figure:
    """Horizontal bars, one per method (top to bottom in the given order); ``kinds``: keys of KIND_COLOURS.
    A missing accuracy (None) is drawn as an empty row; "\n" in a label breaks the line. ``hover``: longer
    descriptions of the methods."""
    values = [float(a) if a is not None else 0.0 for a in accuracies]
    colours = [KIND_COLOURS[k] for k in kinds]
    text = [_pct(a) if a is not None else "—" for a in accuracies]
    fig = go.Figure(go.Bar(
        x=values, y=["<br>".join(esc(part) for part in l.split("\n")) for l in labels], orientation="h",
        marker_color=colours, text=text,
        textposition="outside", cliponaxis=False, customdata=[esc(h) for h in (hover or labels)],
        hovertemplate="%{customdata}: %{x:.1%}<extra></extra>",
        textfont={"size": 22 if large else 16},
    ))
    if baseline is not None:
        fig.add_vline(x=baseline, line_dash="dash", line_color=BASELINE_COLOUR, line_width=2)
        fig.add_annotation(x=baseline, y=1.0, yref="paper", yanchor="bottom", text=esc(baseline_label),
                           showarrow=False, font={"color": BASELINE_COLOUR})
    base_layout(fig, title, large=large, height=height or (120 + 90 * len(labels)))
    fig.update_xaxes(range=[0, 1.1], tickformat=".0%", title_text=esc(axis_title), dtick=0.2)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(showlegend=False, bargap=0.35, margin={"r": 40})
    return fig


def layer_curve(layer_names: Sequence[str], series: dict[str, Sequence[float]], *, selected: int | None,
                intervals: dict[str, Sequence[tuple[float, float]]] | None = None,
                references: Sequence[tuple[str, float, str]] = (), baseline: float | None = None,
                baseline_label: str = "", axis_title: str = "", layer_axis_title: str = "",
                title: str | None = None, large: bool = False, height: int | None = None) -> go.Figure:
    """Held-out accuracy of the frozen-feature probe per layer (one line per pooling, with its 95%
    ``intervals`` as error bars, the poolings side by side), and horizontal reference lines (label,
    accuracy, colour) such as the ELMo features and the fine-tuned model."""
    fig = go.Figure()
    dashes = ["solid", "dot", "dashdot"]
    for i, (name, accs) in enumerate(series.items()):
        bounds = (intervals or {}).get(name)
        error = {} if bounds is None else {"error_y": {
            "type": "data", "symmetric": False, "thickness": 1.5, "width": 5, "color": FEATURE_COLOUR,
            "array": [hi - a for a, (_, hi) in zip(accs, bounds)],
            "arrayminus": [a - lo for a, (lo, _) in zip(accs, bounds)]}}
        fig.add_trace(go.Scatter(
            x=list(range(len(layer_names))), y=list(accs), mode="lines+markers", name=esc(name), offsetgroup=str(i),
            line={"color": FEATURE_COLOUR, "dash": dashes[i % len(dashes)], "width": 3},
            marker={"size": 12 if large else 9}, **error,
            customdata=[[f"{100 * lo:.1f}", f"{100 * hi:.1f}"] for lo, hi in bounds] if bounds else None,
            hovertemplate="%{y:.1%}" + (" (95%: %{customdata[0]}–%{customdata[1]}%)" if bounds else "")
            + "<extra>" + esc(name) + "</extra>"))
    positions = ["top left", "bottom right", "top right", "bottom left"]  # close lines keep their labels apart
    for i, (label, value, colour) in enumerate(references):
        fig.add_hline(y=value, line_dash="dash", line_color=colour, line_width=2,
                      annotation_text=f"{esc(label)} {_pct(value)}", annotation_position=positions[i % 4],
                      annotation_font_color=colour)
    if baseline is not None:
        fig.add_hline(y=baseline, line_dash="dot", line_color=BASELINE_COLOUR, line_width=1.5,
                      annotation_text=esc(baseline_label), annotation_position="bottom right",
                      annotation_font_color=BASELINE_COLOUR)
    if selected is not None and 0 <= selected < len(layer_names):
        fig.add_vrect(x0=selected - 0.3, x1=selected + 0.3, fillcolor=FEATURE_COLOUR, opacity=0.12, line_width=0)
    base_layout(fig, title, large=large, height=height or (460 if large else 400))
    # the poolings' error bars side by side: plotly shifts each series a little when drawing, so the data
    # (and the chart's table, core.figures.table) keep the real layer numbers
    fig.update_layout(scattermode="group", scattergap=1 - 0.08 * len(series))
    fig.update_xaxes(tickvals=list(range(len(layer_names))),
                     ticktext=[f"{j}<br>{esc(n)}" for j, n in enumerate(layer_names)], title_text=esc(layer_axis_title))
    values = [v for accs in series.values() for v in accs] + [v for _, v, _ in references]
    values += [lo for bounds in (intervals or {}).values() for lo, _ in bounds]
    values += [baseline] if baseline is not None else []
    lo = max(0.0, min(values) - 0.08) if values else 0.0
    fig.update_yaxes(range=[lo, 1.0], tickformat=".0%", title_text=esc(axis_title))
    _legend_under_title(fig, large)
    return fig


def _legend_under_title(fig: go.Figure, large: bool) -> None:
    """Title at the very top, the horizontal legend between it and the plot (they never overlap)."""
    fig.update_layout(margin={"t": 120 if large else 100},
                      title={"y": 0.98, "yref": "container", "yanchor": "top"},
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "xanchor": "left"})


class CurveRun(NamedTuple):
    """One fine-tuning run of ``finetune_curve``: held-out accuracy at a few steps, the loss of every step."""
    name: str
    steps: Sequence[int]
    accuracies: Sequence[float]
    losses: Sequence[float]
    colour: str


def finetune_curve(runs: Sequence[CurveRun], *, acc_name: str, loss_name: str, step_axis_title: str,
                   acc_axis_title: str, loss_axis_title: str, title: str | None = None, large: bool = False,
                   height: int | None = None, smooth: int = 10) -> go.Figure:
    """Per run: held-out accuracy at a few steps (solid, left axis) and the training loss per step,
    smoothed (dotted, right axis), both in the run's colour."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for run in runs:
        loss = np.asarray(run.losses, dtype=float)
        if loss.size:
            k = max(1, min(smooth, loss.size))
            smoothed = np.convolve(loss, np.ones(k) / k, mode="valid")
            fig.add_trace(go.Scatter(x=list(range(k, loss.size + 1)), y=smoothed, mode="lines",
                                     name=f"{esc(run.name)} · {esc(loss_name)}",
                                     line={"color": run.colour, "width": 1.5, "dash": "dot"},
                                     hovertemplate="%{x}: %{y:.3f}<extra></extra>"), secondary_y=True)
        fig.add_trace(go.Scatter(x=list(run.steps), y=list(run.accuracies), mode="lines+markers",
                                 name=f"{esc(run.name)} · {esc(acc_name)}", line={"color": run.colour, "width": 3},
                                 marker={"size": 12 if large else 9}, hovertemplate="%{x}: %{y:.1%}<extra></extra>"),
                      secondary_y=False)
    base_layout(fig, title, large=large, height=height or (440 if large else 380))
    fig.update_xaxes(title_text=esc(step_axis_title))
    fig.update_yaxes(title_text=esc(acc_axis_title), tickformat=".0%", range=[0, 1.0], secondary_y=False)
    fig.update_yaxes(title_text=esc(loss_axis_title), secondary_y=True, rangemode="tozero", showgrid=False,
                     tickformat=".2f")
    _legend_under_title(fig, large)
    return fig


def parameter_bars(methods: Sequence[str], trained: Sequence[int], frozen: Sequence[int], *,
                   trained_name: str, frozen_name: str, axis_title: str, title: str | None = None,
                   large: bool = False, height: int | None = None) -> go.Figure:
    """Trained vs frozen parameter counts per method, on a log axis (257 next to ~5 million)."""
    fig = go.Figure()
    y = [esc(m) for m in methods]
    for name, counts, colour in ((frozen_name, frozen, FROZEN_COLOUR), (trained_name, trained, TRAINED_COLOUR)):
        fig.add_trace(go.Bar(
            x=[max(int(c), 0) or None for c in counts], y=y, orientation="h", name=esc(name), marker_color=colour,
            text=[f"{int(c):,}" if c else "0" for c in counts], textposition="outside", cliponaxis=False,
            hovertemplate="%{y}: %{x:,}<extra>" + esc(name) + "</extra>", textfont={"size": 20 if large else 15}))
    top = max([1, *trained, *frozen])
    base_layout(fig, title, large=large, height=height or (140 + 110 * len(methods)))
    fig.update_xaxes(type="log", range=[0, np.log10(top) + 1.6], title_text=esc(axis_title))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(barmode="group", bargap=0.3)
    _legend_under_title(fig, large)
    return fig


PANEL_WIDTH_PX, PANEL_WIDTH_PX_LARGE = 200, 260  # one panel of approach_summary in the page's column at 1280 px


def approach_summary(labels: Sequence[str], kinds: Sequence[str], accuracies: Sequence[float],
                     intervals: Sequence[tuple[float, float]], trained: Sequence[int], seconds: Sequence[float], *,
                     panel_titles: Sequence[str], title: str | None = None, large: bool = False,
                     height: int | None = None) -> go.Figure:
    """One row per approach, three panels side by side: held-out accuracy with its 95% interval, trained
    parameters (log axis: hundreds next to millions) and time in seconds."""
    y = ["<br>".join(esc(part) for part in label.split("\n")) for label in labels]
    colours = [KIND_COLOURS[k] for k in kinds]
    font = {"size": 20 if large else 14}
    # a panel title longer than its panel is wide ran into the next one ("Held-out accuracy (95% interval)" at
    # 1280×720): broken into lines of at most a panel's width on a 1280-pixel page
    panel_px = PANEL_WIDTH_PX_LARGE if large else PANEL_WIDTH_PX
    # the panel titles are annotations (plotly's 16 px): as large as the rest of the figure on the projector
    panel_font = font["size"] if large else 16
    heads = [wrap_note(esc(t), panel_font, panel_px) for t in panel_titles]
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.09, subplot_titles=heads)
    accs = [float(a) for a in accuracies]
    fig.add_trace(go.Bar(x=accs, y=y, orientation="h", marker_color=colours, text=[_pct(a) for a in accs],
                         textposition="inside", insidetextanchor="start", textfont={**font, "color": "white"},
                         error_x={"type": "data", "symmetric": False, "thickness": 2, "width": 6, "color": "#111827",
                                  "array": [hi - a for a, (_, hi) in zip(accs, intervals)],
                                  "arrayminus": [a - lo for a, (lo, _) in zip(accs, intervals)]},
                         customdata=[[_pct(lo), _pct(hi)] for lo, hi in intervals],
                         hovertemplate="%{x:.1%} (95%: %{customdata[0]}–%{customdata[1]})<extra></extra>"),
                  row=1, col=1)
    fig.add_trace(go.Bar(x=[max(int(n), 1) for n in trained], y=y, orientation="h", marker_color=colours,
                         text=[f"{int(n):,}" for n in trained], textposition="outside", cliponaxis=False, textfont=font,
                         hovertemplate="%{x:,}<extra></extra>"), row=1, col=2)
    fig.add_trace(go.Bar(x=[float(t) for t in seconds], y=y, orientation="h", marker_color=colours,
                         text=[f"{float(t):.0f} s" for t in seconds], textposition="outside", cliponaxis=False,
                         textfont=font, hovertemplate="%{x:.1f} s<extra></extra>"), row=1, col=3)
    base_layout(fig, title, large=large, height=height or (130 + (80 if large else 75) * len(labels)))
    # no tick at an axis' far end: it would run into the next panel's first tick
    fig.update_xaxes(range=[0, 1], tickformat=".0%", tickvals=[0, 0.25, 0.5, 0.75], row=1, col=1)
    fig.update_xaxes(type="log", range=[0, np.log10(max([10, *trained])) + 1.2], dtick=2, row=1, col=2)
    fig.update_xaxes(range=[0, max([1.0, *seconds]) * 1.45], row=1, col=3)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(showlegend=False, bargap=0.3)
    fig.update_annotations(font_size=panel_font)
    extra = (max(head.count("<br>") for head in heads) if heads else 0) * 1.3 * panel_font
    if title:  # the title at the very top, the panel titles in their own band below it (they overlapped by a fifth)
        fig.update_layout(margin={"t": round((120 if large else 100) + extra)},
                          title={"y": 0.99, "yref": "container", "yanchor": "top"})
    elif extra:
        fig.update_layout(margin={"t": round(fig.layout.margin.t + extra)})
    return fig
