"""Accessibility without a browser: every chart that shows data has its numbers in a table beside it (its text
alternative), the table holds what the chart plots, and the category colours stay apart under simulated
colour-vision deficiencies while sense groups also differ in marker shape. The browser tier
(tests/e2e/test_accessibility_browser.py) runs axe-core on the served app."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from apptest_support import chart_tables, plotly_array, unexpected_errors
from core.figures.style import PALETTE
from core.figures.vectors import sense_markers
from ui import PAGES
from ui.i18n import translate

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240
TABLE_LABEL = translate("zh", "page.chart_data")


def chart_expanders(at: AppTest) -> list:
    return [e for e in at.expander if e.label == TABLE_LABEL]


@pytest.fixture(scope="module")
def app(tiny_embedded) -> AppTest:
    """The app on the embedded models' stand-ins: which charts get tables is the pages' handling."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    return at


def test_every_chart_with_data_has_a_table(app):
    """A chart that plots anything (not the ELMo diagram, which is shapes and text) has a collapsed table."""
    for spec in PAGES:
        app.switch_page(spec.path).run()
        assert not unexpected_errors(app), spec.path
        charts = [json.loads(c.proto.spec) for c in app.get("plotly_chart")]
        with_data = [c for c in charts if c.get("data")]
        expanders = chart_expanders(app)
        assert all(not e.proto.expanded for e in expanders), f"{spec.path}: a table open by default"
        assert not any(e.table for e in expanders), f"{spec.path}: a closed table built (issue #50)"
        tables = chart_tables(app)  # every expander opened, as a reader who clicks them
        assert not unexpected_errors(app), spec.path
        opened = chart_expanders(app)
        assert all(len(e.table) == 1 for e in opened), f"{spec.path}: an open expander without its one table"
        assert len(expanders) == len(opened) == len(tables) == len(with_data), (
            f"{spec.path}: {len(with_data)} charts with data, {len(expanders)} expanders, {len(tables)} tables")


def test_the_static_pages_table_holds_the_plotted_points(app):
    """The static-vs-contextual chart's table: one row per plotted point, at the chart's own coordinates,
    with the sentence each occurrence comes from."""
    app.switch_page("app_pages/static_vs_contextual/page.py").run()
    chart = json.loads(app.get("plotly_chart")[0].proto.spec)
    table = chart_tables(app)[0].value
    points = [(float(x), float(y)) for trace in chart["data"]
              for x, y in zip(plotly_array(trace["x"]), plotly_array(trace["y"]))]
    x_col, y_col = translate("zh", "page.chart_col.x"), translate("zh", "page.chart_col.y")
    shown = [(float(x.replace("\\", "")), float(y.replace("\\", ""))) for x, y in zip(table[x_col], table[y_col])]
    assert len(shown) == len(points)
    assert np.allclose(shown, points, rtol=1e-3, atol=1e-3)
    details = " ".join(table[translate("zh", "page.chart_col.detail")])
    assert "我吃了一个【苹果】" in details  # the sentence of the first occurrence, as in its hover


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_chart_toolbars_hold_one_camera_named_in_the_pages_language(tiny_embedded, lang):
    """Every chart's toolbar is the camera alone (zoom, pan, autoscale and fullscreen were 8 Tab stops per chart,
    issue #54), saving an SVG, and plotly's strings come in the page's language (its plotly.js has no Chinese)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page("app_pages/fill_mask/page.py").run()
    tag = {"zh": "zh-CN", "en": "en"}[lang]
    configs = [json.loads(c.proto.config) for c in at.get("plotly_chart")]
    assert configs
    for config in configs:
        assert config["modeBarButtons"] == [["toImage"]]
        assert config["toImageButtonOptions"]["format"] == "svg"
        assert config["locale"] == tag
        dictionary = config["locales"][tag]["dictionary"]
        assert dictionary["Download plot"] == translate(lang, "page.plotly.download")
        assert all(dictionary.values()) and not any(v.startswith("page.") for v in dictionary.values())
    assert translate("zh", "page.plotly.download") == "下载图表（SVG）"


# ---- colours -----------------------------------------------------------------------------------------------
# Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB: how a colour looks to a dichromat
CVD = {"protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                      [-0.003882, -0.048116, 1.051998]],
       "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                        [-0.011820, 0.042940, 0.968881]]}
SRGB_TO_XYZ = [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear: np.ndarray) -> np.ndarray:
    xyz = np.array(SRGB_TO_XYZ) @ np.clip(linear, 0, 1)
    f = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(f > 0.008856, np.cbrt(f), 7.787 * f + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def smallest_difference(colours: list[str], deficiency: str) -> float:
    """The smallest CIE76 ΔE between two of ``colours`` as a dichromat sees them."""
    m = np.array(CVD[deficiency])
    return min(float(np.linalg.norm(_lab(m @ _linear(a)) - _lab(m @ _linear(b))))
               for a, b in itertools.combinations(colours, 2))


@pytest.mark.parametrize("deficiency", list(CVD))
def test_the_first_four_categories_stay_apart_for_colour_blind_readers(deficiency):
    """ΔE ≥ 15 (clearly different) between the first four category colours, the ones the sense groups and
    the ELMo / BERT series use; D3's category10 had 4.6 (protanopia: green vs orange) and 7.3 (deuteranopia:
    red vs green)."""
    assert smallest_difference(PALETTE[:4], deficiency) >= 15
    assert smallest_difference(["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e"], deficiency) < 15  # the check bites


def test_sense_groups_differ_in_colour_and_shape():
    markers = sense_markers(["fruit", "company", "fruit", None, "phone"])
    named = [markers[label] for label in ("fruit", "company", "phone")]
    assert len({m["color"] for m in named}) == 3 and len({m["symbol"] for m in named}) == 3
    assert markers[None]["symbol"] == "circle" and markers[None]["color"] not in {m["color"] for m in named}


def test_the_spoken_summary_reads_only_the_axes_that_have_a_title():
    """An axis without a title is not read out as "vertical axis: —" (issue #54)."""
    import plotly.graph_objects as go

    from ui.page import spoken_summary

    fig = go.Figure(go.Bar(x=["我", "你"], y=[0.5, 0.25]), layout={"xaxis": {"title": {"text": "词"}}})
    said = spoken_summary(fig)
    assert translate("zh", "page.spoken.x_axis", x="词") in said
    assert translate("zh", "page.spoken.y_axis", y="X").split("X")[0] not in said  # "纵轴：" not said
