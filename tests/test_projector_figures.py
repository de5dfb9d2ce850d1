"""Figures that must fit a 1280×720 projector below the scene bar (issue #27): the attention heatmap keeps
every column's label within its height limit, the static figure's note stays inside the left subplot, and a
token strip's long row names leave its cells room for "[MASK]" (issue #37: it spilled out of its cell in English)."""
from __future__ import annotations

import numpy as np

from core.figures.bert import attention_heatmap, text_width, token_strip, wrap_note

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
