"""Figure of the pre-training objectives page: numbers in, ``go.Figure`` out.

The page's other figures reuse the builders of the BERT pages (``bert.topk_bars``, ``bert.token_strip``)
and of the evidence page (``evidence.layer_curves``, ``evidence.word_heatmap``). All translated text is
passed in by the page; tokens are escaped before they reach plotly.
"""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .style import esc, style_layout


def position_bars(labels: Sequence[str], groups: Sequence[tuple[str, Sequence[float | None], str]], *,
                  title: str | None = None, yaxis_title: str = "P", highlight: int | None = None,
                  large: bool = False) -> go.Figure:
    """Grouped bars, one group per token: the probability each model gave the real token there.

    ``groups`` = ``[(legend name, one value per token (None: no value), colour)]``. Token positions are
    integers with ``ticktext`` (a sentence may repeat a character); ``highlight`` shades one position.
    """
    font = 20 if large else 15
    x = list(range(len(labels)))
    traces = []
    for name, values, colour in groups:
        ys = [None if v is None else float(v) for v in values]
        traces.append(go.Bar(
            x=x, y=ys, name=esc(name), marker_color=colour,
            text=["" if v is None else f"{v:.0%}" if v >= 0.01 else "<1%" for v in ys], textposition="outside",
            customdata=[esc(label) for label in labels],
            hovertemplate=f"{esc(name)}<br>%{{customdata}}: %{{y:.4f}}<extra></extra>",
        ))
    # One layout dict, not add_vrect / update_*: plotly validates each call, and this chart is rebuilt for
    # every sentence a class types (core/runtime/concurrency.py).
    layout = style_layout(title, large=large, height=420 if large else 380)
    layout.update(
        barmode="group", bargap=0.25,
        legend={**layout["legend"], "orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"},
        xaxis={"tickvals": x, "ticktext": [esc(label) for label in labels], "tickangle": 0,
               "tickfont": {"size": font + 3}, "range": [-0.6, len(labels) - 0.4]},
        yaxis={"title": {"text": yaxis_title}, "tickformat": ".0%", "range": [0, 1.12]})
    if highlight is not None and 0 <= highlight < len(labels):
        layout["shapes"] = [{"type": "rect", "xref": "x", "yref": "paper", "x0": highlight - 0.5, "x1": highlight + 0.5,
                             "y0": 0, "y1": 1, "fillcolor": "#fde68a", "opacity": 0.45, "line": {"width": 0},
                             "layer": "below"}]
    fig = go.Figure(data=traces, layout=layout)
    return fig
