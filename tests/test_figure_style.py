"""The shared figure look survives serialisation: what the browser receives is plotly_white with the
lab's fonts and colours (the template is applied as plotly's default, not per figure), also after
importing streamlit, which sets plotly's default template to its own."""
from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import streamlit  # noqa: F401  (imported first on purpose: it replaces plotly's default template)

from core.figures import bert as figs
from core.figures.style import FONT_FAMILY, PALETTE, base_layout


def _sent_layout(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))["layout"]


def test_builder_figures_reach_the_browser_as_plotly_white_with_lab_fonts():
    pio.templates.default = "streamlit"  # as streamlit leaves it, whatever the import order of this session
    fig = figs.topk_bars([("mask 1", ["果", "子"], [0.6, 0.2])], xaxis_title="p")
    layout = _sent_layout(fig)
    white = pio.templates["plotly_white"].layout
    assert layout["template"]["layout"]["plot_bgcolor"] == white.plot_bgcolor
    assert layout["template"]["layout"]["xaxis"]["gridcolor"] == white.xaxis.gridcolor
    assert layout["font"]["family"] == FONT_FAMILY
    assert layout["colorway"] == PALETTE


def test_presentation_mode_enlarges_the_fonts():
    normal = _sent_layout(base_layout(go.Figure(), "t"))
    large = _sent_layout(base_layout(go.Figure(), "t", large=True))
    assert large["font"]["size"] > normal["font"]["size"]
    assert large["title"]["font"]["size"] > normal["title"]["font"]["size"]
