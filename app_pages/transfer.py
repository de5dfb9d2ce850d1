"""特征式 vs 微调: the lecture's two transfer strategies, measured on one small task, and LoRA, the
parameter-efficient fine-tuning of the lecture's 今天怎么做, next to them.

Thin page: the numbers come from ``core.transfer`` — cached in ``assets/transfer_results.json``
(``python -m core.transfer``) so the page is instant in class, or recomputed here with a progress
bar. The layer / pooling controls live in an st.fragment and only pick numbers out of the results.
"""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core import lora, registry, transfer
from core.errors import LabError
from core.figures import transfer as figs
from core.figures.style import export_html
from core.stats import difference_interval, wilson_interval
from ui import cache
from ui.i18n import error_text, t, timestamp
from ui.page import chart, presenting, show_error
from ui.state import one_of, sync_to_url, url_param

ss = st.session_state
large = presenting()
STEP_CHOICES = (100, 200, 300, 400)
LR_CHOICES = (5e-5, 1e-4)


@st.cache_data(show_spinner=False, max_entries=4)
def _file_results(path: str, mtime: float) -> dict | None:
    return transfer.load_results(path)


@st.cache_data(show_spinner=False, max_entries=8)
def _fingerprint(directory: str, mtime: float, size: int) -> str | None:
    return transfer.model_fingerprint(directory)


def _current_fingerprint(name: str | None) -> str | None:
    if not name:
        return None
    weights = registry.MODELS_DIR / name / "model.safetensors"
    if not weights.is_file():
        return None
    stat = weights.stat()
    return _fingerprint(str(weights.parent), stat.st_mtime, stat.st_size)


def _load_results() -> tuple[dict | None, str]:
    """(results, where they come from: "session" | "file" | "none")."""
    if isinstance(ss.get("transfer_results"), dict):
        return ss["transfer_results"], "session"
    path = transfer.RESULTS_PATH
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None, "none"
    try:
        return _file_results(str(path), mtime), "file"
    except LabError as err:
        st.warning(error_text(err))
        return None, "none"


def _layer_name(j: int) -> str:
    return t("transfer.layer_name.0") if j == 0 else t("transfer.layer_name.j", j=j)


def _fmt_acc(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _fmt_time(res: dict) -> str:
    """Wall clock / CPU seconds; "—" for result files written before the features were timed."""
    if "seconds" not in res:
        return "—"
    return t("transfer.params.time", seconds=f"{res['seconds']:.0f}", cpu=f"{res.get('cpu_seconds', 0):.0f}")


# ---- the two strategies --------------------------------------------------------------------------
st.title(t("transfer.title"))
st.markdown(t("transfer.intro"))
results, origin = _load_results()
dim = int(((results or {}).get("feature_bert") or {}).get("dim", 256))  # the sentence vector's size
col_a, col_b, col_c = st.columns(3, gap="medium")
with col_a.container(border=True):
    st.markdown(f"#### :material/lock: {t('transfer.feature.title')}")
    st.markdown(t("transfer.feature.body", dim=dim, trained=dim + 1))
with col_b.container(border=True):
    st.markdown(f"#### :material/local_fire_department: {t('transfer.finetune.title')}")
    st.markdown(t("transfer.finetune.body"))
with col_c.container(border=True):
    st.markdown(f"#### :material/tune: {t('transfer.lora_card.title')}")
    st.markdown(t("transfer.lora_card.body", r=lora.DEFAULT_LORA.r))


# ---- task and data --------------------------------------------------------------------------------
with st.expander(t("transfer.data.title"), expanded=not large):
    cfg = (results or {}).get("config") or vars(transfer.DEFAULT_CONFIG)
    st.markdown(t("transfer.data.body", train=cfg.get("n_train", 600), test=cfg.get("n_test", 400),
                  chars=cfg.get("max_chars", 64), seed=cfg.get("seed", 0),
                  package=f"{transfer.DATA_PACKAGE}=={transfer.DATA_PACKAGE_VERSION}"))
    examples = (results or {}).get("data", {}).get("examples") or []
    if examples:
        st.dataframe(
            pd.DataFrame({t("transfer.data.col.label"): [t(f"transfer.label.{e['label']}") for e in examples],
                          t("transfer.data.col.text"): [e["text"] for e in examples]}),
            hide_index=True, width="stretch", key="transfer_examples")

# ---- results ----------------------------------------------------------------------------------------
st.header(t("transfer.results.title"))
if results is None:
    st.info(t("transfer.results.none"))
else:
    if origin == "session":
        st.caption(t("transfer.results.from_session", created=timestamp(results.get("created", "?"))))
    else:
        st.caption(t("transfer.results.from_file", created=timestamp(results.get("created", "?")),
                     minutes=f"{results.get('timings', {}).get('total', 0) / 60:.1f}",
                     cpu=f"{results.get('cpu_timings', {}).get('total', 0) / 60:.1f}"))
    stale = []
    for key, name in (("feature_bert", transfer.BERT_MODEL), ("feature_elmo", transfer.ELMO_MODEL)):
        saved = (results.get(key) or {}).get("fingerprint")
        now = _current_fingerprint(name)
        if saved and now and saved != now:
            stale.append(name)
    if stale:
        st.warning(t("transfer.results.stale", models=", ".join(stale)))

elmo_res = (results or {}).get("feature_elmo")
bert_res = (results or {}).get("feature_bert")
ft_res = (results or {}).get("fine_tune")
lora_res = (results or {}).get("lora")  # None in files written before LoRA was added
lora_share = (f"{100 * lora_res['trained_params'] / max(ft_res['trained_params'], 1):.2f}%"
              if lora_res else None)  # LoRA's trained parameters as a share of full fine-tuning's


@st.fragment
def explorer() -> None:
    layers = list(bert_res["layers"])
    n = len(layers)
    if ss.get("transfer_layer") not in range(n):
        ss["transfer_layer"] = min(max(url_param("layer", n - 1, cast=int), 0), n - 1)
    if ss.get("transfer_pool") not in transfer.POOLINGS:
        ss["transfer_pool"] = url_param("pool", "cls", cast=one_of(*transfer.POOLINGS))
    layer_labels = {j: t("transfer.layer_label", j=j, name=_layer_name(j)) for j in range(n)}
    pool_labels = {p: t(f"transfer.pool.{p}") for p in transfer.POOLINGS}

    with st.container(key="transfer_result"):
        c1, c2 = st.columns([3, 2], gap="large")
        c1.select_slider(t("transfer.layer"), options=list(range(n)), key="transfer_layer",
                         format_func=layer_labels.__getitem__, help=t("transfer.layer_help"))
        c2.radio(t("transfer.pool"), list(transfer.POOLINGS), key="transfer_pool", horizontal=True,
                 format_func=pool_labels.__getitem__, help=t("transfer.pool_help"))
        layer, pool = int(ss["transfer_layer"]), ss["transfer_pool"]
        sync_to_url(layer=layer, pool=pool)

        bert_acc = bert_res["accuracy"][pool][layer]
        steps = results["config"]["steps"]
        labels = [t("transfer.method.elmo"), t("transfer.method.bert", layer=_layer_name(layer), pool=pool_labels[pool]),
                  t("transfer.method.finetune", steps=steps), t("transfer.method.lora", steps=steps)]
        accs = [elmo_res["accuracy"] if elmo_res else None, bert_acc, ft_res["accuracy"],
                lora_res["accuracy"] if lora_res else None]
        n_test = results["config"]["n_test"]
        for col, key, acc in zip(st.columns(4), ("elmo", "bert", "finetune", "lora"), accs):
            col.metric(t(f"transfer.metric.{key}"), _fmt_acc(acc))
            if acc is not None:
                low, high = wilson_interval(acc, n_test)
                col.caption(t("transfer.interval", low=_fmt_acc(low), high=_fmt_acc(high), n=n_test))
        gain, low, high = difference_interval(accs[2], accs[1], n_test, n_test)
        verdict = "transfer.gain.unclear" if low <= 0 <= high else "transfer.gain.clear"
        st.markdown(t(verdict, gain=f"{100 * gain:+.1f}", low=f"{100 * low:+.1f}", high=f"{100 * high:+.1f}",
                      n=n_test))
        if elmo_res is None:
            st.caption(t("transfer.elmo_skipped"))
        if lora_res is None:
            st.caption(t("transfer.lora.missing"))
        bars = [t("transfer.bar.elmo"), t("transfer.bar.bert", layer=_layer_name(layer), pool=pool_labels[pool]),
                t("transfer.bar.finetune"), t("transfer.bar.lora")]
        fig = figs.accuracy_bars(bars, accs, ["feature", "feature", "finetune", "lora"], hover=labels,
                                 baseline=results.get("majority_baseline"),
                                 baseline_label=t("transfer.baseline"), axis_title=t("transfer.acc_axis"),
                                 title=t("transfer.fig.acc"), large=large)
        chart(fig, "transfer_acc")

    refs = [(t("transfer.ref.finetune"), ft_res["accuracy"], figs.FINETUNE_COLOUR)]
    if elmo_res:
        refs.append((t("transfer.ref.elmo"), elmo_res["accuracy"], "#8C564B"))
    curve = figs.layer_curve([_layer_name(j) for j in range(n)], {pool_labels[p]: bert_res["accuracy"][p] for p in transfer.POOLINGS},
                             selected=layer, references=refs, baseline=results.get("majority_baseline"),
                             baseline_label=t("transfer.baseline"), axis_title=t("transfer.acc_axis"),
                             layer_axis_title=t("transfer.layer_axis"), title=t("transfer.fig.layers"), large=large)
    chart(curve, "transfer_layers")
    st.caption(t("transfer.layers_caption"))
    d1, d2 = st.columns(2)
    d1.download_button(t("transfer.dl_html"), data=lambda: export_html(fig), file_name="feature-vs-finetune.html",
                       mime="text/html", key="transfer_dl_html")
    d2.download_button(t("transfer.dl_json"), data=lambda: json.dumps(results, ensure_ascii=False, indent=1),
                       file_name="transfer_results.json", mime="application/json", key="transfer_dl_json")


if results is not None:
    explorer()

    # ---- what was updated -----------------------------------------------------------------------------
    st.header(t("transfer.params.title"))
    rows = []  # (approach, trained, frozen, what, time)
    if elmo_res:
        rows.append((t("transfer.method.elmo_short"), elmo_res["trained_params"], elmo_res["frozen_params"],
                     t("transfer.params.what.feature", model=elmo_res["model"]), _fmt_time(elmo_res)))
    rows.append((t("transfer.method.bert_short"), bert_res["trained_params"], bert_res["frozen_params"],
                 t("transfer.params.what.feature", model=bert_res["model"]), _fmt_time(bert_res)))
    rows.append((t("transfer.method.finetune_short"), ft_res["trained_params"], ft_res["frozen_params"],
                 t("transfer.params.what.finetune", model=ft_res["model"], encoder=f"{ft_res['encoder_params']:,}",
                   head=f"{ft_res['head_params']:,}"), _fmt_time(ft_res)))
    if lora_res:
        rows.append((t("transfer.method.lora_short"), lora_res["trained_params"], lora_res["frozen_params"],
                     t("transfer.params.what.lora", model=lora_res["model"], encoder=f"{lora_res['frozen_params']:,}",
                       adapters=f"{lora_res['adapter_params']:,}", r=lora_res["settings"]["r"],
                       head=f"{lora_res['head_params']:,}"), _fmt_time(lora_res)))
    # st.table, not st.dataframe: the long "what" cells wrap instead of being cut off
    st.table(pd.DataFrame({
        t("transfer.params.col.method"): [r[0] for r in rows],
        t("transfer.params.col.trained"): [f"{r[1]:,}" for r in rows],
        t("transfer.params.col.frozen"): [f"{r[2]:,}" for r in rows],
        t("transfer.params.col.time"): [r[4] for r in rows],
        t("transfer.params.col.what"): [r[3] for r in rows],
    }), hide_index=True)
    share = bert_res["trained_params"] / max(ft_res["trained_params"], 1)
    st.markdown(t("transfer.params.note", feature=f"{bert_res['trained_params']:,}",
                  finetune=f"{ft_res['trained_params']:,}", share=f"{100 * share:.3f}%"))
    if lora_res:
        st.markdown(t("transfer.params.note_lora", lora=f"{lora_res['trained_params']:,}", share=lora_share))
    st.caption(t("transfer.params.time_caption", threads=results.get("torch_threads", 1)))
    chart(figs.parameter_bars([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                              trained_name=t("transfer.params.trained"), frozen_name=t("transfer.params.frozen"),
                              axis_title=t("transfer.params.axis"), title=t("transfer.fig.params"), large=large),
          "transfer_param_fig")

    # ---- fine-tuning over time -------------------------------------------------------------------------
    st.header(t("transfer.curve.title"))
    runs = [figs.CurveRun(t("transfer.bar.finetune"), [p["step"] for p in ft_res["curve"]],
                          [p["accuracy"] for p in ft_res["curve"]], ft_res.get("losses", []), figs.FINETUNE_COLOUR)]
    if lora_res:
        runs.append(figs.CurveRun(t("transfer.bar.lora"), [p["step"] for p in lora_res["curve"]],
                                  [p["accuracy"] for p in lora_res["curve"]], lora_res["losses"], figs.LORA_COLOUR))
    chart(figs.finetune_curve(runs, acc_name=t("transfer.curve.acc"),
                              loss_name=t("transfer.curve.loss"), step_axis_title=t("transfer.curve.step"),
                              acc_axis_title=t("transfer.acc_axis"), loss_axis_title=t("transfer.curve.loss"),
                              title=t("transfer.fig.curve"), large=large), "transfer_curve")
    cfg = results["config"]
    st.caption(t("transfer.curve.caption", steps=cfg["steps"], batch=cfg["batch_size"], lr=f"{cfg['lr']:g}",
                 seconds=f"{ft_res.get('seconds', 0):.0f}", cpu=f"{ft_res.get('cpu_seconds', 0):.0f}",
                 threads=results.get("torch_threads", 1)))
    if lora_res:
        st.caption(t("transfer.curve.caption_lora", lr=f"{lora_res['settings']['lr']:g}",
                     seconds=f"{lora_res['seconds']:.0f}", cpu=f"{lora_res['cpu_seconds']:.0f}"))
    st.info(t("transfer.takeaway"), icon=":material/school:")

# ---- today: parameter-efficient fine-tuning and prompting (lecture: 今天怎么做) ---------------------------
st.header(t("transfer.lora.title"))
if results is not None:
    if lora_res is not None:
        settings = lora_res["settings"]
        st.markdown(t("transfer.lora.body", r=settings["r"], alpha=settings["alpha"],
                      targets=", ".join(settings["targets"]), adapters=f"{lora_res['adapter_params']:,}",
                      head=f"{lora_res['head_params']:,}", lr=f"{settings['lr']:g}"))
    with st.container(key="transfer_lora"):  # the presentation scene "lora" scrolls here
        if lora_res is None:
            st.info(t("transfer.lora.missing"))
        else:
            n_test = results["config"]["n_test"]
            top = len(bert_res["layers"]) - 1  # the top layer's [CLS] vector: what the fine-tuned models classify
            approaches = [(t("transfer.bar.bert", layer=_layer_name(top), pool=t("transfer.pool.cls")), "feature",
                           bert_res["accuracy"]["cls"][top], bert_res),
                          (t("transfer.bar.finetune"), "finetune", ft_res["accuracy"], ft_res),
                          (t("transfer.bar.lora"), "lora", lora_res["accuracy"], lora_res)]
            summary = figs.approach_summary(
                [a[0] for a in approaches], [a[1] for a in approaches], [a[2] for a in approaches],
                [wilson_interval(a[2], n_test) for a in approaches], [a[3]["trained_params"] for a in approaches],
                [a[3].get("cpu_seconds", 0.0) for a in approaches],
                panel_titles=[t("transfer.lora.panel.acc"), t("transfer.lora.panel.params"),
                              t("transfer.lora.panel.time")],
                title=t("transfer.fig.lora"), large=large)
            chart(summary, "transfer_lora_fig")
            diff, low, high = difference_interval(lora_res["accuracy"], ft_res["accuracy"], n_test, n_test)
            verdict = "transfer.lora.verdict.unclear" if low <= 0 <= high else "transfer.lora.verdict.clear"
            st.markdown(t(verdict, diff=f"{100 * diff:+.1f}", low=f"{100 * low:+.1f}", high=f"{100 * high:+.1f}",
                          n=n_test, share=lora_share))
st.subheader(t("transfer.prompting.title"))
st.markdown(t("transfer.prompting.body"))

# ---- recompute -----------------------------------------------------------------------------------------
with st.expander(t("transfer.recompute.title"), expanded=results is None):
    st.markdown(t("transfer.recompute.body", bert=transfer.BERT_MODEL, elmo=transfer.ELMO_MODEL or "—"))
    if ss.get("bert_model") and ss.get("bert_model") != transfer.BERT_MODEL:
        st.caption(t("transfer.recompute.fixed_model", chosen=ss["bert_model"], bert=transfer.BERT_MODEL))
    infos = {m.name: m for m in registry.list_models()}
    bert_info = infos.get(transfer.BERT_MODEL)
    elmo_info = infos.get(transfer.ELMO_MODEL) if transfer.ELMO_MODEL else None
    bert_ok = bert_info is None or bert_info.available  # None: a directory or hub id (tests, custom setups)
    if not bert_ok:
        st.warning(t("transfer.recompute.no_bert", reason=error_text(bert_info.problem)))
    if transfer.ELMO_MODEL and elmo_info is not None and not elmo_info.available:
        st.warning(t("transfer.recompute.no_elmo", reason=error_text(elmo_info.problem)))
    r1, r2 = st.columns(2)
    default_steps = transfer.DEFAULT_CONFIG.steps
    r1.select_slider(t("transfer.recompute.steps"), options=sorted({*STEP_CHOICES, default_steps}),
                     value=default_steps, key="transfer_steps", help=t("transfer.recompute.steps_help"))
    lr_labels = {lr: f"{lr:g}" for lr in LR_CHOICES}
    r2.radio(t("transfer.recompute.lr"), list(LR_CHOICES), index=LR_CHOICES.index(transfer.DEFAULT_CONFIG.lr)
             if transfer.DEFAULT_CONFIG.lr in LR_CHOICES else 0, key="transfer_lr", horizontal=True,
             format_func=lr_labels.__getitem__)
    if st.button(t("transfer.recompute.button"), key="transfer_run", type="primary", disabled=not bert_ok,
                 icon=":material/play_arrow:"):
        bar = st.progress(0.0, text=t("transfer.stage.data"))
        stage_text = {s: t(f"transfer.stage.{s}") for s in ("data", "elmo", "bert", "probe", "finetune", "lora", "done")}

        def report(fraction: float, stage: str) -> None:
            bar.progress(min(max(float(fraction), 0.0), 1.0),
                         text=f"{stage_text.get(stage, stage)} · {100 * fraction:.0f}%")

        try:
            bert = cache.encoder(transfer.BERT_MODEL)
            elmo = None
            if transfer.ELMO_MODEL and (elmo_info is None or elmo_info.available):
                try:
                    elmo = cache.encoder(transfer.ELMO_MODEL)
                except LabError as err:
                    st.warning(t("transfer.recompute.no_elmo", reason=error_text(err)))
            config = transfer.DEFAULT_CONFIG.replace(steps=int(ss["transfer_steps"]), lr=float(ss["transfer_lr"]))
            ss["transfer_results"] = transfer.run_transfer(bert, elmo, config, progress=report)
        except Exception as err:  # a LabError message, or a generic line: never a traceback on the projector
            show_error(err)
        else:
            st.rerun()
    if origin == "session":
        st.button(t("transfer.recompute.discard"), key="transfer_discard",
                  on_click=lambda: ss.pop("transfer_results", None))
    st.caption(t("transfer.recompute.cli"))
    st.code("python -m core.transfer", language="bash")
