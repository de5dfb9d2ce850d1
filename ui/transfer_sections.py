"""The feature-vs-fine-tuning page's sections, each drawn from the saved or recomputed results of
``core.transfer``: the layer / pooling explorer (a fragment that only picks numbers out of the results),
the parameters each approach trains, fine-tuning over time, LoRA today, and recompute.
"""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core import registry, transfer
from core.errors import LabError
from core.figures import transfer as figs
from core.figures.style import export_html
from core.stats import difference_interval, wilson_interval
from ui import cache
from ui.i18n import error_text, t
from ui.page import chart, presenting, show_error
from ui.state import one_of, sync_to_url, url_param

STEP_CHOICES = (100, 200, 300, 400)
LR_CHOICES = (5e-5, 1e-4)
ss = st.session_state


def _lora_share(view: transfer.TransferView) -> str | None:
    share = view.lora_share()
    return None if share is None else f"{100 * share:.2f}%"


def _layer_name(j: int) -> str:
    return t("transfer.layer_name.0") if j == 0 else t("transfer.layer_name.j", j=j)


def _fmt_acc(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _fmt_time(approach: transfer.Approach) -> str:
    """Wall clock / CPU seconds; "—" for result files written before the features were timed."""
    if approach.seconds is None:
        return "—"
    return t("transfer.params.time", seconds=f"{approach.seconds:.0f}", cpu=f"{approach.cpu_seconds or 0:.0f}")


@st.fragment
def explorer(view: transfer.TransferView) -> None:
    large, n = presenting(), len(view.bert.layers)
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

        steps = view.config["steps"]
        labels = [t("transfer.method.elmo"), t("transfer.method.bert", layer=_layer_name(layer), pool=pool_labels[pool]),
                  t("transfer.method.finetune", steps=steps), t("transfer.method.lora", steps=steps)]
        accs = [view.elmo.accuracy if view.elmo else None, view.bert.at(pool, layer), view.finetune.accuracy,
                view.lora.accuracy if view.lora else None]
        n_test = view.n_test
        for col, key, acc in zip(st.columns(4), ("elmo", "bert", "finetune", "lora"), accs):
            col.metric(t(f"transfer.metric.{key}"), _fmt_acc(acc))
            if acc is not None:
                low, high = wilson_interval(acc, n_test)
                col.caption(t("transfer.interval", low=_fmt_acc(low), high=_fmt_acc(high), n=n_test))
        gain, low, high = difference_interval(accs[2], accs[1], n_test, n_test)
        verdict = "transfer.gain.unclear" if low <= 0 <= high else "transfer.gain.clear"
        st.markdown(t(verdict, gain=f"{100 * gain:+.1f}", low=f"{100 * low:+.1f}", high=f"{100 * high:+.1f}",
                      n=n_test))
        if view.elmo is None:
            st.caption(t("transfer.elmo_skipped"))
        if view.lora is None:
            st.caption(t("transfer.lora.missing"))
        bars = [t("transfer.bar.elmo"), t("transfer.bar.bert", layer=_layer_name(layer), pool=pool_labels[pool]),
                t("transfer.bar.finetune"), t("transfer.bar.lora")]
        fig = figs.accuracy_bars(bars, accs, ["feature", "feature", "finetune", "lora"], hover=labels,
                                 baseline=view.majority_baseline,
                                 baseline_label=t("transfer.baseline"), axis_title=t("transfer.acc_axis"),
                                 title=t("transfer.fig.acc"), large=large)
        chart(fig, "transfer_acc")

    refs = [(t("transfer.ref.finetune"), view.finetune.accuracy, figs.FINETUNE_COLOUR)]
    if view.elmo:
        refs.append((t("transfer.ref.elmo"), view.elmo.accuracy, "#8C564B"))
    curve = figs.layer_curve([_layer_name(j) for j in range(n)],
                             {pool_labels[p]: view.bert.per_layer[p] for p in transfer.POOLINGS}, selected=layer,
                             references=refs, baseline=view.majority_baseline, baseline_label=t("transfer.baseline"),
                             axis_title=t("transfer.acc_axis"), layer_axis_title=t("transfer.layer_axis"),
                             title=t("transfer.fig.layers"), large=large)
    chart(curve, "transfer_layers")
    st.caption(t("transfer.layers_caption"))
    d1, d2 = st.columns(2)
    d1.download_button(t("transfer.dl_html"), data=lambda: export_html(fig), file_name="feature-vs-finetune.html",
                       mime="text/html", key="transfer_dl_html")
    d2.download_button(t("transfer.dl_json"), data=lambda: json.dumps(view.raw, ensure_ascii=False, indent=1),
                       file_name="transfer_results.json", mime="application/json", key="transfer_dl_json")


# ---- what was updated ----------------------------------------------------------------------------------
def parameters(view: transfer.TransferView) -> None:
    large, elmo, bert, ft, lora = presenting(), view.elmo, view.bert, view.finetune, view.lora
    st.header(t("transfer.params.title"))
    rows = []  # (approach, trained, frozen, what, time)
    if elmo:
        rows.append((t("transfer.method.elmo_short"), elmo.trained_params, elmo.frozen_params,
                     t("transfer.params.what.feature", model=elmo.model), _fmt_time(elmo)))
    rows.append((t("transfer.method.bert_short"), bert.trained_params, bert.frozen_params,
                 t("transfer.params.what.feature", model=bert.model), _fmt_time(bert)))
    rows.append((t("transfer.method.finetune_short"), ft.trained_params, ft.frozen_params,
                 t("transfer.params.what.finetune", model=ft.model, encoder=f"{ft.encoder_params:,}",
                   head=f"{ft.head_params:,}"), _fmt_time(ft)))
    if lora:
        rows.append((t("transfer.method.lora_short"), lora.trained_params, lora.frozen_params,
                     t("transfer.params.what.lora", model=lora.model, encoder=f"{lora.frozen_params:,}",
                       adapters=f"{lora.adapter_params:,}", r=lora.settings["r"], head=f"{lora.head_params:,}"),
                     _fmt_time(lora)))
    # st.table, not st.dataframe: the long "what" cells wrap instead of being cut off
    st.table(pd.DataFrame({
        t("transfer.params.col.method"): [r[0] for r in rows],
        t("transfer.params.col.trained"): [f"{r[1]:,}" for r in rows],
        t("transfer.params.col.frozen"): [f"{r[2]:,}" for r in rows],
        t("transfer.params.col.time"): [r[4] for r in rows],
        t("transfer.params.col.what"): [r[3] for r in rows],
    }), hide_index=True)
    share = bert.trained_params / max(ft.trained_params, 1)
    st.markdown(t("transfer.params.note", feature=f"{bert.trained_params:,}",
                  finetune=f"{ft.trained_params:,}", share=f"{100 * share:.3f}%"))
    if lora:
        st.markdown(t("transfer.params.note_lora", lora=f"{lora.trained_params:,}", share=_lora_share(view)))
    st.caption(t("transfer.params.time_caption", threads=view.threads))
    chart(figs.parameter_bars([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                              trained_name=t("transfer.params.trained"), frozen_name=t("transfer.params.frozen"),
                              axis_title=t("transfer.params.axis"), title=t("transfer.fig.params"), large=large),
          "transfer_param_fig")


# ---- fine-tuning over time ---------------------------------------------------------------------------
def fine_tuning_curve(view: transfer.TransferView) -> None:
    large, ft, lora = presenting(), view.finetune, view.lora
    st.header(t("transfer.curve.title"))
    runs = [figs.CurveRun(t("transfer.bar.finetune"), ft.curve_steps, ft.curve_accuracy, ft.losses, figs.FINETUNE_COLOUR)]
    if lora:
        runs.append(figs.CurveRun(t("transfer.bar.lora"), lora.curve_steps, lora.curve_accuracy, lora.losses,
                                  figs.LORA_COLOUR))
    chart(figs.finetune_curve(runs, acc_name=t("transfer.curve.acc"),
                              loss_name=t("transfer.curve.loss"), step_axis_title=t("transfer.curve.step"),
                              acc_axis_title=t("transfer.acc_axis"), loss_axis_title=t("transfer.curve.loss"),
                              title=t("transfer.fig.curve"), large=large), "transfer_curve")
    cfg = view.config
    st.caption(t("transfer.curve.caption", steps=cfg["steps"], batch=cfg["batch_size"], lr=f"{cfg['lr']:g}",
                 seconds=f"{ft.seconds or 0:.0f}", cpu=f"{ft.cpu_seconds or 0:.0f}", threads=view.threads))
    if lora:
        st.caption(t("transfer.curve.caption_lora", lr=f"{lora.settings['lr']:g}",
                     seconds=f"{lora.seconds or 0:.0f}", cpu=f"{lora.cpu_seconds or 0:.0f}"))
    st.info(t("transfer.takeaway"), icon=":material/school:")


# ---- today: parameter-efficient fine-tuning and prompting (lecture: 今天怎么做) ---------------------------
def lora_today(view: transfer.TransferView | None) -> None:
    st.header(t("transfer.lora.title"))
    if view is not None:
        if view.lora is not None:
            settings = view.lora.settings
            st.markdown(t("transfer.lora.body", r=settings["r"], alpha=settings["alpha"],
                          targets=", ".join(settings["targets"]), adapters=f"{view.lora.adapter_params:,}",
                          head=f"{view.lora.head_params:,}", lr=f"{settings['lr']:g}"))
        with st.container(key="transfer_lora"):  # the presentation scene "lora" scrolls here
            if view.lora is None:
                st.info(t("transfer.lora.missing"))
            else:
                _lora_summary(view)
    st.subheader(t("transfer.prompting.title"))
    st.markdown(t("transfer.prompting.body"))


def _lora_summary(view: transfer.TransferView) -> None:
    n_test, top = view.n_test, len(view.bert.layers) - 1
    # the top layer's [CLS] vector (BertFeatures.accuracy): what the fine-tuned models classify
    approaches = [(t("transfer.bar.bert", layer=_layer_name(top), pool=t("transfer.pool.cls")), "feature", view.bert),
                  (t("transfer.bar.finetune"), "finetune", view.finetune), (t("transfer.bar.lora"), "lora", view.lora)]
    chart(figs.approach_summary(
        [name for name, _, _ in approaches], [kind for _, kind, _ in approaches], [a.accuracy for _, _, a in approaches],
        [wilson_interval(a.accuracy, n_test) for _, _, a in approaches], [a.trained_params for _, _, a in approaches],
        [a.cpu_seconds or 0.0 for _, _, a in approaches],
        panel_titles=[t("transfer.lora.panel.acc"), t("transfer.lora.panel.params"), t("transfer.lora.panel.time")],
        title=t("transfer.fig.lora"), large=presenting()), "transfer_lora_fig")
    diff, low, high = difference_interval(view.lora.accuracy, view.finetune.accuracy, n_test, n_test)
    verdict = "transfer.lora.verdict.unclear" if low <= 0 <= high else "transfer.lora.verdict.clear"
    st.markdown(t(verdict, diff=f"{100 * diff:+.1f}", low=f"{100 * low:+.1f}", high=f"{100 * high:+.1f}",
                  n=n_test, share=_lora_share(view)))


# ---- recompute: models load here, on the click, never when the page is only viewed ---------------------
def recompute(from_session: bool) -> None:
    """The run's settings and button; ``from_session``: the results shown are this session's, offer to discard them."""
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
    if from_session:
        st.button(t("transfer.recompute.discard"), key="transfer_discard",
                  on_click=lambda: ss.pop("transfer_results", None))
    st.caption(t("transfer.recompute.cli"))
    st.code("python -m core.transfer", language="bash")
