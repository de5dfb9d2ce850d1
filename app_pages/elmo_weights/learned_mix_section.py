"""The ELMo page's two results sections, read from the experiments' results (the shipped file, or this
session's recomputation): s and γ as two tasks learned them (``core.experiments.learned_mix``), and the
lecture's use of ELMo, [x; ELMo] on POS tagging (``core.experiments.concat``)."""
from __future__ import annotations

import streamlit as st

from core import experiments
from core.compute.mixing import PRESETS, format_vector
from core.experiments import concat, learned_mix, learned_mix_verdict
from core.experiments import view as results_view
from core.figures.evidence import Estimate, interval_dots, preset_bars
from ui.cache import experiment_results
from ui.i18n import current_lang, layer_name, t, timestamp
from ui.page import attempt, chart, how_computed, plain_answer, presenting, shared_figure


def _pct(p: float) -> str:
    return f"{100 * p:.1f}%"


def _points(p: float) -> str:
    return f"{100 * p:+.1f}"


def _accuracy_cell(r: dict) -> str:
    return t("elmo.learned.cell", acc=_pct(r["accuracy"]), lo=_pct(r["interval"][0]), hi=_pct(r["interval"][1]))


def _estimate(label: str, r: dict, group: str = "") -> Estimate:
    return Estimate(label, r["accuracy"], r["interval"][0], r["interval"][1], group)


def _span(low: float, high: float) -> str:
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"


def _join(names: list[str]) -> str:
    return "、".join(names) if current_lang() == "zh" else " and ".join(names)


def _results() -> dict | None:
    """The results, or None after showing why they cannot be read."""
    return attempt(experiment_results)


def _provenance(results: dict, model: str) -> None:
    mode = t("evidence.mode.quick") if results.get("quick") else t("evidence.mode.full")
    how_computed(t("elmo.learned.provenance", created=timestamp(results.get("created", "?")), mode=mode))
    if model in experiments.stale_models(results):
        st.info(t("evidence.stale", models=model))


def _skipped(entry: dict | None) -> None:
    for name, reason in (entry or {}).get("skipped", {}).items():
        st.caption(t("elmo.learned.skipped", name=name, reason=(reason or {}).get(current_lang(), "?")))


def _learned_pattern(verdict: learned_mix_verdict.MixVerdict, task_names: dict, layer_labels: list[str],
                     seeds: int) -> str:
    """What the tasks learned, whatever the ordering: each task's most weighted layer and the unused layers."""
    syntax = PRESETS["syntax"][0]
    tops = [t("elmo.learned.pattern.top", task=task_names[task], layer=layer_labels[v.top_votes[0]],
              k=v.top_votes[1], seeds=seeds) for task, v in verdict.tasks.items()]
    unused = [t("elmo.learned.pattern.unused", layer=layer_labels[j], most=f"{100 * most:.0f}%",
                lecture=f"{syntax[j]:.1f}" if len(syntax) == len(layer_labels) else "—")
              for j, most in verdict.unused.items()]
    return t("elmo.learned.pattern", tops=_join(tops), unused=" ".join(unused) or t("elmo.learned.pattern.none"))


def _order_values(ordering: learned_mix_verdict.Ordering) -> dict[str, str]:
    """The order test's figures, as the verdict texts show them (pairs of seeds in the lecture's order, p)."""
    test = ordering.test
    return {"below": f"{test.below:g}", "pairs": str(test.pairs), "p": f"{test.p_value:.2g}",
            "p_min": f"{test.p_min:.2g}"}


def learned_answer() -> None:
    """The page's question and answer for a student at home (issue #44): how ELMo mixes its layers, then the s
    each task learned here and what they show, by the section's own verdict."""
    box = plain_answer("elmo_qa", t("elmo.qa"))
    entry = None if box is None else results_view.learned_mix(_results())
    if entry is None:
        return  # on the projector, or without results (the section below says how to compute them)
    tasks = entry["tasks"]
    verdict = learned_mix_verdict.verdict(tasks)
    headline = t(f"elmo.qa.verdict.{verdict.headline}", **_order_values(verdict.ordering),
                 seeds=len(tasks["pos"]["seeds"]))
    box.markdown(t("elmo.qa.learned", verdict=headline,
                   **{task: format_vector(tasks[task]["learned"]["s"], 2) for task in learned_mix.TASKS},
                   **{f"{task}_gamma": f"{tasks[task]['learned']['gamma']:.1f}" for task in learned_mix.TASKS}))


def learned_section() -> None:
    """Shows the section: the learned s against the lecture's presets, learned vs uniform s accuracy with
    intervals, each task's result, and the verdict computed from those numbers."""
    st.subheader(t("elmo.learned.title"))
    st.markdown(t("elmo.learned.intro"))
    results = _results()
    entry = results_view.learned_mix(results)
    if results is None or entry is None:  # no results: no entry either
        _skipped((results or {}).get("learned_mix"))
        st.info(t("elmo.learned.missing"))
        return
    tasks = entry["tasks"]
    verdict = learned_mix_verdict.verdict(tasks)
    task_names = {task: t(f"elmo.learned.task.{task}") for task in learned_mix.TASKS}
    layer_labels = [f"{j} · {layer_name(n)}" for j, n in enumerate(entry["layer_names"])]
    groups = [(t("elmo.learned.group.learned", task=task_names[task], gamma=f"{tasks[task]['learned']['gamma']:.1f}"),
               tasks[task]["learned"]["s"], "") for task in learned_mix.TASKS]
    groups += [(t("elmo.learned.group.lecture", preset=t(f"elmo.preset.{name}")), PRESETS[name][0], "/")
               for name in learned_mix.LECTURE_PRESETS]
    large = presenting()
    chart(shared_figure(preset_bars, layer_labels, groups, title=t("elmo.learned.chart_title"),
                        yaxis_title=t("elmo.learned.axis"),
                        ranges=[learned_mix_verdict.s_range(tasks[task]) for task in learned_mix.TASKS],
                        large=large, height=520 if large else 440), "elmo_learned_bars")
    st.caption(t("elmo.learned.chart_caption", seeds=len(tasks["pos"]["seeds"])))
    dots = [_estimate(t(f"elmo.learned.dot.{kind}", task=task_names[task]),
                      tasks[task]["learned"] if kind == "learned" else tasks[task]["fixed"]["uniform"],
                      task_names[task])
            for task in learned_mix.TASKS for kind in ("learned", "uniform")]
    chart(shared_figure(interval_dots, dots, title=t("elmo.learned.acc_title"), xaxis_title=t("elmo.learned.acc_axis"),
                        large=large), "elmo_learned_accuracy")
    st.caption(t("elmo.learned.acc_caption", n_pos=tasks["pos"]["n_test"], n_sentiment=tasks["sentiment"]["n_test"]))
    for col, task in zip(st.columns(len(learned_mix.TASKS), gap="large"), learned_mix.TASKS):
        r, v = tasks[task]["learned"], verdict.tasks[task]
        top = (t("elmo.learned.top.unstable") if v.top_layer is None
               else t("elmo.learned.top.stable", layer=layer_labels[v.top_layer]))
        col.markdown(t(f"elmo.learned.result.{task}", s=format_vector(r["s"], 2), gamma=f"{r['gamma']:.1f}", top=top,
                       spread=f"{v.spread:.2f}", seed_lo=_pct(v.seed_accuracy[0]), seed_hi=_pct(v.seed_accuracy[1]),
                       acc=_accuracy_cell(r), n=tasks[task]["n_test"],
                       uniform=_accuracy_cell(tasks[task]["fixed"]["uniform"]),
                       diff=_points(v.comparison.diff), lo=_points(v.comparison.low), hi=_points(v.comparison.high),
                       method=t("elmo.learned.method_paired" if v.comparison.paired
                                else "elmo.learned.method_independent"),
                       compare=t(f"elmo.learned.compare.{v.vs_uniform}")))
    depths = {task: [learned_mix_verdict.depth(r["s"]) for r in tasks[task]["seeds"]] for task in learned_mix.TASKS}
    st.markdown(t(f"elmo.learned.verdict.{verdict.headline}",
                  **{task: _span(min(d), max(d)) for task, d in depths.items()}, **_order_values(verdict.ordering),
                  seeds=len(tasks["pos"]["seeds"]), syntax=f"{learned_mix_verdict.depth(PRESETS['syntax'][0]):.2f}",
                  semantics=f"{learned_mix_verdict.depth(PRESETS['semantics'][0]):.2f}"))
    st.markdown(_learned_pattern(verdict, task_names, layer_labels, len(tasks["pos"]["seeds"])))
    ours = (t("elmo.learned.peters_ours.some", tasks=_join([task_names[x] for x in verdict.paper_layer]))
            if verdict.paper_layer else t("elmo.learned.peters_ours.none"))
    st.markdown(t("elmo.learned.peters") + " " + ours)
    for task in learned_mix.TASKS:
        if verdict.tasks[task].spread > learned_mix.UNSTABLE_SPREAD:
            st.markdown(t("elmo.learned.unstable", task=task_names[task]))
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
                 tags=tasks["pos"]["n_classes"],
                 **{f"{task}_{part}": tasks[task][f"n_{part}"]
                    for task in learned_mix.TASKS for part in ("train", "dev", "test")}))
    _provenance(results, entry["model"])


def concat_section() -> None:
    """Shows the lecture's use of ELMo: static vectors, ELMo and [x; ELMo] on POS tagging, with intervals
    and the verdict computed from them."""
    st.subheader(t("elmo.concat.title"))
    results = _results()
    entry = results_view.concat(results)
    st.markdown(t("elmo.concat.intro", static=(entry or {}).get("static_model") or "word2vec-zh",
                  elmo=(entry or {}).get("model") or "mini-elmo-zh"))
    if results is None or entry is None:
        _skipped((results or {}).get("concat"))
        st.info(t("elmo.concat.missing"))
        return
    inputs = entry["inputs"]
    names = {"static": t("elmo.concat.input.static", model=entry["static_model"]),
             "elmo": t("elmo.concat.input.elmo", model=entry["model"]), "concat": t("elmo.concat.input.concat"),
             "word_identity": t("elmo.concat.input.word_identity")}
    large = presenting()
    chart(shared_figure(interval_dots, [_estimate(names[name], inputs[name]) for name in concat.INPUTS],
                        title=t("elmo.concat.chart_title"), xaxis_title=t("elmo.learned.acc_axis"),
                        reference=[(names["word_identity"], entry["word_identity"])], large=large),
          "elmo_concat_accuracy")
    headline, comparisons = concat.verdict(entry)
    lines = [t(f"elmo.concat.verdict.{headline}")]
    for c in comparisons + [concat.compare(entry, "word_identity")]:
        lines.append(t("elmo.concat.compare", other=names[c.other], diff=_points(c.diff), lo=_points(c.low),
                       hi=_points(c.high), word=t(f"elmo.concat.word.{c.direction}")))
    st.markdown("\n".join(lines))
    if concat.uneven_training(entry):
        st.markdown(t("elmo.concat.training_data", static=entry["static_model"], elmo=entry["model"]))
    cfg = entry["config"]
    st.caption(t("elmo.concat.method", n_train=cfg["n_train"], n_test=cfg["n_test"], n_dev=cfg["n_dev"],
                 n_train_words=entry["n_train_words"], n_test_words=entry["n_test_words"],
                 n_fit_words=entry["n_fit_words"], grid=", ".join(str(c) for c in cfg["c_grid"]),
                 **{f"c_{name}": inputs[name]["c"] for name in concat.INPUTS},
                 **{f"dim_{name}": inputs[name]["dim"] for name in concat.INPUTS}))
    edges = concat.grid_edges(entry)
    if edges:
        st.caption(t("elmo.concat.grid_edge", inputs=_join([names[name] for name in edges]),
                     c=f"{float(cfg['c_grid'][-1]):g}"))
    learned = results_view.learned_mix(results)
    if learned is not None:  # the two sections' "uniform s" on POS differ: say why before a student asks
        pos = learned["tasks"]["pos"]
        st.caption(t("elmo.concat.vs_learned", before=_accuracy_cell(pos["fixed"]["uniform"]),
                     before_train=pos["n_train"], before_test=pos["n_test"], here=_accuracy_cell(inputs["elmo"]),
                     here_train=entry["n_train_words"], here_test=entry["n_test_words"]))
    _provenance(results, entry["model"])
