"""The attention page's tabs, each drawing one reduction of an ``AttentionView`` for the chosen token:
one layer and head, every layer × head, the head average per layer, rollout, and one token's row.
Only the open tab is drawn; its controls only slice the view's arrays.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import streamlit as st

from core.attention.view import AttentionView
from core.figures import attention as figs
from core.figures.predictions import topk_bars
from core.figures.style import export_html
from core.guard.safe_text import md_escape
from ui import downloads, presentation
from ui.i18n import t
from ui.page import chart, presenting, tall, unfolded
from ui.state import Field, in_range, seed, sync_to_url

ROW_SOURCES = ("head_avg", "rollout", "head")
PROJECTOR_HEATMAP_PX = 600  # what lies below the scene bar at 1280×720
TALL_PROJECTOR_HEATMAP_PX = 900  # ... and at 1920×1080, where the 720p map took a third of the width
ss = st.session_state


def _layer_names(view: AttentionView) -> list[str]:
    return [t("att.layer_n", l=l + 1) for l in range(view.num_layers)]


def _matrix_csv(matrix: np.ndarray, labels: list[str]) -> bytes:
    frame = pd.DataFrame(matrix, index=[f"{i}:{lab}" for i, lab in enumerate(labels)],
                         columns=[f"{i}:{lab}" for i, lab in enumerate(labels)])
    buffer = io.StringIO()
    frame.to_csv(buffer)
    return buffer.getvalue().encode("utf-8")


# ---- one layer, one head ------------------------------------------------------------------------
@presentation.fragment
def single_head(view: AttentionView, token: int) -> None:
    L, H, labels, large = view.num_layers, view.num_heads, view.labels, presenting()
    seed(Field("att_layer", "layer", 1, in_range(1, L)), Field("att_head", "head", 1, in_range(1, H)))
    with st.container(key="att_head_view"):  # the scene "attention": the sliders and the whole heatmap
        # on the projector the sliders stand beside the heatmap: both fit below the scene bar at 1280×720
        if large:
            map_area, slider_area = st.columns([2, 1], gap="large", vertical_alignment="center")
            layer_area = head_area = slider_area
        else:
            layer_area, head_area = st.columns(2)
            map_area = st.container()
        layer_area.slider(t("att.layer"), 1, max(L, 2), key="att_layer", persist_state="session", disabled=L == 1)
        head_area.slider(t("att.head"), 1, max(H, 2), key="att_head", persist_state="session", disabled=H == 1)
        layer, head = ss["att_layer"], ss["att_head"]
        sync_to_url(layer=layer, head=head)
        matrix = view.att[layer - 1, head - 1]
        fig = figs.attention_heatmap(matrix, labels, title=t("att.heatmap_title", l=layer, h=head),
                                     x_title=t("att.axis_to"), y_title=t("att.axis_from"), highlight_row=token,
                                     large=large, max_height=(TALL_PROJECTOR_HEATMAP_PX if tall() else
                                                              PROJECTOR_HEATMAP_PX) if large else None)
        with map_area:
            # a student alone reads the chosen token's row first, one labelled bar a token: a 17 × 17 map is hard
            # to read, and on a phone its cells and labels shrink to nothing (the map stays one switch away)
            if not large:
                chart(topk_bars([(t("att.row_title", token=labels[token], l=layer, h=head),
                                       [f"{i}: {label}" for i, label in enumerate(labels)], matrix[token])],
                                     xaxis_title=t("att.weight")), "att_token_bars")
            if unfolded(t("att.full_map", n=len(labels)), "att_full_map"):
                chart(fig, "att_heatmap", width="content")
    row_sums = matrix.sum(axis=1)
    st.caption(t("att.heatmap_note", sums=f"{float(row_sums.min()):.4f} … {float(row_sums.max()):.4f}"))
    d1, d2 = st.columns(2)
    # files are made on click, not on every rerun (the HTML inlines plotly.js: 4.8 MB)
    d1.download_button(t("att.download_csv"), lambda: _matrix_csv(matrix, labels),
                       file_name=f"attention_L{layer}_H{head}.csv", mime="text/csv", on_click="ignore",
                       key="att_dl_csv")
    d2.download_button(t("att.download_html"), lambda: export_html(fig), file_name=f"attention_L{layer}_H{head}.html",
                       mime="text/html", on_click="ignore", key="att_dl_html")
    downloads.bertviz_button(view)


# ---- every layer × head --------------------------------------------------------------------------
def every_head(view: AttentionView, token: int) -> None:
    L, H, labels, large = view.num_layers, view.num_heads, view.labels, presenting()
    st.markdown(t("att.grid_intro"))
    grid = figs.attention_grid(view.att, labels, layer_names=[t("att.layer_short", l=l + 1) for l in range(L)],
                               head_names=[t("att.head_short", h=h + 1) for h in range(H)], large=large)
    chart(grid, "att_grid", width="content")
    seed(Field("att_zoom", None, 0, in_range(0, L * H - 1)))
    st.selectbox(t("att.zoom"), list(range(L * H)), key="att_zoom", persist_state="session",
                 format_func=lambda k: t("att.heatmap_title", l=k // H + 1, h=k % H + 1))
    zl, zh = divmod(ss["att_zoom"], H)
    chart(figs.attention_heatmap(view.att[zl, zh], labels, title=t("att.heatmap_title", l=zl + 1, h=zh + 1),
                                 x_title=t("att.axis_to"), y_title=t("att.axis_from"), highlight_row=token,
                                 large=large), "att_zoomed", width="content")


# ---- head average per layer ----------------------------------------------------------------------
def head_average(view: AttentionView, token: int) -> None:  # every tab takes the token
    st.markdown(t("att.avg_intro"))
    chart(figs.layer_maps(view.head_avg, view.labels, titles=_layer_names(view), large=presenting()), "att_avg",
          width="content")


# ---- rollout -------------------------------------------------------------------------------------
def rollout(view: AttentionView, token: int) -> None:  # every tab takes the token
    st.markdown(t("att.rollout_intro"))
    chart(figs.layer_maps(view.rollout, view.labels, large=presenting(),
                          titles=[t("att.rollout_upto", l=l + 1) for l in range(view.num_layers)]), "att_rollout",
          width="content")


# ---- one token's row -------------------------------------------------------------------------------
def token_row(view: AttentionView, token: int) -> None:
    L, H, labels = view.num_layers, view.num_heads, view.labels
    st.radio(t("att.row_source"), ROW_SOURCES, key="att_row_source", persist_state="session", horizontal=True,
             format_func=lambda s: t(f"att.row_source.{s}"))
    source = ss["att_row_source"]
    sync_to_url(rows=None if source == "head_avg" else source)
    if source == "head_avg":
        rows = view.head_avg[:, token, :]
    elif source == "rollout":
        rows = view.rollout[:, token, :]
    else:
        rows = view.att[:, min(int(ss.get("att_head") or 1), H) - 1, token, :]
    st.markdown(t("att.row_intro", token=md_escape(labels[token])))
    chart(figs.row_bars(rows, labels, layer_names=_layer_names(view), y_title=t("att.weight"), highlight=token,
                        large=presenting()), "att_rows", width="content")
    top = [labels[j] for j in np.argsort(-rows[-1])[:3]]
    st.caption(t("att.row_top", layer=L, top=md_escape(" · ".join(top))))


TABS = {"head": single_head, "grid": every_head, "avg": head_average, "rollout": rollout, "row": token_row}
