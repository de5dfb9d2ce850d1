"""Figures that must fit a 1280×720 projector below the scene bar (issue #27): the attention heatmap keeps
every column's label within its height limit, the static figure's note stays inside the left subplot, a
token strip's long row names leave its cells room for "[MASK]" (issue #37: it spilled out of its cell in English),
axis titles keep clear of the tick labels and inside the figure (issue #37)."""
from __future__ import annotations

import numpy as np
import pytest

from core.figures.attention import attention_heatmap
from core.figures.evidence import Series, layer_curves, preset_bars, specificity_panels
from core.figures.predictions import AXIS_TITLE_PX, NARROW_PX, candidate_bars, token_strip, topk_bars
from core.figures.style import text_width, wrap_note
from core.figures.table import figure_table
from ui.i18n import translate

LABELS = ["[CLS]", *"苹果昨天发布了新手机", "[SEP]"]


def test_heatmap_fits_its_height_and_labels_every_column():
    fig = attention_heatmap(np.full((12, 12), 1 / 12), LABELS, title="L1 · H1", x_title="to", y_title="from",
                            large=True, max_height=600)
    assert fig.layout.height <= 600
    shown = [label.replace("<br>", "") for label in fig.layout.xaxis.ticktext]
    assert shown == LABELS  # too wide for one row: two rows, none left out
    assert any(label.startswith("<br>") for label in fig.layout.xaxis.ticktext)


def test_heatmap_without_a_limit_keeps_one_row_of_labels():
    fig = attention_heatmap(np.full((12, 12), 1 / 12), LABELS, large=True)
    assert list(fig.layout.xaxis.ticktext) == LABELS


def test_notes_wrap_to_the_left_subplot():
    note = "“元宇宙” is not in the vocabulary (OOV)<br>a static embedding has no vector for it"
    lines = wrap_note(note, 20, max_px=260).split("<br>")
    assert all(text_width(line, 20) <= 260 for line in lines) and len(lines) > 2
    assert " ".join(lines).split() == note.replace("<br>", " ").split()  # words kept whole, none lost
    cjk = wrap_note("「元宇宙」不在词表中（OOV）", 20, 200).split("<br>")
    assert len(cjk) == 2 and not any(line.startswith(("）", "」")) for line in cjk)


def test_long_row_names_of_a_token_strip_take_two_lines():
    """The objective scene in English: the row names on one line left 1136 px (1280×720) too little for the
    cells; on two lines, a cell is wider than "[MASK]" at the cells' font."""
    tokens = list("我吃了一个") + ["[MASK]", "果"]
    names = ["Left to right (ELMo's forward LM standing in for GPT)", "Masked (mini-bert-zh)"]
    fig = token_strip([tokens, tokens], [["seen"] * 7, ["seen"] * 7], colours={"seen": "#eee"}, kind_names={},
                      track_names=names, large=True)
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks[0].replace("<br>", " ") == names[0] and ticks[0].count("<br>") == 1
    assert ticks[1] == names[1]  # a short name stays on one line
    cell = (1136 - fig.layout.margin.l - 30) / 7  # the figure stretches to the main area's width
    assert cell > text_width("[MASK]", 22) + 8

def test_a_token_strip_on_a_phone_names_each_row_above_its_cells():
    """At a phone's width the row names beside the cells left them a sliver (the browser test measures that): each
    name stands above its row, wrapped to the width, and a line holds only the cells that fit beside each other."""
    tokens = list("我吃了一个") + ["[MASK]", "果"]
    names = ["Left to right (ELMo's forward LM standing in for GPT)", "Masked (mini-bert-zh)"]
    kinds = {"colours": {"seen": "#eee"}, "kind_names": {"seen": "visible"}, "track_names": names}
    fig = token_strip([tokens, tokens], [["seen"] * 7] * 2, **kinds, narrow=True)
    assert not fig.layout.yaxis.showticklabels and fig.layout.margin.l < 20
    assert [a.text.replace("<br>", " ") for a in fig.layout.annotations] == names
    assert all(text_width(line, 15) <= NARROW_PX for a in fig.layout.annotations for line in a.text.split("<br>"))
    edges = fig.data[0].x
    assert len(edges) == 8 and edges[-1] <= NARROW_PX  # the seven cells on one line
    widths = [b - a for a, b in zip(edges, edges[1:])]
    assert widths[5] > text_width("[MASK]", 17) > max(widths[:5])  # only [MASK]'s column is wide
    desktop = token_strip([tokens, tokens], [["seen"] * 7] * 2, **kinds)
    assert figure_table(fig)[0].astype(str).equals(figure_table(desktop)[0].astype(str))  # the same screen-reader table
    long = list("苹果昨天发布了新手机苹果昨天掉在了地上")
    wrapped = token_strip([long, long], [["seen"] * len(long)] * 2, **kinds, narrow=True)
    assert len(wrapped.layout.annotations) > 2 and wrapped.data[0].x[-1] <= NARROW_PX


def test_static_figure_stacks_for_a_phone():
    """On a phone the word2vec and contextual spaces stand one above the other, not side by side (#44)."""
    from core.figures.vectors import static_vs_contextual_figure

    kwargs = dict(static_words=["苹果", "香蕉"], static_coords=np.array([[0.0, 0.0], [1.0, 1.0]]),
                  static_explained=np.array([0.6, 0.3]), static_label="w2v", static_hover="", static_note=None,
                  coords=np.array([[0.0, 1.0], [1.0, 0.0]]), ids=["1", "2"], labels=[None, None], hover=["a", "b"],
                  explained=np.array([0.7, 0.2]), axis_range=None, static_title="word2vec",
                  contextual_title="mini-elmo-zh · 第 2 层")
    side = static_vs_contextual_figure(**kwargs).layout
    stacked = static_vs_contextual_figure(**kwargs, stacked=True).layout
    assert side.xaxis.domain[1] < side.xaxis2.domain[0] and side.yaxis.domain == side.yaxis2.domain
    assert stacked.xaxis.domain == stacked.xaxis2.domain and stacked.yaxis2.domain[1] < stacked.yaxis.domain[0]
    assert any(a.text == "mini-elmo-zh<br>第 2 层" for a in stacked.annotations)  # the long title in two lines


def _titled_axes(layout) -> dict:
    return {name: axis for name, axis in layout.to_plotly_json().items()
            if name.startswith(("xaxis", "yaxis")) and axis.get("title", {}).get("text")}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_evidence_axis_titles_keep_clear_of_their_tick_labels(lang):
    """The evidence scene on the projector (#37): the y-axis title 准确率 sat on the tick labels "80%": the margin
    was a fixed 60 px and plotly.js did not apply the template's automargin. Every titled axis of the evidence
    charts now grows the margin to hold its tick labels and its title, a standoff apart."""
    series = [Series("mini-bert-zh", ["0", "1", "2"], [0.8, 0.83, 0.82]),
              Series("mini-elmo-zh", ["0", "1"], [0.79, 0.84], kind="elmo")]
    figures = [layer_curves(series, xaxis_title=translate(lang, "evidence.axis.layer"),
                            yaxis_title=translate(lang, "evidence.axis.accuracy"), baselines=[("word2vec", 0.8)],
                            large=True, height=420),
               preset_bars(["s0", "s1", "s2"], [("POS", [0.0, 0.5, 0.5], "")], large=True),
               specificity_panels([("self", series), ("intra", series)],
                                  xaxis_title=translate(lang, "evidence.axis.layer"), large=True)]
    for fig in figures:
        axes = _titled_axes(fig.layout)
        assert axes, "no titled axis"
        for name, axis in axes.items():
            assert axis.get("automargin") is True, name
            assert axis["title"].get("standoff", 0) >= 8, name


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_whole_word_axis_title_fits_its_narrow_column(lang):
    """The fill scene in English (#37): "Whole-word score (left-to-right character chain)" is wider than the
    whole words' column beside the characters, and plotly clipped it at the figure's edges. It goes on as many
    lines as keep each within AXIS_TITLE_PX (300 px: the column holds about 380 px of plot at 1280×720), the
    figure grows by the added lines, and the axis's margin holds them."""
    title = translate(lang, "fill.word_prob_axis")
    slots = [("words", ["苹果", "鸡蛋", "橙子"], [0.07, 0.045, 0.012])]
    fig = topk_bars(slots, xaxis_title=title, large=True)
    one_line = topk_bars(slots, xaxis_title="P", large=True)
    axis = fig.layout.xaxis
    lines = axis.title.text.split("<br>")
    assert all(text_width(line, 20) <= AXIS_TITLE_PX for line in lines)
    assert " ".join(lines).split() == title.split() or "".join(lines) == title  # nothing lost
    assert axis.automargin is True and axis.title.standoff >= 8
    assert fig.layout.height - one_line.layout.height == (len(lines) - 1) * 26
    if lang == "en":
        assert len(lines) >= 2


def test_candidate_scores_are_never_cut_at_the_plot_edge():
    """On a phone the longest bar reached the plot's edge and its score, written outside, was cut ("1.14e-0"):
    a score goes inside a bar long enough for it, and a score outside is not clipped by the axes."""
    bar = candidate_bars(["苹果", "水果", "公司"], [1.14e-2, 1.55e-3, 3.95e-8]).data[0]
    assert bar.textposition == "auto" and bar.cliponaxis is False
    # written as read aloud (#54): a percentage, below 0.01 % a power of ten; not "1.14e-02"
    assert list(bar.text) == ["1.14%", "0.155%", "3.95×10⁻⁸"]


def test_points_on_one_spot_share_one_label_and_keep_their_own_hover():
    """At layer 0 every occurrence of a character has the same vector: one label "1–4" on the spot, not four numbers
    stacked into a blob (#51); each point keeps its own sentence as its hover."""
    from core.figures.vectors import shared_labels, static_vs_contextual_figure

    same = np.zeros((4, 2))
    assert shared_labels(same, ["1", "2", "3", "4"]) == ["1–4", "", "", ""]
    assert shared_labels(np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), ["1", "2", "3"]) == ["1, 3", "2", ""]
    assert shared_labels(np.array([[0.0, 0.0], [1.0, 1.0]]), ["1", "2"]) == ["1", "2"]
    assert shared_labels(np.zeros((0, 2)), []) == []
    fig = static_vs_contextual_figure(
        static_coords=None, static_words=[], static_explained=None, static_label="w2v", static_hover="",
        static_note=None, coords=same, ids=["1", "2", "3", "4"], labels=["水果", "公司", "水果", "公司"],
        hover=["a", "b", "c", "d"], explained=np.array([0.5, 0.2]), axis_range=None, static_title="w",
        contextual_title="c")
    occurrences = [trace for trace in fig.data if trace.name in ("水果", "公司")]
    assert sorted(t for trace in occurrences for t in trace.text if t) == ["1–4"]
    assert sorted(c for trace in occurrences for c in trace.customdata) == ["a", "b", "c", "d"]
    assert all(trace.cliponaxis is False for trace in occurrences)
