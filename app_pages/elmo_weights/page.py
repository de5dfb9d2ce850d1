"""ELMo 层权重: ELMo_k = γ Σ_j s_j h_{k,j}, the lecture's example and exercise 2, the mix live on real sentences,
s and γ as two tasks learned them, and ELMo used as the lecture says: [x; ELMo] feeding a task model.

Thin page: the layers of every occurrence are computed once per (model, sentences, word)
(ui.cache.occurrence_view); the sliders live in ``mixer.py``'s fragment and only call
core.vectors.mix.mix_view on the cached arrays, so moving a weight never re-runs the model.
The learned s and γ and the [x; ELMo] comparison come from the experiments' results (``learned_mix_section.py``).
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from app_pages.elmo_weights import mixer
from app_pages.elmo_weights.learned_mix_section import concat_section, learned_answer, learned_section
from core.compute.mixing import PRESETS, format_vector, scalar_mix
from core.figures import vectors as figs
from core.models.catalogue import DEFAULT_ELMO
from core.vectors.parsing import parse_input
from ui import cache, sentence_inputs
from ui.i18n import layer_name, t
from ui.page import attempt, chart, how_computed, load_model, presenting, shared_figure, unfolded
from ui.presentation import PINNED_KEY
from ui.sidebar import bert_model_name
from ui.state import Field, in_range, one_of, seed

ss = st.session_state
large = presenting()


# ---- state: one declaration, seeded from the URL, kept across page switches ----------------------------
seed(*sentence_inputs.fields(), Field("elmo_use_bert", "bert", False, bool),
     Field("elmo_mode", "mode", "softmax", one_of(*mixer.MODES)),
     Field("elmo_gamma", "gamma", 1.0, in_range(*mixer.GAMMA_RANGE, kind=float)),
     Field("elmo_reveal", None, False, bool))  # the exercise's answer starts hidden, on every scene too


# ---- the formula ------------------------------------------------------------------------------------
st.title(t("elmo.title"))
learned_answer()  # the question, and what the tasks learned here
st.markdown(t("elmo.intro"))
st.latex(r"\mathrm{ELMo}_k^{task} \;=\; \gamma^{task} \sum_{j=0}^{L} s_j^{task}\, \mathbf{h}_{k,j}^{LM}")
col_text, col_diag = st.columns([2, 3], gap="large")
with col_text:
    st.markdown(t("elmo.explain"))
with col_diag:
    L = 2
    top = [t("elmo.diag.token")] + [t(f"elmo.diag.{d}", j=j) for j in range(1, L + 1) for d in ("fwd", "bwd")]
    middle = [t("elmo.diag.h0")] + [t("elmo.diag.hj", j=j) for j in range(1, L + 1)]
    diagram = shared_figure(figs.elmo_diagram, top, middle, t("elmo.diag.sum"),
                            [f"s<sub>{j}</sub>" for j in range(L + 1)], title=t("elmo.diag.title"), large=large,
                            height=480 if large else 430)
    if unfolded(t("page.show", what=t("elmo.diag.title")), "elmo_show_diagram"):  # on a phone its labels crowd
        chart(diagram, "elmo_diagram")

# ---- the lecture's example (two presets) and its exercise 2, reproduced by core.compute.mixing.scalar_mix -----
H = np.identity(3)
S_EXERCISE, GAMMA_EXERCISE = mixer.S_EXERCISE, mixer.GAMMA_EXERCISE
col_a, col_b = st.columns([1, 1], gap="large")
with col_a.container(border=True):
    st.subheader(t("elmo.example.title"))
    rows = [f"| {t('elmo.example.col.task')} | s | γ | ELMo |", "|---|---|---|---|"]
    for name in ("syntax", "semantics"):
        s_p, g_p, _ = PRESETS[name]
        rows.append(f"| {t('elmo.preset.' + name)} | {format_vector(s_p)} | {g_p:.0f} | "
                    f"**{format_vector(scalar_mix(H, s_p, g_p))}** |")
    st.markdown("\n".join(rows))
    st.caption(t("elmo.example.caption"))
    how_computed(t("elmo.example.computed_by"))
with col_b.container(border=True, key="elmo_exercise"):
    # "predict, then reveal", as in the lecture: the answer stays hidden until the class has computed it
    if not large:  # on the projector the scene bar names the exercise: the whole derivation fits below it
        st.subheader(t("elmo.exercise.title"))
    st.markdown(t("elmo.example.given", s=format_vector(S_EXERCISE), gamma=f"{GAMMA_EXERCISE:.0f}"))
    revealed = st.toggle(t("elmo.exercise.reveal"), key="elmo_reveal")
    if revealed:
        out = format_vector(scalar_mix(H, S_EXERCISE, GAMMA_EXERCISE))
        # one step a line, aligned left: half a projector's width is narrow
        st.latex(r"\begin{aligned}&\mathrm{ELMo}_k = \gamma\,(s_0 h_0 + s_1 h_1 + s_2 h_2)\\"
                 r"&= 2\times(0.2\,h_0 + 0.3\,h_1 + 0.5\,h_2)\\ &= 2\times[0.2,\ 0.3,\ 0.5]\\ &= "
                 + out.replace(", ", r",\ ") + r"\end{aligned}")
        st.markdown(t("elmo.example.result", vec=out))
    else:
        st.caption(t("elmo.exercise.hidden"))

st.divider()

# ---- sentences and model ---------------------------------------------------------------------------
st.subheader(t("elmo.live.title"))
bert_name = bert_model_name()
use_bert = st.toggle(t("elmo.use_bert", name=bert_name or "—"), key="elmo_use_bert", persist_state="session",
                     help=t("elmo.use_bert_help"))
if large:  # the sentences and the word pinned under the scene bar from here down: typed beside the result (#51)
    with st.container(key=PINNED_KEY):
        sentence_inputs.render_row()
sentence_inputs.render("elmo_upload", height=200, row_drawn=large)
text, word_raw, scene = sentence_inputs.current(bert=True if use_bert else None)

kind = "bert" if use_bert else "elmo"
ctx_name = bert_name if use_bert else DEFAULT_ELMO
encoder, problem = load_model(ctx_name, t("static.no_bert_model"))
if problem:
    st.warning(t("elmo.model_missing", reason=problem) + ("" if use_bert else " " + t("elmo.try_bert")))

if encoder is not None:
    layer_names = [layer_name(n) for n in encoder.encoder().layer_names]
else:  # the lecture's L = 2: the sliders and the toy example still work without a model
    layer_names = [layer_name(n) for n in ("token layer", "biLSTM 1", "biLSTM 2")] if not use_bert else ["0", "1", "2"]
n_layers = len(layer_names)

view = None
parsed = attempt(parse_input, text, word_raw)
if parsed is not None and encoder is not None:
    with st.spinner(t("static.computing")):
        view = attempt(cache.occurrence_view, encoder, None, tuple(parsed.sentences), parsed.word,
                       tuple(parsed.labels))
    if view is not None:
        if parsed.removed_controls:
            st.info(t("static.controls_removed", n=parsed.removed_controls))
        sentence_inputs.show_occurrence_notes(view, parsed)


# ---- the mixer: sliders + live charts, in a fragment that only slices the cached arrays -------------
mixer.mixer(view, kind, layer_names, ctx_name or "", parsed.word if parsed else "")

# ---- s and γ as two tasks learned them -----------------------------------------------------------------
st.divider()
with st.container(key="elmo_learned"):  # the scene "learned" scrolls here
    if unfolded(t("page.show", what=t("elmo.learned.title")), "elmo_show_learned"):
        learned_section()

# ---- the lecture's use of ELMo: [x; ELMo] feeding a task model ------------------------------------------
st.divider()
with st.container(key="elmo_concat"):
    if unfolded(t("page.show", what=t("elmo.concat.title")), "elmo_show_concat"):
        concat_section()
