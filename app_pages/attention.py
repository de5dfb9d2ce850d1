"""注意力热力图: BERT's self-attention per layer and head, head averages, rollout, one token's row.

The attention of a sentence (or a sentence pair) is computed once per (model, text) through the
caches; ``core.attention_view.attention_view`` reduces it (hide [CLS]/[SEP], jieba words) and the
selectors below only slice the arrays it returns.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import streamlit as st

from core.attention_view import MAX_CHARS, attention_view, check_text, encode_pair, inspect_text
from core.encoders import Encoding
from core.figures import bert as figs
from core.figures.style import export_html
from core.safe_text import md_escape
from ui import cache
from ui.i18n import t
from ui.page import chart, presenting, show_error
from ui.sidebar import bert_model_name
from ui.state import in_range, keep_widgets, one_of, seed_widget, sync_to_url, url_param

DEFAULT_SENTENCE = "苹果昨天发布了新手机。"
ROW_SOURCES = ("head_avg", "rollout", "head")
TABS = ("head", "grid", "avg", "rollout", "row")  # only the open tab is built: a rerun draws one figure

ss = st.session_state
large = presenting()


# ---- cached model work ------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=128)
def _pair_encoding(name: str, first: str, second: str) -> Encoding:
    return encode_pair(cache.bert_encoder(name), first, second)


@st.cache_data(show_spinner=False, max_entries=256)
def _notes(name: str, text: str):
    return inspect_text(cache.bert_encoder(name), text)


def _encoding(name: str, first: str, second: str) -> Encoding:
    cache.bert_encoder(name)  # a clear error for a non-BERT model before encoding
    if second:
        return _pair_encoding(name, first, second)
    return cache.encode(name, (first,), attentions=True)[0]


# ---- state ------------------------------------------------------------------------------------
seed_widget("att_sentence", url_param("sentence", DEFAULT_SENTENCE))
seed_widget("att_pair", url_param("pair", ""))
seed_widget("att_hide", url_param("hide", False, cast=bool))
seed_widget("att_words", url_param("words", False, cast=bool))
seed_widget("att_layer", url_param("layer", 1, cast=in_range(1)))
seed_widget("att_head", url_param("head", 1, cast=in_range(1)))
seed_widget("att_row_source", url_param("rows", "head_avg", cast=one_of(*ROW_SOURCES)))
if "_att_tab_id" not in ss:  # the open tab by id: its label changes with the language
    ss["_att_tab_id"] = url_param("tab", TABS[0], cast=one_of(*TABS))
if "_att_token_label" not in ss:
    ss["_att_token_label"] = url_param("token", "苹")

model_name = bert_model_name()

# ---- page -------------------------------------------------------------------------------------
st.title(t("nav.attention"))
st.markdown(t("att.intro"))
st.info(t("att.honest"), icon=":material/info:")

with st.container(border=True):
    c1, c2 = st.columns(2)
    c1.text_input(t("att.sentence"), key="att_sentence", help=t("att.sentence_help", limit=MAX_CHARS))
    c2.text_input(t("att.pair"), key="att_pair", help=t("att.pair_help"), placeholder=t("att.pair_placeholder"))
    o1, o2 = st.columns(2)
    o1.toggle(t("att.hide_special"), key="att_hide", help=t("att.hide_special_help"))
    o2.toggle(t("att.word_level"), key="att_words", help=t("att.word_level_help"))
keep_widgets("att_sentence", "att_pair", "att_hide", "att_words")
hide, words = bool(ss["att_hide"]), bool(ss["att_words"])
sync_to_url(sentence=ss["att_sentence"] if len(ss["att_sentence"] or "") <= 2 * MAX_CHARS else None,
            pair=(ss["att_pair"] or None) if len(ss["att_pair"] or "") <= 2 * MAX_CHARS else None,
            hide=True if hide else None, words=True if words else None)

view = None
if not model_name:
    st.info(t("att.no_model"))
else:
    try:
        first = check_text(ss["att_sentence"])
        second = (ss["att_pair"] or "").strip()
        if second:
            second = check_text(second)
        notes = _notes(model_name, first + ("\n" + second if second else ""))
        if notes.unknown:
            st.warning(t("att.unknown_chars", chars=md_escape(" ".join(notes.unknown)), model=md_escape(model_name)))
        if notes.control:
            st.info(t("att.control_chars", chars=", ".join(notes.control)))
        encoding = _encoding(model_name, first, second)
        view = attention_view(encoding, hide_special=hide, word_level=words)
    except Exception as err:  # never a traceback on the projector
        show_error(err)

if view is None:
    st.stop()

L, H, n = view.num_layers, view.num_heads, len(view.labels)
layer_names = [t("att.layer_n", l=l + 1) for l in range(L)]
head_names = [t("att.head_n", h=h + 1) for h in range(H)]
axis_from, axis_to = t("att.axis_from"), t("att.axis_to")

# the highlighted token: kept by label, so it survives switching characters ↔ words
labels = view.labels
current = ss.get("att_token")
if not (isinstance(current, int) and 0 <= current < n and labels[current] == ss["_att_token_label"]):
    wanted = ss["_att_token_label"]
    match = next((i for i, lab in enumerate(labels) if lab == wanted), None)
    if match is None:
        match = next((i for i, lab in enumerate(labels) if wanted and (wanted in lab or lab in wanted)
                      and not view.special[i]), None)
    if match is None:
        match = next((i for i, s in enumerate(view.special) if not s), 0)
    ss["att_token"] = match
ss["_att_labels"] = list(labels)


def _on_token() -> None:
    """Remember the chosen token by its label (the options are the labels of the run that drew them)."""
    chosen, shown = ss.get("att_token"), ss.get("_att_labels") or []
    if isinstance(chosen, int) and 0 <= chosen < len(shown):
        ss["_att_token_label"] = shown[chosen]


st.selectbox(t("att.token"), list(range(n)), key="att_token", format_func=lambda i: f"{i}: {labels[i]}",
             help=t("att.token_help"), on_change=_on_token)
token = int(ss["att_token"])
ss["_att_token_label"] = labels[token]
sync_to_url(token=labels[token])
st.caption(t("att.shape", L=L, H=H, n=n, unit=t("att.unit_words") if words else t("att.unit_tokens")))


def _matrix_csv(matrix: np.ndarray) -> bytes:
    frame = pd.DataFrame(matrix, index=[f"{i}:{lab}" for i, lab in enumerate(labels)],
                         columns=[f"{i}:{lab}" for i, lab in enumerate(labels)])
    buffer = io.StringIO()
    frame.to_csv(buffer)
    return buffer.getvalue().encode("utf-8")


tab_labels = [t(f"att.tab.{tab}") for tab in TABS]
if ss.get("att_tab") not in tab_labels:
    ss["att_tab"] = tab_labels[TABS.index(ss["_att_tab_id"])]
with st.container(key="att_result"):
    tabs = st.tabs(tab_labels, key="att_tab", on_change="rerun")
ss["_att_tab_id"] = TABS[tab_labels.index(ss["att_tab"])]
sync_to_url(tab=None if ss["_att_tab_id"] == TABS[0] else ss["_att_tab_id"])


# ---- one layer, one head ------------------------------------------------------------------------
@st.fragment
def single_head() -> None:
    for key, top in (("att_layer", L), ("att_head", H)):
        if not isinstance(ss.get(key), int) or not 1 <= ss[key] <= top:
            ss[key] = 1
    c1, c2 = st.columns(2)
    c1.slider(t("att.layer"), 1, max(L, 2), key="att_layer", disabled=L == 1)
    c2.slider(t("att.head"), 1, max(H, 2), key="att_head", disabled=H == 1)
    keep_widgets("att_layer", "att_head")
    layer, head = min(int(ss["att_layer"]), L), min(int(ss["att_head"]), H)
    sync_to_url(layer=layer, head=head)
    matrix = view.att[layer - 1, head - 1]
    fig = figs.attention_heatmap(matrix, labels, title=t("att.heatmap_title", l=layer, h=head),
                                 x_title=axis_to, y_title=axis_from, highlight_row=token, large=large)
    chart(fig, "att_heatmap", width="content")
    st.caption(t("att.heatmap_note", sums=f"{float(matrix.sum(axis=1).min()):.4f} … {float(matrix.sum(axis=1).max()):.4f}"))
    d1, d2 = st.columns(2)
    # files are made on click, not on every rerun (the HTML inlines plotly.js: 4.8 MB)
    d1.download_button(t("att.download_csv"), lambda: _matrix_csv(matrix), file_name=f"attention_L{layer}_H{head}.csv",
                       mime="text/csv", on_click="ignore", key="att_dl_csv")
    d2.download_button(t("att.download_html"), lambda: export_html(fig), file_name=f"attention_L{layer}_H{head}.html",
                       mime="text/html", on_click="ignore", key="att_dl_html")


# ---- every layer × head --------------------------------------------------------------------------
def every_head() -> None:
    st.markdown(t("att.grid_intro"))
    grid = figs.attention_grid(view.att, labels, layer_names=[t("att.layer_short", l=l + 1) for l in range(L)],
                               head_names=[t("att.head_short", h=h + 1) for h in range(H)], large=large)
    chart(grid, "att_grid", width="content")
    seed_widget("att_zoom", 0)
    if not isinstance(ss["att_zoom"], int) or not 0 <= ss["att_zoom"] < L * H:
        ss["att_zoom"] = 0
    st.selectbox(t("att.zoom"), list(range(L * H)), key="att_zoom",
                 format_func=lambda k: t("att.heatmap_title", l=k // H + 1, h=k % H + 1))
    keep_widgets("att_zoom")
    zl, zh = divmod(int(ss["att_zoom"]), H)
    chart(figs.attention_heatmap(view.att[zl, zh], labels, title=t("att.heatmap_title", l=zl + 1, h=zh + 1),
                                           x_title=axis_to, y_title=axis_from, highlight_row=token, large=large), "att_zoomed", width="content")


# ---- head average per layer ----------------------------------------------------------------------
def head_average() -> None:
    st.markdown(t("att.avg_intro"))
    avg_fig = figs.layer_maps(view.head_avg, labels, titles=layer_names, large=large)
    chart(avg_fig, "att_avg", width="content")


# ---- rollout -------------------------------------------------------------------------------------
def rollout() -> None:
    st.markdown(t("att.rollout_intro"))
    roll_fig = figs.layer_maps(view.rollout, labels, titles=[t("att.rollout_upto", l=l + 1) for l in range(L)],
                               large=large)
    chart(roll_fig, "att_rollout", width="content")


# ---- one token's row -------------------------------------------------------------------------------
def token_row() -> None:
    st.radio(t("att.row_source"), ROW_SOURCES, key="att_row_source", horizontal=True,
             format_func=lambda s: t(f"att.row_source.{s}"))
    keep_widgets("att_row_source")
    source = ss["att_row_source"]
    sync_to_url(rows=None if source == "head_avg" else source)
    if source == "head_avg":
        rows = view.head_avg[:, token, :]
    elif source == "rollout":
        rows = view.rollout[:, token, :]
    else:
        rows = view.att[:, min(int(ss.get("att_head") or 1), H) - 1, token, :]
    st.markdown(t("att.row_intro", token=md_escape(labels[token])))
    chart(figs.row_bars(rows, labels, layer_names=layer_names, y_title=t("att.weight"),
                                  highlight=token, large=large), "att_rows", width="content")
    top = [labels[j] for j in np.argsort(-rows[-1])[:3]]
    st.caption(t("att.row_top", layer=L, top=md_escape(" · ".join(top))))


for tab, draw in zip(tabs, (single_head, every_head, head_average, rollout, token_row)):
    if tab.open:
        with tab:
            draw()

st.caption(t("att.source"))
