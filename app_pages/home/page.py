"""Home: what the lab shows and where to start, the lecture's three threads of evolution as a diagram,
the paradigm table with a demo link per row, and the status of every model."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.runtime.paths import TRANSFER_RESULTS
from core.views import status as lab_status
from ui import PAGES
from ui.i18n import error_text, model_description, t, timestamp
from ui.lecture_scenes import SCENES
from ui.page import plain_answer, presenting
from ui.presentation import page_link, scene_link
from ui.sidebar import bert_model_name, get_model_infos

ss = st.session_state
# A CONSTANT stylesheet (nothing interpolated): tinted boxes for the model families of the diagram.
THREAD_CSS = """
<style>
[class*="st-key-thread_static"] { background: #F3F4F6; border-color: #4B5563 !important; }
[class*="st-key-thread_elmo"] { background: #FFF1E6; border-color: #C2410C !important; }
[class*="st-key-thread_gpt"] { background: #F5EDFC; border-color: #7E22CE !important; }
[class*="st-key-thread_bert"] { background: #E8F0FE; border-color: #0B57D0 !important; }
/* the demo links wrap instead of ending in "…"; a lane's name breaks between words, never inside one */
[class*="st-key-thread_"] [data-testid="stPageLink-NavLink"] span:has(> [data-testid="stMarkdownContainer"]) {
  white-space: normal; overflow: visible; }
[class*="st-key-lane_label"] p { overflow-wrap: normal; word-break: keep-all; }
</style>
"""
# On the projector (scene 1) the whole diagram fits below the scene bar at 1280×720: tighter boxes.
THREAD_PRESENT_CSS = """
<style>
[class*="st-key-thread_"] { padding: 0.6rem 0.9rem !important; gap: 0.3rem !important; }
[class*="st-key-thread_"] p, [class*="st-key-lane_label"] p {
  font-size: 0.85rem !important; line-height: 1.35 !important; }
.st-key-home_threads { gap: 0.6rem !important; }
</style>
"""


def _start_presentation() -> None:
    ss["present"] = True


st.title(t("home.title"))
plain_answer("home_qa", t("home.qa"))
st.markdown(t("home.intro"))

# ---- where to start -----------------------------------------------------------------------------
st.subheader(t("home.start.title"))
c1, c2, c3 = st.columns(3, gap="medium")
with c1.container(border=True, height="stretch"):
    st.markdown(f"**{t('home.start.first.title')}**")
    st.caption(t("home.start.first.body"))
    scene_link("pair", t("nav.static"), ":material/compare_arrows:")
with c2.container(border=True, height="stretch"):
    st.markdown(f"**{t('home.start.class.title')}**")
    st.caption(t("home.start.class.body", n=len(SCENES)))
    if not ss.get("present"):
        st.button(t("home.start.class.button"), key="home_present", on_click=_start_presentation, type="primary",
                  icon=":material/slideshow:")
    else:
        st.caption(t("home.start.class.on"))
with c3.container(border=True, height="stretch"):
    st.markdown(f"**{t('home.start.practice.title')}**")
    st.caption(t("home.start.practice.body"))
    scene_link("exercises", t("nav.exercises"), ":material/quiz:")

# ---- the three threads of evolution (lecture: 范式演进与对照) --------------------------------
# A diagram of native containers (text wraps at any width, the demo links are clickable): one lane per
# thread, boxes coloured by model family, every lane ending in the BERT column.
st.subheader(t("home.threads.title"))
st.markdown(THREAD_CSS, unsafe_allow_html=True)  # constant stylesheet only
if presenting():
    st.markdown(THREAD_PRESENT_CSS, unsafe_allow_html=True)  # constant stylesheet only
LANES = (  # (lane label, [(stage text, family, page of the demo or None)])
    ("home.thread1.label", (("home.thread1.s1", "static", "app_pages/static_vs_contextual/page.py"),
                            ("home.thread1.s2", "elmo", "app_pages/elmo_weights/page.py"),
                            ("home.thread1.s3", "bert", "app_pages/attention/page.py"))),
    ("home.thread2.label", (("home.thread2.s1", "elmo", "app_pages/transfer/page.py"),
                            ("home.thread2.s2", "bert", "app_pages/transfer/page.py"))),
    ("home.thread3.label", (("home.thread3.s1", "gpt", None),
                            ("home.thread3.s2", "bert", "app_pages/fill_mask/page.py"))),
)
FAMILY_COLOUR = {"static": "gray", "elmo": "orange", "gpt": "violet", "bert": "blue"}
TITLES = {spec.path: t(spec.title_key) for spec in PAGES}
ICONS = {spec.path: spec.icon for spec in PAGES}
with st.container(key="home_threads"):  # the presentation scene "home" scrolls here
    for lane, (label_key, stages) in enumerate(LANES):
        cols = st.columns([2.2, 3, 0.4, 3, 0.4, 3], vertical_alignment="center", gap="small")
        cols[0].container(key=f"lane_label_{lane}").markdown(f"**{t(label_key)}**")
        first = 3 - len(stages)  # right-align: two-stage lanes fill the ELMo and BERT columns
        for i, (text_key, family, demo) in enumerate(stages):
            slot = first + i
            if i:
                cols[2 * slot].markdown("### →")
            with cols[1 + 2 * slot].container(border=True, key=f"thread_{family}_{lane}_{i}"):
                st.markdown(f"**:{FAMILY_COLOUR[family]}[{t(text_key)}]**")
                if demo:
                    page_link(demo, TITLES.get(demo, demo), ICONS.get(demo))
                else:
                    st.caption(t("home.thread3.gpt_note"))
st.caption(t("home.threads.legend") + " " + t("home.thread3.note"))

# ---- the lecture's comparison table, one demo per row ------------------------------------------
st.subheader(t("home.table.title"))
ROWS = (  # row id, the scene (ui.lecture_scenes) that demonstrates it
    ("contextual", "pair"), ("task", "bilm"), ("usage", "transfer"), ("arch", "attention"),
    ("contribution", "syntax"), ("limits", "oov"),
)
COLS = ("static", "elmo", "bert")
WIDTHS = [1.3, 2, 2, 2]
header = st.columns(WIDTHS, vertical_alignment="bottom")
for col, text in zip(header, [t("home.table.col.dim")] + [t(f"home.table.col.{c}") for c in COLS]):
    col.markdown(f"**{text}**")
for row, scene_id in ROWS:
    with st.container(border=True, gap=None):
        cols = st.columns(WIDTHS, vertical_alignment="center")
        cols[0].markdown(f"**{t(f'home.table.row.{row}')}**")
        for col, c in zip(cols[1:4], COLS):
            col.markdown(t(f"home.table.{row}.{c}"))
        scene_link(scene_id, t("home.table.demo", demo=t(f"home.table.demo.{row}")), ":material/play_circle:")
st.caption(t("home.table.source"))

# ---- all experiments --------------------------------------------------------------------------
st.subheader(t("home.pages.title"))
link_cols = st.columns(2)
for i, spec in enumerate(PAGES[1:]):
    with link_cols[i % 2].container(border=True):
        page_link(spec.path, t(spec.title_key), spec.icon)
        st.caption(t(spec.desc_key))

# ---- model status ------------------------------------------------------------------------------
st.subheader(t("home.models.title"))
models, problem = get_model_infos()
if problem:
    st.info(problem)
elif not models:
    st.info(t("home.models.empty"))
else:
    rows = lab_status.model_rows(models, bert_model_name())
    KINDS = ("bert", "elmo", "static", "hub")  # home.models.kind.<kind>
    STATES = {(False, True): "home.models.ready", (False, False): "home.models.missing",  # (hub, ready)
              (True, True): "home.models.hub_cached", (True, False): "home.models.hub_missing"}

    def _note(row: lab_status.ModelRow) -> str:  # a table cell: plain text
        if row.info is None:
            return t("home.models.hub_note_cached" if row.ready else "home.models.hub_note_missing")
        problem = None if row.ready else row.info.problem  # set whenever an embedded model is not ready
        return (error_text(problem, markdown=False) if problem else model_description(row.info)) or ""

    # a static table: its cells wrap, so the long notes stay readable (a data grid would cut them)
    status = pd.DataFrame({
        t("home.models.col.name"): [row.name for row in rows],
        t("home.models.col.kind"): [t(f"home.models.kind.{row.kind}") if row.kind in KINDS else row.kind
                                    for row in rows],
        t("home.models.col.status"): [t(STATES[row.kind == "hub", row.ready]) for row in rows],
        t("home.models.col.layers"): ["—" if row.num_layers is None else str(row.num_layers) for row in rows],
        t("home.models.col.info"): [_note(row) for row in rows],
    })
    st.table(status, hide_index=True)
    if any(not m.available for m in models):
        st.warning(t("home.models.some_missing"))
    with st.expander(t("home.models.hub_howto.title")):
        st.markdown(t("home.models.hub_howto.body"))
        st.code(f"pip install -r requirements.txt\nhf download {lab_status.SUGGESTED_HUB_MODEL}\n"
                f"# {t('home.models.hub_howto.copy')}\nexport HF_HUB_OFFLINE=1", language="bash")
        st.markdown(t("home.models.hub_howto.dir"))
        st.code(f"hf download {lab_status.SUGGESTED_HUB_MODEL} --include \"*.json\" \"*.txt\" \"*.safetensors\" "
                f"--local-dir ./{lab_status.SUGGESTED_HUB_MODEL}", language="bash")

summary = lab_status.transfer_results_summary(TRANSFER_RESULTS)
if summary:
    st.caption(t("home.models.transfer_ready", created=timestamp(summary["created"] or "?")))
else:
    st.caption(t("home.models.transfer_missing"))
