"""The class board's picture: every student's occurrence of the word, coloured by the sense the student chose,
as the ELMo page's mix scatter draws occurrences, with the viewer's own points ringed (black: no sense's colour)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .vectors import mix_scatter


def class_scatter(coords: np.ndarray, ids: Sequence[str], labels: Sequence[str | None], hover: Sequence[str], *,
                  mine: Sequence[int] = (), mine_name: str = "", explained: np.ndarray | None = None,
                  title: str | None = None, points_name: str = "", large: bool = False, narrow: bool = False,
                  height: int = 460, senses: Sequence[str] = ()) -> go.Figure:
    """``coords`` (n, 2) in the board's projection frame; ``mine``: indices of the viewer's own points.
    ``narrow``: a phone's width, where the legend takes two rows. ``senses``: the board's senses in the
    lecturer's order, which the colours and the legend follow (not the order the first sentences came in)."""
    fig = mix_scatter(coords, ids, labels, hover, explained=explained, title=title, mixed_name=points_name,
                      large=large, height=height, sense_order=senses)
    # the legend clear of the x axis's title at projector font sizes and on a phone too
    fig.update_layout(legend={"y": -0.3 if narrow else -0.24 if large else -0.16},
                      margin={"b": 160 if narrow else 130 if large else 110})
    fig.update_traces(cliponaxis=False)  # a number over a point at the top edge ("23") is drawn whole
    if len(mine):
        xy = np.asarray(coords, dtype=float)[list(mine)]
        fig.add_trace(go.Scatter(x=xy[:, 0], y=xy[:, 1], mode="markers", name=mine_name, hoverinfo="skip",
                                 marker={"size": 30, "color": "rgba(0,0,0,0)",
                                         "line": {"width": 4, "color": "#111111"}}))
    return fig
