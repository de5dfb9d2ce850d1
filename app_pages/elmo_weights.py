"""ELMo 层权重: ELMo_k = γ Σ_j s_j h_{k,j}, the lecture's example and exercise 2, the mix live on real sentences,
and s and γ as two tasks learned them.

Thin page: the layers of every occurrence are computed once per (model, sentences, word) through
the caches (core.vectors_view.occurrence_layers); the sliders live in an st.fragment and only call
core.vectors_view.mix_view on the cached arrays, so moving a weight never re-runs the model.
The learned s and γ are read from the experiments' results file (core.experiments.learned_mix).
"""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import streamlit as st

import core.experiments as experiments
from core import registry
from core import vectors_view as vv
from core.errors import LabError
from core.experiments import learned_mix, view as results_view
from core.figures import vectors as figs
from core.figures.evidence import preset_bars
from core.mixing import PRESETS, format_vector, one_hot, pre_softmax_from_normalised, scalar_mix
from core.safe_text import md_escape
from core.stats import difference_interval
from ui import cache, sentence_inputs
from ui.i18n import current_lang, error_text, layer_name, t, timestamp
from ui.page import chart, load_model, presenting, show_error
from ui.sidebar import bert_model_name
from ui.state import in_range, one_of, sync_to_url, url_param

ss = st.session_state
large = presenting()
MODES = ("softmax", "direct")
W_RANGE = (-3.0, 3.0)
GAMMA_RANGE = (0.1, 4.0)
LECTURE_PRESETS = ("syntax", "semantics", "worked_example")  # defined for L + 1 = 3 layers


# ---- first visit in this session: start from the URL ----------------------------------------------
sentence_inputs.seed_from_url()
ss.setdefault("elmo_use_bert", url_param("bert", False, cast=bool))
ss.setdefault("elmo_mode", url_param("mode", "softmax", cast=one_of(*MODES)))
ss.setdefault("elmo_gamma", url_param("gamma", 1.0, cast=in_range(*GAMMA_RANGE, kind=float)))


def slider_key(kind: str, mode: str, j: int) -> str:
    return f"elmo_w_{kind}_{mode}_{j}"


def _set_weights(kind: str, mode: str, values) -> None:
    ss["elmo_mode"] = mode
    for j, v in enumerate(values):
        ss[slider_key(kind, mode, j)] = float(v)


def _preset(name: str, kind: str, n: int) -> None:
    """Button callback: put the sliders where the preset says (runs before the widgets exist)."""
    if name == "uniform":
        weights, gamma, _ = PRESETS["uniform"]
        _set_weights(kind, "softmax", [0.0] * n)
    elif name == "onehot":
        k = int(ss.get("elmo_onehot_k", n - 1))
        gamma = 1.0
        _set_weights(kind, "direct", one_hot(n, min(max(k, 0), n - 1)))
    else:
        s, gamma, _ = PRESETS[name]
        # the softmax of these slider values is exactly s
        _set_weights(kind, "softmax", pre_softmax_from_normalised(s))
    ss["elmo_gamma"] = float(gamma)


def _switch_mode(kind: str, n: int) -> None:
    """Carry the current s over when the slider mode changes, so the mix does not jump."""
    new = ss["elmo_mode"]
    old = "direct" if new == "softmax" else "softmax"
    values = [float(ss.get(slider_key(kind, old, j), 0.0 if old == "softmax" else 1.0)) for j in range(n)]
    try:
        s = vv.normalised_s(values, old == "softmax")
    except LabError:
        s = np.full(n, 1.0 / n)
    if new == "direct":
        _set_weights(kind, "direct", np.round(s, 2))
    else:
        w = np.log(np.clip(s, np.exp(W_RANGE[0]), None))
        _set_weights(kind, "softmax", np.clip(w - w.max(), *W_RANGE))


@st.cache_data(show_spinner=False, max_entries=64)
def _view(ctx_name: str, sentences: tuple[str, ...], word: str, labels: tuple[str | None, ...]) -> vv.VectorsView:
    return vv.occurrence_layers(cache.encoder(ctx_name), None, list(sentences), word, list(labels),
                                encode=lambda texts: cache.encode(ctx_name, tuple(texts)))


# ---- the formula ------------------------------------------------------------------------------------
st.title(t("elmo.title"))
st.markdown(t("elmo.intro"))
st.latex(r"\mathrm{ELMo}_k^{task} \;=\; \gamma^{task} \sum_{j=0}^{L} s_j^{task}\, \mathbf{h}_{k,j}^{LM}")
col_text, col_diag = st.columns([2, 3], gap="large")
with col_text:
    st.markdown(t("elmo.explain"))
with col_diag:
    L = 2
    top = [t("elmo.diag.token")] + [t(f"elmo.diag.{d}", j=j) for j in range(1, L + 1) for d in ("fwd", "bwd")]
    middle = [t("elmo.diag.h0")] + [t("elmo.diag.hj", j=j) for j in range(1, L + 1)]
    chart(figs.elmo_diagram(top, middle, t("elmo.diag.sum"), [f"s<sub>{j}</sub>" for j in range(L + 1)],
                            title=t("elmo.diag.title"), large=large, height=480 if large else 430), "elmo_diagram")

# ---- the lecture's example (two presets) and its exercise 2, reproduced by core.mixing.scalar_mix -----
H = np.identity(3)
S_EXERCISE, GAMMA_EXERCISE, _ = PRESETS["worked_example"]  # exercise 2 of the lecture
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
with col_b.container(border=True, key="elmo_exercise"):
    # "predict, then reveal", as in the lecture: the answer stays hidden until the class has computed it
    st.subheader(t("elmo.exercise.title"))
    st.markdown(t("elmo.example.given", s=format_vector(S_EXERCISE), gamma=f"{GAMMA_EXERCISE:.0f}"))
    revealed = st.toggle(t("elmo.exercise.reveal"), key="elmo_reveal")
    if revealed:
        out = format_vector(scalar_mix(H, S_EXERCISE, GAMMA_EXERCISE))
        st.latex(r"\begin{aligned}\mathrm{ELMo}_k &= \gamma\,(s_0 h_0 + s_1 h_1 + s_2 h_2)\\"
                 r"&= 2\times(0.2\,h_0 + 0.3\,h_1 + 0.5\,h_2)\\ &= 2\times[0.2,\ 0.3,\ 0.5] = "
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
sentence_inputs.render("elmo_upload", height=200)
text, word_raw, scene = sentence_inputs.current(bert=True if use_bert else None)

kind = "bert" if use_bert else "elmo"
ctx_name = bert_name if use_bert else registry.DEFAULT_ELMO
encoder, problem = load_model(ctx_name, t("static.no_bert_model"))
if problem:
    st.warning(t("elmo.model_missing", reason=problem) + ("" if use_bert else " " + t("elmo.try_bert")))

if encoder is not None:
    layer_names = [layer_name(n) for n in encoder.layer_names]
else:  # the lecture's L = 2: the sliders and the toy example still work without a model
    layer_names = [layer_name(n) for n in ("token layer", "biLSTM 1", "biLSTM 2")] if not use_bert else ["0", "1", "2"]
n_layers = len(layer_names)

view, input_error = None, None
try:
    parsed = vv.parse_input(text, word_raw)
except LabError as err:
    parsed, input_error = None, error_text(err)
if input_error:
    st.error(input_error)
elif encoder is not None:
    try:
        with st.spinner(t("static.computing")):
            view = _view(ctx_name, tuple(parsed.sentences), parsed.word, tuple(parsed.labels))
    except LabError as err:
        show_error(err)
    if view is not None:
        word_md = md_escape(parsed.word)
        if parsed.removed_controls:
            st.info(t("static.controls_removed", n=parsed.removed_controls))
        if view.missing and len(view.missing) < len(parsed.sentences):
            st.info(t("static.missing_note", word=word_md, n=len(view.missing), total=len(parsed.sentences)))
            st.dataframe({"#": [i + 1 for i in view.missing],
                          t("static.col.sentence"): [parsed.sentences[i] for i in view.missing]},
                         hide_index=True, height="content" if len(view.missing) <= 6 else 240)
        if len(view.missing) == len(parsed.sentences):
            st.info(t("static.no_occurrences", word=word_md))
        elif not view.num_occurrences:
            st.info(t("static.no_tokens", word=word_md))


# ---- the mixer: sliders + live charts, in a fragment ---------------------------------------------------
@st.fragment
def mixer(view: vv.VectorsView | None) -> None:
    n = n_layers
    # seed the sliders (first visit: from the URL)
    url_w = url_param("w", None, cast=list)
    for mode in MODES:
        for j in range(n):
            key = slider_key(kind, mode, j)
            if key not in ss:
                default = 0.0 if mode == "softmax" else 1.0
                if (mode == ss["elmo_mode"] and isinstance(url_w, list) and len(url_w) == n
                        and all(isinstance(v, (int, float)) for v in url_w)):
                    default = float(url_w[j])
                lo, hi = W_RANGE if mode == "softmax" else (0.0, 1.0)
                ss[key] = float(min(max(default, lo), hi))

    st.markdown(f"**{t('elmo.controls.title')}**")
    st.radio(t("elmo.mode"), MODES, key="elmo_mode", horizontal=True, persist_state="session",
             format_func=lambda m: t(f"elmo.mode.{m}"), on_change=_switch_mode, args=(kind, n),
             help=t("elmo.mode_help"))
    mode = ss["elmo_mode"]
    pre_softmax = mode == "softmax"

    # presets
    # two rows: at 1280 px one row of six cuts the layer names and "只用这一层"
    for col, name in zip(st.columns(4), ("uniform", "syntax", "semantics", "worked_example")):
        disabled = name in LECTURE_PRESETS and n != 3
        col.button(t(f"elmo.preset.{name}"), key=f"elmo_preset_{name}", on_click=_preset, args=(name, kind, n),
                   disabled=disabled, help=t("elmo.preset_needs3") if disabled else t(f"elmo.preset_help.{name}"),
                   width="stretch")
    if ss.get("elmo_onehot_k") not in range(n):
        ss["elmo_onehot_k"] = n - 1
    layer_col, onehot_col, _ = st.columns([2, 1, 1])
    layer_col.selectbox(t("elmo.onehot_layer"), list(range(n)), key="elmo_onehot_k",
                        format_func=lambda j: f"{j} · {layer_names[j]}", label_visibility="collapsed")
    onehot_col.button(t("elmo.preset.onehot"), key="elmo_preset_onehot", on_click=_preset, args=("onehot", kind, n),
                   help=t("elmo.preset_help.onehot"), width="stretch")

    with st.container(key="elmo_result"):
        col_sliders, col_live = st.columns([2, 3], gap="large")
        with col_sliders:
            lo, hi, step = (*W_RANGE, 0.01) if pre_softmax else (0.0, 1.0, 0.05)
            values, s_notes = [], []
            for j in range(n):
                label = t("elmo.slider_w" if pre_softmax else "elmo.slider_s", j=j, name=layer_names[j])
                values.append(st.slider(label, lo, hi, step=step, key=slider_key(kind, mode, j), format="%.2f",
                                        persist_state="session"))
                s_notes.append(st.empty())  # filled below with this slider's s_j: a w or a relative size is not s
            gamma = st.slider(t("elmo.gamma"), *GAMMA_RANGE, step=0.1, key="elmo_gamma", format="%.1f",
                              help=t("elmo.gamma_help"), persist_state="session")
            sync_to_url(w=[round(v, 3) for v in values], gamma=round(gamma, 2), mode=mode)
            try:
                s = vv.normalised_s(values, pre_softmax)
            except LabError:
                st.error(t("elmo.zero_sum"))
                return
            for j, note in enumerate(s_notes):
                note.caption(t("elmo.slider_gives", j=j, s=f"{s[j]:.2f}"))
            st.markdown(f"**{t('elmo.bar_title' if pre_softmax else 'elmo.bar_title_direct')}**")
            chart(figs.weights_bar(layer_names, s, None, large=large, height=380 if large else 320), "elmo_bars",
                  toolbar=False)
            st.markdown(t("elmo.s_now", s=format_vector(s, 2), gamma=f"{gamma:.1f}"))
            toy = scalar_mix(np.identity(n), s, gamma)
            is_exercise = n == 3 and np.allclose(s, S_EXERCISE, atol=5e-3) and abs(gamma - GAMMA_EXERCISE) < 1e-6
            if is_exercise and not ss.get("elmo_reveal"):
                st.markdown(t("elmo.toy_hidden"))  # the live result would give exercise 2's answer away
            else:
                st.markdown(t("elmo.toy_now" if n == 3 else "elmo.toy_now_n", vec=format_vector(toy, 2), n=n))

        with col_live:
            if view is None or not view.num_occurrences:
                st.info(t("elmo.live.none"))
                return
            mix = vv.mix_view(view.stacked(), s, gamma, False, view.occurrence_labels, view.projection)
            fig = figs.mix_scatter(
                mix.coords, view.ids, view.occurrence_labels, view.hover, layer_coords=view.coords,
                layer_names=[f"{j} · {nm}" for j, nm in enumerate(layer_names)],
                explained=view.projection.explained_variance_ratio,
                title=t("elmo.live.fig_title", name=html.escape(ctx_name), word=html.escape(parsed.word)),
                mixed_name=t("elmo.live.mixed"),
                large=large, height=620 if large else 540)
            chart(fig, "elmo_scatter")
            st.caption(t("elmo.live.caption"))
            if mix.accuracy is not None:
                per_layer = view.accuracy.get(False, [])
                c1, c2 = st.columns([1, 1])
                c1.metric(t("elmo.live.acc"), f"{100 * mix.accuracy:.0f}%")
                c2.markdown(t("elmo.live.acc_layers") + "  \n" + " · ".join(
                    f"{layer_names[j]}: {'—' if a is None else f'{100 * a:.0f}%'}" for j, a in enumerate(per_layer)))
                st.caption(t("elmo.live.acc_caption"))
            else:
                st.caption(t("static.acc_hint"))


mixer(view)


# ---- s and γ as two tasks learned them (core.experiments.learned_mix; cached with the experiments) -------
@st.cache_data(show_spinner=False, max_entries=4)
def _results(path: str, mtime: float) -> dict | None:  # noqa: ARG001 - mtime keys the cache
    return experiments.load_results(path)


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


def _accuracy_cell(r: dict) -> str:
    return t("elmo.learned.cell", acc=_pct(r["accuracy"]), lo=_pct(r["interval"][0]), hi=_pct(r["interval"][1]))


def _span(low: float, high: float) -> str:
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


def learned_section() -> None:
    st.subheader(t("elmo.learned.title"))
    st.markdown(t("elmo.learned.intro"))
    path = Path(experiments.DEFAULT_OUT)
    try:
        results = ss.get(experiments.SESSION_KEY) or _results(str(path), path.stat().st_mtime if path.exists() else 0.0)
    except LabError as err:
        show_error(err)
        return
    entry = results_view.learned_mix(results)
    if entry is None:
        for name, reason in ((results or {}).get("learned_mix") or {}).get("skipped", {}).items():
            st.caption(t("elmo.learned.skipped", name=name, reason=(reason or {}).get(current_lang(), "?")))
        st.info(t("elmo.learned.missing"))
        return
    tasks = entry["tasks"]
    task_names = {task: t(f"elmo.learned.task.{task}") for task in learned_mix.TASKS}
    layer_labels = [f"{j} · {layer_name(n)}" for j, n in enumerate(entry["layer_names"])]
    groups = [(t("elmo.learned.group.learned", task=task_names[task], gamma=f"{tasks[task]['learned']['gamma']:.1f}"),
               tasks[task]["learned"]["s"], "") for task in learned_mix.TASKS]
    groups += [(t("elmo.learned.group.lecture", preset=t(f"elmo.preset.{name}")), PRESETS[name][0], "/")
               for name in learned_mix.LECTURE_PRESETS]
    fig = preset_bars(layer_labels, groups, title=t("elmo.learned.chart_title"), yaxis_title=t("elmo.learned.axis"),
                      ranges=[learned_mix.s_range(tasks[task]) for task in learned_mix.TASKS],
                      large=large, height=520 if large else 440)
    chart(fig, "elmo_learned_bars")
    st.caption(t("elmo.learned.chart_caption", seeds=len(tasks["pos"]["seeds"])))
    unstable = []
    for col, task in zip(st.columns(len(learned_mix.TASKS), gap="large"), learned_mix.TASKS):
        r, uniform, n = tasks[task]["learned"], tasks[task]["fixed"]["uniform"], tasks[task]["n_test"]
        low, high = learned_mix.s_range(tasks[task])
        diff, d_lo, d_hi = difference_interval(r["accuracy"], uniform["accuracy"], n, n)
        spread = max(h - l for l, h in zip(low, high))
        col.markdown(t(f"elmo.learned.result.{task}", s=format_vector(r["s"], 2), gamma=f"{r['gamma']:.1f}",
                       top=layer_labels[int(np.argmax(r["s"]))], spread=f"{spread:.2f}",
                       acc=_accuracy_cell(r), n=n, uniform=_accuracy_cell(uniform),
                       diff=f"{100 * diff:+.1f}", lo=f"{100 * d_lo:+.1f}", hi=f"{100 * d_hi:+.1f}"))
        if spread > learned_mix.UNSTABLE_SPREAD:
            unstable.append(task_names[task])
    depths = {task: [learned_mix.depth(r["s"]) for r in tasks[task]["seeds"]] for task in learned_mix.TASKS}
    st.markdown(t(f"elmo.learned.verdict.{learned_mix.lecture_verdict(tasks)}",
                  **{task: _span(min(d), max(d)) for task, d in depths.items()},
                  syntax=f"{learned_mix.depth(PRESETS['syntax'][0]):.2f}",
                  semantics=f"{learned_mix.depth(PRESETS['semantics'][0]):.2f}"))
    for name in unstable:
        st.markdown(t("elmo.learned.unstable", task=name))
    labels = {"learned": t("elmo.learned.row.learned"), "uniform": t("elmo.learned.row.uniform"),
              **{f"layer_{j}": t("elmo.learned.row.layer", layer=label) for j, label in enumerate(layer_labels)},
              **{name: t("elmo.learned.group.lecture", preset=t(f"elmo.preset.{name}"))
                 for name in learned_mix.LECTURE_PRESETS}}
    rows = [f"| {t('elmo.learned.col.setting')} | " + " | ".join(task_names[task] for task in learned_mix.TASKS) + " |",
            "|---|" + "---|" * len(learned_mix.TASKS)]
    for name, label in labels.items():
        cells = [tasks[task]["learned"] if name == "learned" else tasks[task]["fixed"].get(name)
                 for task in learned_mix.TASKS]
        rows.append(f"| {label} | " + " | ".join("—" if c is None else _accuracy_cell(c) for c in cells) + " |")
    st.markdown("\n".join(rows))
    cfg = entry["config"]
    st.caption(t("elmo.learned.method", model=entry["model"], grid=", ".join(str(c) for c in cfg["c_grid"]),
                 c_pos=tasks["pos"]["c"], c_sentiment=tasks["sentiment"]["c"], steps=cfg["steps"],
                 tags=tasks["pos"]["n_classes"], **{f"{task}_{part}": tasks[task][f"n_{part}"]
                                                    for task in learned_mix.TASKS for part in ("train", "dev", "test")}))
    mode = t("evidence.mode.quick") if results.get("quick") else t("evidence.mode.full")
    st.caption(t("elmo.learned.provenance", created=timestamp(results.get("created", "?")), mode=mode))
    if entry["model"] in experiments.stale_models(results):
        st.info(t("evidence.stale", models=entry["model"]))


st.divider()
with st.container(key="elmo_learned"):  # the scene "learned" scrolls here
    learned_section()
