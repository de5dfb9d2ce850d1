"""The ELMo page's last section: s and γ as two tasks learned them (``core.experiments.learned_mix``),
read from the experiments' results (the shipped file, or this session's recomputation)."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core import experiments
from core.errors import LabError
from core.experiments import learned_mix, view as results_view
from core.figures.evidence import preset_bars
from core.mixing import PRESETS, format_vector
from core.stats import difference_interval
from ui.cache import experiment_results
from ui.i18n import current_lang, layer_name, t, timestamp
from ui.page import chart, presenting, show_error


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


def _accuracy_cell(r: dict) -> str:
    return t("elmo.learned.cell", acc=_pct(r["accuracy"]), lo=_pct(r["interval"][0]), hi=_pct(r["interval"][1]))


def _span(low: float, high: float) -> str:
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


def learned_section() -> None:
    """Shows the section: a chart of the learned s against the lecture's presets, each task's result, the verdict."""
    st.subheader(t("elmo.learned.title"))
    st.markdown(t("elmo.learned.intro"))
    try:
        results = experiment_results()
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
    large = presenting()
    chart(preset_bars(layer_labels, groups, title=t("elmo.learned.chart_title"), yaxis_title=t("elmo.learned.axis"),
                      ranges=[learned_mix.s_range(tasks[task]) for task in learned_mix.TASKS],
                      large=large, height=520 if large else 440), "elmo_learned_bars")
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
