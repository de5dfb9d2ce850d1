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


def _entries(results: dict) -> tuple[dict | None, dict, dict, dict | None]:
    """ELMo features (None when skipped), BERT features, fine-tuning, LoRA (None in files from before LoRA)."""
    return results.get("feature_elmo"), results["feature_bert"], results["fine_tune"], results.get("lora")


def lora_share(results: dict) -> str | None:
    """LoRA's trained parameters as a share of full fine-tuning's."""
    _, _, ft_res, lora_res = _entries(results)
    return f"{100 * lora_res['trained_params'] / max(ft_res['trained_params'], 1):.2f}%" if lora_res else None


def _layer_name(j: int) -> str:
    return t("transfer.layer_name.0") if j == 0 else t("transfer.layer_name.j", j=j)


def _fmt_acc(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _fmt_time(res: dict) -> str:
    """Wall clock / CPU seconds; "—" for result files written before the features were timed."""
    if "seconds" not in res:
        return "—"
    return t("transfer.params.time", seconds=f"{res['seconds']:.0f}", cpu=f"{res.get('cpu_seconds', 0):.0f}")


@st.fragment
def explorer(results: dict) -> None:
    elmo_res, bert_res, ft_res, lora_res = _entries(results)
    large = presenting()
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


# ---- what was updated ----------------------------------------------------------------------------------
def parameters(results: dict) -> None:
    elmo_res, bert_res, ft_res, lora_res = _entries(results)
    large = presenting()
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
        st.markdown(t("transfer.params.note_lora", lora=f"{lora_res['trained_params']:,}", share=lora_share(results)))
    st.caption(t("transfer.params.time_caption", threads=results.get("torch_threads", 1)))
    chart(figs.parameter_bars([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                              trained_name=t("transfer.params.trained"), frozen_name=t("transfer.params.frozen"),
                              axis_title=t("transfer.params.axis"), title=t("transfer.fig.params"), large=large),
          "transfer_param_fig")


# ---- fine-tuning over time ---------------------------------------------------------------------------
def fine_tuning_curve(results: dict) -> None:
    _, _, ft_res, lora_res = _entries(results)
    large = presenting()
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
def lora_today(results: dict | None) -> None:
    st.header(t("transfer.lora.title"))
    if results is not None:
        _, bert_res, ft_res, lora_res = _entries(results)
        if lora_res is not None:
            settings = lora_res["settings"]
            st.markdown(t("transfer.lora.body", r=settings["r"], alpha=settings["alpha"],
                          targets=", ".join(settings["targets"]), adapters=f"{lora_res['adapter_params']:,}",
                          head=f"{lora_res['head_params']:,}", lr=f"{settings['lr']:g}"))
        with st.container(key="transfer_lora"):  # the presentation scene "lora" scrolls here
            if lora_res is None:
                st.info(t("transfer.lora.missing"))
            else:
                _lora_summary(results, bert_res, ft_res, lora_res)
    st.subheader(t("transfer.prompting.title"))
    st.markdown(t("transfer.prompting.body"))


def _lora_summary(results: dict, bert_res: dict, ft_res: dict, lora_res: dict) -> None:
    n_test = results["config"]["n_test"]
    top = len(bert_res["layers"]) - 1  # the top layer's [CLS] vector: what the fine-tuned models classify
    approaches = [(t("transfer.bar.bert", layer=_layer_name(top), pool=t("transfer.pool.cls")), "feature",
                   bert_res["accuracy"]["cls"][top], bert_res),
                  (t("transfer.bar.finetune"), "finetune", ft_res["accuracy"], ft_res),
                  (t("transfer.bar.lora"), "lora", lora_res["accuracy"], lora_res)]
    chart(figs.approach_summary(
        [a[0] for a in approaches], [a[1] for a in approaches], [a[2] for a in approaches],
        [wilson_interval(a[2], n_test) for a in approaches], [a[3]["trained_params"] for a in approaches],
        [a[3].get("cpu_seconds", 0.0) for a in approaches],
        panel_titles=[t("transfer.lora.panel.acc"), t("transfer.lora.panel.params"), t("transfer.lora.panel.time")],
        title=t("transfer.fig.lora"), large=presenting()), "transfer_lora_fig")
    diff, low, high = difference_interval(lora_res["accuracy"], ft_res["accuracy"], n_test, n_test)
    verdict = "transfer.lora.verdict.unclear" if low <= 0 <= high else "transfer.lora.verdict.clear"
    st.markdown(t(verdict, diff=f"{100 * diff:+.1f}", low=f"{100 * low:+.1f}", high=f"{100 * high:+.1f}",
                  n=n_test, share=lora_share(results)))


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
