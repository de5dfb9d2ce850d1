"""注意力热力图: BERT's self-attention per layer and head, head averages, rollout, one token's row.

One core call, ``core.attention.view.attention_result`` through ``ui.cache.model_call`` (once per model and text
for every session): the checked sentence (pair), what the model cannot see in it and its attention, which the
toggles reduce without running the model (hide [CLS]/[SEP], jieba words); the tabs (``tabs.py`` beside this page)
only slice its arrays.
"""
from __future__ import annotations

import streamlit as st

from app_pages.attention import tabs as attention_tabs
from core.attention.view import MAX_CHARS, attention_result, read_row
from core.guard.safe_text import md_escape
from ui.cache import model_call
from ui.i18n import t
from ui.page import attempt, model_or_message, plain_answer
from ui.sidebar import bert_model_name
from ui.state import Field, KeptChoice, one_of, seed, sync_to_url

DEFAULT_SENTENCE = "苹果昨天发布了新手机。"
TABS = tuple(attention_tabs.TABS)  # only the open tab is built: a rerun draws one figure

ss = st.session_state


# ---- state ------------------------------------------------------------------------------------
seed(Field("att_sentence", "sentence", DEFAULT_SENTENCE), Field("att_pair", "pair", ""),
     Field("att_hide", "hide", False, bool), Field("att_words", "words", False, bool),
     Field("att_row_source", "rows", "head_avg", one_of(*attention_tabs.ROW_SOURCES)))
# the chosen token by its text (a sentence edit or characters ↔ words moves its row); the open tab by its id (its
# label follows the language)
TOKEN = KeptChoice("att_token", Field("_att_token_label", "token", "苹"))
TAB = KeptChoice("att_tab", Field("_att_tab_id", "tab", TABS[0], one_of(*TABS)))

model_name = bert_model_name()

# ---- page -------------------------------------------------------------------------------------
st.title(t("nav.attention"))
# a student at home: the question and the reading of the chosen token first (filled once it is computed)
qa = plain_answer("att_qa", t("att.qa.question"))
st.markdown(t("att.intro"))
st.info(t("att.honest"), icon=":material/info:")

with st.container(border=True):
    c1, c2 = st.columns(2)
    c1.text_input(t("att.sentence"), key="att_sentence", persist_state="session",
                  help=t("att.sentence_help", limit=MAX_CHARS))
    c2.text_input(t("att.pair"), key="att_pair", persist_state="session", help=t("att.pair_help"),
                  placeholder=t("att.pair_placeholder"))
    o1, o2 = st.columns(2)
    o1.toggle(t("att.hide_special"), key="att_hide", persist_state="session", help=t("att.hide_special_help"))
    o2.toggle(t("att.word_level"), key="att_words", persist_state="session", help=t("att.word_level_help"))
hide, words = bool(ss["att_hide"]), bool(ss["att_words"])
sync_to_url(sentence=ss["att_sentence"] if len(ss["att_sentence"] or "") <= 2 * MAX_CHARS else None,
            pair=(ss["att_pair"] or None) if len(ss["att_pair"] or "") <= 2 * MAX_CHARS else None,
            hide=True if hide else None, words=True if words else None)


result = None
if (model := model_or_message(model_name, t("att.no_model"), masked_lm=True)) is not None:
    result = attempt(model_call, attention_result, model, ss["att_sentence"], ss["att_pair"] or "")
view = None if result is None else attempt(result.view, hide, words)  # the toggles: numpy, no model run

if result is None or view is None:
    st.stop()
notes = result.notes
if notes.unknown:
    st.warning(t("att.unknown_chars", chars=md_escape(" ".join(notes.unknown)), model=md_escape(model_name)))
if notes.control:
    st.info(t("att.control_chars", chars=", ".join(notes.control)))

n, labels = len(view.labels), view.labels
sync_to_url(token=TOKEN.place(range(n), labels, near=view.find_label))
token = int(st.selectbox(t("att.token"), list(range(n)), key="att_token", format_func=lambda i: f"{i}: {labels[i]}",
                         help=t("att.token_help")))
st.caption(t("att.shape", L=view.num_layers, H=view.num_heads, n=n,
             unit=t("att.unit_words") if words else t("att.unit_tokens")))
if qa is not None:
    reading = read_row(view, token)
    top = t("att.qa.sep").join(t("att.qa.self" if i == token else "att.qa.item", label=md_escape(labels[i]),
                                 share=f"{w:.0%}") for i, w in reading.top)
    with qa:
        st.markdown(t("att.qa.answer", token=md_escape(labels[token]), layer=reading.layer + 1, top=top,
                      tab=t("att.tab.avg"),
                      special=f"{reading.special:.0%}" if any(view.special) else "—"))
        st.markdown(t("att.qa.expect", L=view.num_layers, H=view.num_heads))

tab_labels = [t(f"att.tab.{tab}") for tab in TABS]
tab_id = TAB.place(tab_labels, TABS)
sync_to_url(tab=None if tab_id == TABS[0] else tab_id)
with st.container(key="att_result"):
    tabs = st.tabs(tab_labels, key="att_tab", on_change="rerun")
for tab, draw in zip(tabs, attention_tabs.TABS.values()):
    if tab.open:
        with tab:
            draw(view, token)

st.caption(t("att.source"))
