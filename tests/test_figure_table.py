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


def test_a_charts_summary_names_each_blank_its_largest_items_and_a_strips_words():
    """The spoken summary (issue #54): bars by their subplot's title (which blank) with their largest items as the
    bars write them, a heatmap's largest cell, a token strip's words, legend-only entries by name."""
    import numpy as np
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from core.figures.table import figure_summary

    fig = make_subplots(rows=1, cols=2, subplot_titles=("第 1 个 [MASK]", "第 2 个 [MASK]"))
    fig.add_trace(go.Bar(y=["小", "苹", "半", "口"], x=[0.078, 0.07, 0.031, 0.2], orientation="h",
                         text=["7.8%", "7.0%", "3.1%", "20.0%"]), row=1, col=1)
    fig.add_trace(go.Bar(y=["果", "蛋"], x=[0.163, 0.114], orientation="h"), row=1, col=2)
    fig.add_trace(go.Scatter(x=[None], y=[None], name="图例项"))
    summary = figure_summary(fig)
    bars = [s for s in summary["series"] if s["kind"] == "bar"]
    assert [b["name"] for b in bars] == ["第 1 个 [MASK]", "第 2 个 [MASK]"]
    assert bars[0]["largest"] == [["口", "20.0%"], ["小", "7.8%"], ["苹", "7.0%"]]
    assert bars[1]["largest"] == [["果", "0.163"], ["蛋", "0.114"]]
    assert {"kind": "legend", "name": "图例项"} in summary["series"]
    heat = figure_summary(go.Figure(go.Heatmap(z=np.array([[0.1, 0.9], [0.3, 0.2]]), x=["a", "b"], y=["c", "d"])))
    assert heat["series"][0]["largest"] == ["c", "b", "0.9"]
    strip = figure_summary(go.Figure(go.Heatmap(z=[[0, 1]], text=[["我", "[MASK]"]], y=["模型看到"])))
    assert strip["series"][0]["rows"] == [["模型看到", ["我", "[MASK]"]]]


def test_each_blanks_rows_say_which_blank_and_one_axis_pair_names_the_columns():
    """Issue #54 item 1: two [MASK]s' bars in one table, each row named by its subplot's title (which blank); a chart
    with one pair of axes names the table's x and y columns by its axis titles, a chart of subplots keeps the
    generic names (one title cannot name every subplot's column)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from core.figures.table import axis_titles

    fig = make_subplots(rows=1, cols=2, subplot_titles=("第 1 个 [MASK]", "第 2 个 [MASK]"))
    fig.add_trace(go.Bar(y=["小", "苹"], x=[0.078, 0.07], orientation="h"), row=1, col=1)
    fig.add_trace(go.Bar(y=["果"], x=[0.163], orientation="h"), row=1, col=2)
    fig.update_xaxes(title_text="概率")
    table, _ = figure_table(fig)
    assert list(table["series"]) == ["第 1 个 [MASK]", "第 1 个 [MASK]", "第 2 个 [MASK]"]
    assert axis_titles(fig) == {}
    single = go.Figure(go.Bar(x=["我", "你"], y=[0.5, 0.25]), layout={"xaxis": {"title": {"text": "词"}}})
    assert axis_titles(single) == {"x": "词"}  # no y title: that column keeps its generic name
