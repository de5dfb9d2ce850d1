"""The shared figure look survives serialisation: what the browser receives is plotly_white with the
lab's fonts and colours (the template is applied as plotly's default, not per figure), also after
importing streamlit, which sets plotly's default template to its own."""
from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit  # noqa: F401  (imported first on purpose: it replaces plotly's default template)

from core.figures import predictions as figs
from core.figures.grid import subplot_grid
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


def test_subplot_grid_lays_cells_out_row_major_inside_the_plot_area():
    grid = subplot_grid(2, 3, count=5, titles=[f"t{i}" for i in range(5)], h_spacing=0.05, v_spacing=0.1)
    assert [(c.row, c.col) for c in grid.cells] == [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2)]
    assert [c.x for c in grid.cells] == ["x", "x2", "x3", "x4", "x5"]
    assert "xaxis6" not in grid.layout  # no empty frame for the sixth cell
    for cell in grid.cells:
        x0, x1 = grid.layout[cell.xaxis]["domain"]
        y0, y1 = grid.layout[cell.yaxis]["domain"]
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
        assert grid.layout[cell.xaxis]["anchor"] == cell.y and grid.layout[cell.yaxis]["anchor"] == cell.x
    first, second = grid.layout["yaxis"]["domain"], grid.layout["yaxis4"]["domain"]
    assert first[0] > second[1]  # the first row is on top, v_spacing apart
    assert abs(first[0] - second[1] - 0.1) < 1e-9
    titles = grid.layout["annotations"]
    assert [a["text"] for a in titles] == [f"t{i}" for i in range(5)]
    assert titles[1]["x"] == sum(grid.layout["xaxis2"]["domain"]) / 2
    go.Figure(layout=grid.layout)  # plotly accepts it as it is


@pytest.mark.parametrize("rows, cols, count", [(0, 2, None), (2, 2, 5), (1, 1, 0)])
def test_subplot_grid_rejects_impossible_grids(rows, cols, count):
    with pytest.raises(ValueError):
        subplot_grid(rows, cols, count=count)
