"""Shared look of every figure: large, high-contrast, CJK-safe fonts for a projector; how wide a label renders
and where a long note wraps."""
from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

# The look is plotly_white, applied as plotly's default template: plotly adds the default at
# serialisation without re-validating it, while `template=...` in a layout deep-copies and validates
# the whole template (~40 ms a figure, a third of a fill-mask rerun). The JSON sent is the same.
TEMPLATE = "plotly_white"

# Local fonts only (fonts-noto-cjk on Debian); the browser falls back to any installed CJK font.
FONT_FAMILY = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, Microsoft YaHei, PingFang SC, sans-serif"
# Categories: the Okabe–Ito palette (blue, vermillion, bluish green, orange, reddish purple, sky blue, black), told
# apart with the common colour-vision deficiencies (deuteranopia, protanopia); its yellow is left out, too pale on
# white. Groups of points also differ by marker shape (SYMBOLS), so that no one needs colour to tell them apart.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000"]
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "cross", "x", "pentagon", "hexagram"]
STATIC_COLOUR = "#444444"


# The room an axis title keeps from its tick labels. plotly.js does not apply the template's ``automargin`` in the
# app (the evidence charts' y title sat on the tick labels inside a fixed 60-px margin), so a titled axis sets it
# itself: the margin then grows to hold the tick labels and the title, this far apart.
TITLE_STANDOFF = 12
MAX_FIGURE_WIDTH = 1400  # px: the main area of a 1920-wide screen with the sidebar open


def titled_axis(text: str) -> dict:
    """An axis's title and the margin that holds it clear of the tick labels (``update_xaxes(**titled_axis(..))``)."""
    return {"title": {"text": text, "standoff": TITLE_STANDOFF}, "automargin": True}


def esc(text: object) -> str:
    """User text made safe for plotly labels and hover (plotly shows &lt; &gt; &amp; as < > &)."""
    return html.escape(str(text), quote=False)


def plot_config(filename: str = "elmo-bert-lab") -> dict:
    """plotly's toolbar: no logo; its camera button saves an SVG (sharp on slides) named ``filename``."""
    return {"displaylogo": False, "toImageButtonOptions": {"format": "svg", "filename": filename}}


def font_size(large: bool) -> int:
    """The figures' text size in px; ``large``: presentation mode."""
    return 20 if large else 15


def text_width(label: str, font_px: float) -> float:
    """Approximate rendered width in px: CJK/fullwidth characters are one em, others ~0.6 em."""
    width = 0.0
    for ch in str(label):
        wide = unicodedata.east_asian_width(ch) in ("W", "F") or ord(ch) >= 0x1F000
        width += font_px * (1.0 if wide else 0.62)
    return width


_PIECE = re.compile(r"[\u3000-\u9fff\uff00-\uffef]|[^\s\u3000-\u9fff\uff00-\uffef]+\s*|\s+")
_CLOSING = "）」』，。、：；！？)"  # never the first character of a line


def wrap_note(text: str, font_px: float, max_px: float) -> str:
    """``text`` (plotly markup, lines split by ``<br>``) broken between words, or between CJK characters,
    so that no line is wider than ``max_px``."""
    lines = []
    for line in text.split("<br>"):
        current = ""
        for piece in _PIECE.findall(line):
            if (current.strip() and piece[0] not in _CLOSING
                    and text_width((current + piece).rstrip(), font_px) > max_px):
                lines.append(current.rstrip())
                current = piece.lstrip()
            else:
                current += piece
        lines.append(current.rstrip())
    return "<br>".join(lines)


def style_layout(title: str | None = None, *, large: bool = False, height: int | None = None) -> dict:
    """The common layout as a dict, for builders that hand plotly the whole layout at once;
    ``large`` is presentation mode (bigger fonts for the back row)."""
    if pio.templates.default != TEMPLATE:  # importing streamlit sets its own default; setting costs ~50 ms
        pio.templates.default = TEMPLATE
    size = font_size(large)
    layout: dict[str, Any] = {
        "title": {"text": title, "font": {"size": size + 4, "weight": "bold"}} if title else None,
        "font": {"family": FONT_FAMILY, "size": size},
        "hoverlabel": {"font": {"family": FONT_FAMILY, "size": size}},
        "margin": {"l": 60, "r": 30, "t": 60 if title else 30, "b": 50},
        "colorway": PALETTE,
        "legend": {"font": {"size": size}},
    }
    if height:
        layout["height"] = height
    return layout


def base_layout(fig: go.Figure, title: str | None = None, *, large: bool = False,
                height: int | None = None) -> go.Figure:
    """Apply the common layout to a built figure."""
    return fig.update_layout(style_layout(title, large=large, height=height))


def export_html(fig: go.Figure) -> str:
    """A standalone HTML file with plotly.js inlined: opens offline, fetches nothing."""
    return fig.to_html(include_plotlyjs=True, full_html=True)
