"""Figure of the pre-training objectives page: numbers in, ``go.Figure`` out.

The page's other figures reuse the builders of the BERT pages (``bert.topk_bars``, ``bert.token_strip``)
and of the evidence page (``evidence.layer_curves``, ``evidence.word_heatmap``). All translated text is
passed in by the page; tokens are escaped before they reach plotly.
"""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .style import base_layout, esc


def position_bars(labels: Sequence[str], groups: Sequence[tuple[str, Sequence[float | None], str]], *,
                  title: str | None = None, yaxis_title: str = "P", highlight: int | None = None,
                  large: bool = False) -> go.Figure:
    """Grouped bars, one group per token: the probability each model gave the real token there.

    ``groups`` = ``[(legend name, one value per token (None: no value), colour)]``. Token positions are
    integers with ``ticktext`` (a sentence may repeat a character); ``highlight`` shades one position.
    """
    font = 20 if large else 15
    x = list(range(len(labels)))
    fig = go.Figure()
    for name, values, colour in groups:
        ys = [None if v is None else float(v) for v in values]
        fig.add_trace(go.Bar(
            x=x, y=ys, name=esc(name), marker_color=colour,
            text=["" if v is None else f"{v:.0%}" if v >= 0.01 else "<1%" for v in ys], textposition="outside",
            customdata=[esc(label) for label in labels],
            hovertemplate=f"{esc(name)}<br>%{{customdata}}: %{{y:.4f}}<extra></extra>",
        ))
    if highlight is not None and 0 <= highlight < len(labels):
        fig.add_vrect(x0=highlight - 0.5, x1=highlight + 0.5, fillcolor="#fde68a", opacity=0.45, line_width=0,
                      layer="below")
    fig.update_xaxes(tickvals=x, ticktext=[esc(label) for label in labels], tickangle=0,
                     tickfont={"size": font + 3}, range=[-0.6, len(labels) - 0.4])
    fig.update_yaxes(title_text=yaxis_title, tickformat=".0%", range=[0, 1.12])
    base_layout(fig, title, large=large, height=420 if large else 380)
    fig.update_layout(barmode="group", bargap=0.25,
                      legend={"orientation": "h", "x": 0, "y": 1.02, "xanchor": "left", "yanchor": "bottom"})
    return fig
