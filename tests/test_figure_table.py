"""core.figures.table: a chart's text alternative reports what the chart means, not how it is drawn: the real
layer of each point (never a drawing offset) and the interval its error bar shows."""
from __future__ import annotations

from core.figures.evidence import Estimate, interval_dots
from core.figures.table import figure_table
from core.figures.transfer import layer_curve


def test_the_layer_curve_table_gives_real_layers_and_each_points_interval():
    """Two poolings drawn side by side at every layer: their rows name layers 0, 1, 2 (the axis's own labels),
    with the 95 % interval of each accuracy."""
    fig = layer_curve(["token", "layer 1", "layer 2"], {"CLS": [0.6, 0.7, 0.8], "mean": [0.62, 0.75, 0.78]},
                      selected=1, intervals={"CLS": [(0.5, 0.7), (0.6, 0.8), (0.7, 0.9)],
                                             "mean": [(0.52, 0.72), (0.65, 0.85), (0.68, 0.88)]})
    table, total = figure_table(fig)
    assert total == 6
    assert list(table["x"]) == ["0 token", "1 layer 1", "2 layer 2"] * 2
    assert [float(v) for v in table["low"]] == [0.5, 0.6, 0.7, 0.52, 0.65, 0.68]
    assert [float(v) for v in table["high"]] == [0.7, 0.8, 0.9, 0.72, 0.85, 0.88]
    for trace in fig.data:  # the data hold whole layer numbers: the side-by-side shift is plotly's, when drawn
        assert list(trace.x) == [0, 1, 2]
    assert fig.layout.scattermode == "group"


def test_horizontal_error_bars_give_their_interval_too():
    fig = interval_dots([Estimate("A", 0.8, 0.7, 0.9), Estimate("B", 0.6, 0.55, 0.65)])
    table, _ = figure_table(fig)
    assert [(float(lo), float(hi)) for lo, hi in zip(table["low"], table["high"])] == [(0.7, 0.9), (0.55, 0.65)]


def test_a_chart_without_error_bars_has_no_interval_columns():
    fig = layer_curve(["token", "layer 1"], {"CLS": [0.6, 0.7]}, selected=None)
    table, _ = figure_table(fig)
    assert "low" not in table.columns and "high" not in table.columns
