"""预训练目标 (pre-training objectives): ELMo's biLM, shallow concatenation vs deep bidirectionality,
left-to-right vs masked prediction.

① The biLM's two likelihoods as formulas, then mini-elmo-zh's forward and backward predictions of every
character of a sentence. ② Two sentences with a shared beginning: how far each shared character's vector
moved, per layer, for ELMo's forward half, ELMo's backward half and every layer of the sidebar's BERT.
③ One position of ①'s sentence predicted left to right (ELMo's forward LM standing in for GPT) and by
BERT with that character masked.

Thin page: the sentence → ``core.views.objectives`` through ``ui.cache.model_call`` (once per model and text) →
the sections of ``sections.py`` beside it, whose selectors only slice the results. ② and ③ have sentence boxes
of their own, beside the result each drives (on the projector, a sentence box 4,000 px above its chart is lost).
"""
from __future__ import annotations

import streamlit as st

from app_pages.objectives import sections
from core.views import objectives as obj
from ui.i18n import t
from ui.page import attempt, how_computed
from ui.sidebar import bert_model_name
from ui.state import Field, in_range, one_of, seed, sync_to_url

DEFAULT_SENTENCE = "我吃了一个苹果"
DEFAULT_PAIR = ("苹果昨天发布了新手机", "苹果昨天掉在了地上")  # the lecture's 苹果, two continuations
DEFAULT_TOP_K = 5
ss = st.session_state


# ---- state: one declaration, seeded from the URL (positions in the sections, which know the sentence) ----
seed(Field("obj_sentence", "sentence", DEFAULT_SENTENCE),
     Field("obj_top_k", "top_k", DEFAULT_TOP_K, in_range(1, obj.TOP_K)),
     Field("obj_text_a", "a", DEFAULT_PAIR[0]),
     Field("obj_text_b", "b", DEFAULT_PAIR[1]),
     Field("obj_metric", "metric", "cosine", one_of(*obj.METRICS)),
     Field("obj_gpt_sentence", "gpt_sentence", DEFAULT_SENTENCE))

bert_name = bert_model_name()


# ---- page -------------------------------------------------------------------------------------
st.title(t("nav.objectives"))
answer = sections.answer_box()
st.markdown(t("obj.intro"))

# ---- ① ELMo's biLM ------------------------------------------------------------------------------
st.header(t("obj.bilm.title"))
st.markdown(t("obj.bilm.forward"))
st.latex(r"p(t_1, t_2, \ldots, t_N) \;=\; \prod_{k=1}^{N} p\left(t_k \mid t_1, t_2, \ldots, t_{k-1}\right)")
st.markdown(t("obj.bilm.backward"))
st.latex(r"p(t_1, t_2, \ldots, t_N) \;=\; \prod_{k=1}^{N} p\left(t_k \mid t_{k+1}, t_{k+2}, \ldots, t_N\right)")
st.markdown(t("obj.bilm.objective"))
st.latex(r"\begin{aligned} \max \sum_{k=1}^{N} \Big( &\log p\big(t_k \mid t_1, \ldots, t_{k-1};\, \Theta_x, "
         r"\overrightarrow{\Theta}_{LSTM}, \Theta_s\big) \\ &+ \log p\big(t_k \mid t_{k+1}, \ldots, t_N;\, "
         r"\Theta_x, \overleftarrow{\Theta}_{LSTM}, \Theta_s\big) \Big) \end{aligned}")
st.caption(t("obj.bilm.ours"))

with st.container(border=True):
    c1, c2 = st.columns([3, 2])
    c1.text_input(t("obj.sentence"), key="obj_sentence", persist_state="session",
                  help=t("obj.sentence_help", limit=obj.MAX_CHARS))
    c2.slider(t("obj.top_k"), 1, obj.TOP_K, key="obj_top_k", persist_state="session")
typed = ss["obj_sentence"] or ""
top_k = int(ss["obj_top_k"])
sync_to_url(sentence=typed if len(typed) <= 2 * obj.MAX_CHARS else None, top_k=top_k)


reading = attempt(sections.reading_of, typed)

if reading is not None:
    sections.bilm_section(reading, top_k)
sections.deep_section(bert_name, answer)
sections.gpt_section(bert_name, top_k)
st.caption(t("obj.source"))
how_computed(t("obj.reproduce"))
