"""The feature-vs-fine-tuning page's sections, each drawn from the saved or recomputed results of
``core.transfer``: the layer / pooling explorer (a fragment that only picks numbers out of the results),
the parameters each approach trains, fine-tuning over time, LoRA today, and recompute.
"""
from __future__ import annotations

import json
import math

import pandas as pd
import streamlit as st

from core import transfer
from core.figures import transfer as figs
from core.figures.style import export_html
from core.guard.errors import LabError
from core.models.catalogue import list_models
from core.transfer.lora import DEFAULT_LORA
from ui import cache, presentation, training_gate
from ui.budget_note import budget_note
from ui.i18n import error_text, t
from ui.page import chart, how_computed, plain_answer, presenting, shared_figure
from ui.sidebar import bert_model_name
from ui.state import Field, in_range, one_of, seed, sync_to_url

STEP_CHOICES = (100, 200, 300, 400)
LR_CHOICES = transfer.FINETUNE_LRS  # the candidates python -m core.transfer chooses from
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


def question(view: transfer.TransferView) -> None:
    """The page's question and its answer in words a student can repeat, from the comparison the "Results" verdict
    uses: fine-tuning against the frozen BERT features chosen on the validation reviews; and why, when it does not
    win, the features can: fine-tuning's own training and test curve (it fits its few reviews, its test accuracy
    peaks early)."""
    ft = view.finetune
    chosen = transfer.validation_pick(view.bert)
    with plain_answer("transfer_qa", t("transfer.qa.question")):
        if chosen is None:  # an older results file: the best on test may be named, not judged
            best = max(((p, j) for p in transfer.POOLINGS for j in range(len(view.bert.layers))),
                       key=lambda choice: view.bert.at(*choice))
            st.markdown(t("transfer.qa.unjudged", ft=_fmt_acc(ft.accuracy), best=_fmt_acc(view.bert.at(*best)),
                          layer=_layer_name(best[1]), pool=t(f"transfer.pool.{best[0]}"), n=view.n_test))
            return
        probe = view.bert.probe(*chosen)
        comparison = transfer.compare(ft, probe)
        st.markdown(t(f"transfer.qa.verdict.{comparison.verdict}", ft=_fmt_acc(ft.accuracy),
                      best=_fmt_acc(probe.accuracy), layer=_layer_name(chosen[1]), pool=t(f"transfer.pool.{chosen[0]}"),
                      diff=f"{abs(100 * comparison.diff):.1f}", low=_points(comparison.low),
                      high=_points(comparison.high), p=_p_value(comparison), n=view.n_test, model=ft.model))
        if comparison.verdict != "higher" and ft.train_accuracy is not None and ft.curve_accuracy:
            peak = max(range(len(ft.curve_accuracy)), key=lambda i: (ft.curve_accuracy[i], -i))
            why = t("transfer.qa.why", n_train=view.config.get("n_train", "—"), finetune=f"{ft.trained_params:,}",
                    feature=f"{probe.trained_params:,}", train=_fmt_acc(ft.train_accuracy),
                    peak_step=ft.curve_steps[peak], peak=_fmt_acc(ft.curve_accuracy[peak]),
                    final=_fmt_acc(ft.curve_accuracy[-1]))
            st.markdown(why + (t("transfer.qa.why_mean") if chosen[0] == "mean" else ""))
        st.caption(t("transfer.qa.details"))


def _p_value(comparison: transfer.Comparison) -> str:
    return "—" if math.isnan(comparison.p_value) else f"{comparison.p_value:.2g}"


@presentation.fragment
def explorer(view: transfer.TransferView) -> None:
    large, n = presenting(), len(view.bert.layers)
    seed(Field("transfer_layer", "layer", n - 1, in_range(0, n - 1)),
         Field("transfer_pool", "pool", "cls", one_of(*transfer.POOLINGS)))
    layer_labels = {j: t("transfer.layer_label", j=j, name=_layer_name(j)) for j in range(n)}
    pool_labels = {p: t(f"transfer.pool.{p}") for p in transfer.POOLINGS}

    with st.container(key="transfer_compare"):  # the scene "transfer": the four accuracies and the verdict
        c1, c2 = st.columns([3, 2], gap="large")
        c1.select_slider(t("transfer.layer"), options=list(range(n)), key="transfer_layer",
                         format_func=layer_labels.__getitem__, help=t("transfer.layer_help"))
        c2.radio(t("transfer.pool"), list(transfer.POOLINGS), key="transfer_pool", horizontal=True,
                 format_func=pool_labels.__getitem__, help=t("transfer.pool_help"))
        layer, pool = int(ss["transfer_layer"]), ss["transfer_pool"]
        sync_to_url(layer=layer, pool=pool)

        steps = view.config["steps"]
        labels = [t("transfer.method.elmo"),
                  t("transfer.method.bert", layer=_layer_name(layer), pool=pool_labels[pool]),
                  t("transfer.method.finetune", steps=steps), t("transfer.method.lora", steps=steps)]
        probe = view.bert.probe(pool, layer)
        approaches = [view.elmo, probe, view.finetune, view.lora]
        for col, key, approach in zip(st.columns(4), ("elmo", "bert", "finetune", "lora"), approaches):
            col.metric(t(f"transfer.metric.{key}"), _fmt_acc(approach.accuracy if approach else None))
            if approach is not None:
                low, high = approach.interval
                col.caption(t("transfer.interval", low=_fmt_acc(low), high=_fmt_acc(high), n=view.n_test))
                if approach.choice and not large:  # on the projector: in the tuning table below (room for the verdict)
                    col.caption(t("transfer.chosen", name=approach.choice.name, value=f"{approach.choice.chosen:g}"))
        chosen = transfer.validation_pick(view.bert)
        if chosen is not None:  # the lesson of the scene: fine-tuning against the probe chosen on validation
            _verdict("transfer.gain", transfer.compare(view.finetune, view.bert.probe(*chosen)), n=view.n_test,
                     probe=_probe_name(*chosen, pool_labels))
    _other_verdicts(view, pool, layer, chosen, pool_labels)
    if view.elmo is None:
        st.caption(t("transfer.elmo_skipped"))
    else:
        _elmo_page_note(view)
    if view.lora is None:
        st.caption(t("transfer.lora.missing"))
    _tuning_table(view, probe, labels)
    bars = [t("transfer.bar.elmo"), t("transfer.bar.bert", layer=_layer_name(layer), pool=pool_labels[pool]),
            t("transfer.bar.finetune"), t("transfer.bar.lora")]
    fig = shared_figure(figs.accuracy_bars, bars, [a.accuracy if a else None for a in approaches],
                        ["feature", "feature", "finetune", "lora"], hover=labels,
                        baseline=view.majority_baseline,
                        baseline_label=t("transfer.baseline"), axis_title=t("transfer.acc_axis"),
                        title=t("transfer.fig.acc"), large=large)
    chart(fig, "transfer_acc")
    budget_note(transfer.ELMO_MODEL, transfer.BERT_MODEL)

    refs = [(t("transfer.ref.finetune"), view.finetune.accuracy, figs.FINETUNE_COLOUR)]
    if view.elmo:
        refs.append((t("transfer.ref.elmo"), view.elmo.accuracy, "#8C564B"))
    curve = shared_figure(figs.layer_curve, [_layer_name(j) for j in range(n)],
                          {pool_labels[p]: view.bert.per_layer[p] for p in transfer.POOLINGS}, selected=layer,
                          intervals={pool_labels[p]: [view.bert.probe(p, j).interval for j in range(n)]
                                     for p in transfer.POOLINGS},
                          references=refs, baseline=view.majority_baseline, baseline_label=t("transfer.baseline"),
                          axis_title=t("transfer.acc_axis"), layer_axis_title=t("transfer.layer_axis"),
                          title=t("transfer.fig.layers"), large=large)
    chart(curve, "transfer_layers")
    _layers_caption(view, pool_labels)
    d1, d2 = st.columns(2)
    d1.download_button(t("transfer.dl_html"), data=lambda: export_html(fig), file_name="feature-vs-finetune.html",
                       mime="text/html", key="transfer_dl_html")
    d2.download_button(t("transfer.dl_json"), data=lambda: json.dumps(view.raw, ensure_ascii=False, indent=1),
                       file_name="transfer_results.json", mime="application/json", key="transfer_dl_json")


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def _verdict(prefix: str, comparison: transfer.Comparison, **values) -> None:
    """The sentence ``{prefix}.{higher|lower|tie}`` that the comparison's interval calls for, with its numbers."""
    st.markdown(t(f"{prefix}.{comparison.verdict}", diff=_points(comparison.diff), low=_points(comparison.low),
                  high=_points(comparison.high),
                  method=t("transfer.method_paired" if comparison.paired else "transfer.method_independent"), **values))


def _probe_name(pool: str, layer: int, pool_labels: dict[str, str]) -> str:
    return f"{_layer_name(layer)}, {pool_labels[pool]}"


def _other_verdicts(view: transfer.TransferView, pool: str, layer: int, chosen: tuple[str, int] | None,
                    pool_labels: dict[str, str]) -> None:
    """The probe picked on the page (one of several looked at on the test reviews): its differences, no verdict;
    ELMo against the BERT probe chosen on validation; how much fine-tuning's one run moved."""
    if chosen != (pool, layer):
        picked = view.bert.probe(pool, layer)
        ft = transfer.compare(view.finetune, picked)
        elmo = transfer.compare(view.elmo, picked) if view.elmo else None
        st.markdown(t("transfer.gain.picked", probe=_probe_name(pool, layer, pool_labels),
                      k=len(view.bert.layers) * len(pool_labels),
                      diff=_points(ft.diff), low=_points(ft.low), high=_points(ft.high),
                      elmo_diff=_points(elmo.diff) if elmo else "—", elmo_low=_points(elmo.low) if elmo else "—",
                      elmo_high=_points(elmo.high) if elmo else "—")
                    + (" " + t("transfer.gain.chosen_note") if chosen else ""))
    if chosen is None:  # an older results file: no validation accuracies to choose a probe with
        return
    if view.elmo:
        _verdict("transfer.elmo_bert", transfer.compare(view.elmo, view.bert.probe(*chosen)),
                 probe=_probe_name(*chosen, pool_labels))
    curve = [acc for step, acc in zip(view.finetune.curve_steps, view.finetune.curve_accuracy) if step > 0]
    if len(curve) > 1:
        st.caption(t("transfer.gain.one_run", steps=view.config["steps"], low=_fmt_acc(min(curve)),
                     high=_fmt_acc(max(curve))))


def _elmo_page_note(view: transfer.TransferView) -> None:
    """How this page's ELMo row relates to the ELMo page's uniform s on the same test reviews."""
    try:
        gap = transfer.elmo_page_gap(view, cache.experiment_results())
    except LabError:  # an unreadable experiments file: the ELMo page says so; nothing to compare with here
        return
    elmo = view.elmo
    if gap is None or elmo is None:  # no gap without an ELMo row
        return
    cmp = gap.comparison
    if not (elmo.standardised and elmo.choice):
        st.caption(t("transfer.elmo_page.old", page=_fmt_acc(gap.page_accuracy), here=_fmt_acc(elmo.accuracy),
                     c=view.config.get("lr_C", "—")))  # the fixed C of files from before the choice
        return
    st.caption(t("transfer.elmo_page.note", page=_fmt_acc(gap.page_accuracy), here=_fmt_acc(elmo.accuracy),
                 n=view.n_test, page_c=f"{gap.page_c:g}", page_fit=gap.page_n_fit, page_val=gap.page_n_val,
                 here_c=f"{elmo.choice.chosen:g}", here_val=elmo.choice.n_val, here_fit=view.config["n_train"],
                 diff=_points(cmp.diff), low=_points(cmp.low), high=_points(cmp.high),
                 method=t("transfer.method_paired" if cmp.paired else "transfer.method_independent"),
                 verdict=t(f"transfer.elmo_page.{cmp.verdict}")))


def _tuning_table(view: transfer.TransferView, probe: transfer.Approach, labels: list[str]) -> None:
    """Each approach's one hyper-parameter: the candidates' validation accuracy and the one chosen."""
    rows = [(label, approach) for label, approach in zip(labels, (view.elmo, probe, view.finetune, view.lora))
            if approach]
    with st.expander(t("transfer.tuning.title")):
        if view.validation and view.finetune.choice:
            tries = sorted({len(a.choice.val_accuracy) for _, a in rows if a.choice})
            st.markdown(t("transfer.tuning.body", fit=view.validation["n_fit"], val=view.validation["n_val"],
                          train=view.config["n_train"], n=view.n_test, k="/".join(map(str, tries))))
        elif view.validation:  # the page's recompute: C chosen, the learning rates as set
            st.caption(t("transfer.tuning.partial", val=view.validation["n_val"]))
        else:
            st.caption(t("transfer.tuning.none"))
        def tried(a: transfer.Approach) -> str:
            if a.choice:
                return " · ".join(f"{v}: {_fmt_acc(acc)}" for v, acc in a.choice.val_accuracy.items())
            # a recomputation on the page chooses no learning rate; an older file does not say how it was chosen
            return t("transfer.tuning.given") if isinstance(a, transfer.Trained) and view.validation else "—"

        def chosen(a: transfer.Approach) -> str:
            if a.choice:
                return f"{a.choice.name} = {a.choice.chosen:g}"
            return f"lr = {a.lr:g}" if isinstance(a, transfer.Trained) else "—"

        st.table(pd.DataFrame({
            t("transfer.params.col.method"): [label for label, _ in rows],
            t("transfer.tuning.col.tried"): [tried(a) for _, a in rows],
            t("transfer.tuning.col.chosen"): [chosen(a) for _, a in rows],
            t("transfer.tuning.col.test"): [t("transfer.tuning.test", acc=_fmt_acc(a.accuracy),
                                              low=_fmt_acc(a.interval[0]), high=_fmt_acc(a.interval[1]))
                                            for _, a in rows],
        }), hide_index=True)


def _layers_caption(view: transfer.TransferView, pool_labels: dict[str, str]) -> None:
    """What the per-layer curve shows, chosen from its intervals (``transfer.layer_ties``)."""
    ties = [transfer.layer_ties(view.bert, p) for p in transfer.POOLINGS]
    lines = [t("transfer.layers_caption", method=t("transfer.method_paired" if view.bert.per_layer_correct
                                                   else "transfer.method_independent"))]

    def names(layers: list[int]) -> str:
        return ", ".join(_layer_name(j) for j in layers) or "—"

    for tie in ties:
        lines.append(t("transfer.layers.pool_line", pool=pool_labels[tie.pooling], best=_layer_name(tie.best),
                       chosen=t(f"transfer.layers.chosen.{tie.chosen_on}"),
                       acc=_fmt_acc(view.bert.at(tie.pooling, tie.best)), below=names(tie.below), tied=names(tie.tied)))
    lines.append(t(f"transfer.layers.verdict.{transfer.curve_verdict(ties)}", n=view.n_test))
    st.caption("  \n".join(lines))


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
    if view.finetune.choice and lora and lora.choice and view.tuning_cpu_seconds:
        st.caption(t("transfer.params.tuning_time", finetune=f"{view.tuning_cpu_seconds['finetune']:.0f}",
                     lora=f"{view.tuning_cpu_seconds['lora']:.0f}", ft_runs=len(view.finetune.choice.val_accuracy),
                     lora_runs=len(lora.choice.val_accuracy)))
    chart(shared_figure(figs.parameter_bars, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                        trained_name=t("transfer.params.trained"), frozen_name=t("transfer.params.frozen"),
                        axis_title=t("transfer.params.axis"), title=t("transfer.fig.params"), large=large),
          "transfer_param_fig")


# ---- fine-tuning over time ---------------------------------------------------------------------------
def fine_tuning_curve(view: transfer.TransferView) -> None:
    large, ft, lora = presenting(), view.finetune, view.lora
    st.header(t("transfer.curve.title"))
    runs = [figs.CurveRun(t("transfer.bar.finetune"), ft.curve_steps, ft.curve_accuracy, ft.losses,
                          figs.FINETUNE_COLOUR)]
    if lora:
        runs.append(figs.CurveRun(t("transfer.bar.lora"), lora.curve_steps, lora.curve_accuracy, lora.losses,
                                  figs.LORA_COLOUR))
    chart(shared_figure(figs.finetune_curve, runs, acc_name=t("transfer.curve.acc"),
                        loss_name=t("transfer.curve.loss"), step_axis_title=t("transfer.curve.step"),
                        acc_axis_title=t("transfer.acc_axis"), loss_axis_title=t("transfer.curve.loss"),
                        title=t("transfer.fig.curve"), large=large), "transfer_curve")
    cfg = view.config
    st.caption(t("transfer.curve.caption", steps=cfg["steps"], batch=cfg["batch_size"], lr=f"{ft.lr:g}",
                 seconds=f"{ft.seconds or 0:.0f}", cpu=f"{ft.cpu_seconds or 0:.0f}", threads=view.threads))
    if lora:
        st.caption(t("transfer.curve.caption_lora", lr=f"{lora.lr:g}",
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
            how_computed(t("transfer.lora.built_with", r=settings["r"], alpha=settings["alpha"],
                           targets=list(settings["targets"])))
        with st.container(key="transfer_lora"):  # the presentation scene "lora" scrolls here
            if view.lora is None:
                st.info(t("transfer.lora.missing"))
            else:
                _lora_summary(view, view.lora)
    st.subheader(t("transfer.prompting.title"))
    st.markdown(t("transfer.prompting.body"))


def _lora_summary(view: transfer.TransferView, lora: transfer.Trained) -> None:
    top = len(view.bert.layers) - 1
    # the top layer's features, [CLS] (what the fine-tuned models classify) and the mean over the review
    approaches = [(t("transfer.bar.bert", layer=_layer_name(top), pool=t(f"transfer.pool.{p}")), "feature",
                   view.bert.probe(p, top)) for p in transfer.POOLINGS]
    approaches += [(t("transfer.bar.finetune"), "finetune", view.finetune), (t("transfer.bar.lora"), "lora", lora)]
    chart(shared_figure(figs.approach_summary,
                        [name for name, _, _ in approaches], [kind for _, kind, _ in approaches],
                        [a.accuracy for _, _, a in approaches],
                        [a.interval for _, _, a in approaches], [a.trained_params for _, _, a in approaches],
                        [a.cpu_seconds or 0.0 for _, _, a in approaches],
                        panel_titles=[t("transfer.lora.panel.acc"), t("transfer.lora.panel.params"),
                                      t("transfer.lora.panel.time")],
                        title=t("transfer.fig.lora"), large=presenting()), "transfer_lora_fig")
    _verdict("transfer.lora.verdict", transfer.compare(lora, view.finetune), n=view.n_test,
             share=_lora_share(view))


# ---- recompute: models load here, on the click, never when the page is only viewed ---------------------
def recompute(from_session: bool) -> None:
    """The run's settings and button; ``from_session``: the results shown are this session's, offer to discard them."""
    st.markdown(t("transfer.recompute.body", bert=transfer.BERT_MODEL, elmo=transfer.ELMO_MODEL or "—",
                  lora_lr=f"{DEFAULT_LORA.lr:g}"))
    chosen = bert_model_name()
    if chosen and chosen != transfer.BERT_MODEL:
        st.caption(t("transfer.recompute.fixed_model", chosen=chosen, bert=transfer.BERT_MODEL))
    infos = {m.name: m for m in list_models()}
    bert_info = infos.get(transfer.BERT_MODEL)
    elmo_info = infos.get(transfer.ELMO_MODEL) if transfer.ELMO_MODEL else None
    # a problem is set exactly when a listed model is not available; an unlisted one is a directory or hub id
    bert_problem = bert_info.problem if bert_info is not None else None
    bert_ok = bert_problem is None
    if bert_problem is not None:
        st.warning(t("transfer.recompute.no_bert", reason=error_text(bert_problem)))
    if transfer.ELMO_MODEL and elmo_info is not None and elmo_info.problem is not None:
        st.warning(t("transfer.recompute.no_elmo", reason=error_text(elmo_info.problem)))
    r1, r2 = st.columns(2)
    default_steps = transfer.DEFAULT_CONFIG.steps
    r1.select_slider(t("transfer.recompute.steps"), options=sorted({*STEP_CHOICES, default_steps}),
                     value=default_steps, key="transfer_steps", help=t("transfer.recompute.steps_help"))
    lr_labels = {lr: f"{lr:g}" for lr in LR_CHOICES}
    r2.radio(t("transfer.recompute.lr"), list(LR_CHOICES), index=LR_CHOICES.index(transfer.DEFAULT_CONFIG.lr)
             if transfer.DEFAULT_CONFIG.lr in LR_CHOICES else 0, key="transfer_lr", horizontal=True,
             format_func=lr_labels.__getitem__)
    clicked = training_gate.button(t("transfer.recompute.button"), key="transfer_run", ready=bert_ok,
                                   icon=":material/play_arrow:")
    if clicked:
        bar = st.empty()  # drawn by the first report: a refused run shows none
        stages = ("data", "elmo", "bert", "probe", "finetune", "lora", "done")
        stage_text = {s: t(f"transfer.stage.{s}") for s in stages}

        def report(fraction: float, stage: str) -> None:
            bar.progress(min(max(float(fraction), 0.0), 1.0),
                         text=f"{stage_text.get(stage, stage)} · {100 * fraction:.0f}%")

        config = transfer.DEFAULT_CONFIG.replace(steps=int(ss["transfer_steps"]), lr=float(ss["transfer_lr"]))
        results = training_gate.run(transfer.recompute, transfer.BERT_MODEL, transfer.ELMO_MODEL, config,
                                    progress=report)
        if results is not None:
            ss["transfer_results"] = results
            st.rerun()  # the page again, from this session's results
    if from_session:
        st.button(t("transfer.recompute.discard"), key="transfer_discard",
                  on_click=lambda: ss.pop("transfer_results", None))
    st.caption(t("transfer.recompute.cli"))
    st.code("python -m core.transfer", language="bash")
