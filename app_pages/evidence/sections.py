"""The evidence page's sections, each a fragment that reads the experiments' results
(``core.experiments.view``) and draws them (``core.figures.evidence``): ① POS probe (Peters et al. 2018,
Table 6), ② word-sense probe (Peters et al. 2018, Table 5; Coenen et al. 2019), ③ context-specificity
(Ethayarajh 2019), ④ ELMo layer-weight presets from the probes. Every per-layer curve carries 95 %
intervals, and every sentence that reads a curve is chosen from the numbers and their sampling error.
"""
from __future__ import annotations

import csv
import functools
import io
import json
import math
from collections.abc import Callable

import streamlit as st

from core import experiments
from core.compute import stats
from core.compute.mixing import PRESETS
from core.experiments import probe_presets, view
from core.figures.evidence import Series, layer_curves, preset_bars, specificity_panels, word_heatmap
from core.figures.style import export_html
from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO, DEFAULT_STATIC
from ui import training_gate
from ui.cache import EXPERIMENT_RESULTS_KEY as RESULTS_KEY  # this session's recomputation, read by the ELMo page too
from ui.i18n import current_lang, t
from ui.page import chart, experiment, plain_answer, presenting, shared_figure
from ui.sidebar import bert_model_name
from ui.state import Field, one_of, seed, sync_to_url


def results_section(draw: Callable[[dict], None]) -> Callable[[dict], None]:
    """A section of the results where a results file of an older format (a key or shape the section does not find)
    is a message asking to recompute. Inside the section's fragment (``ui.page.experiment``, below it): a boundary
    around the call in the page does not see a fragment's errors."""
    @functools.wraps(draw)
    def checked(results: dict) -> None:
        try:
            draw(results)
        except (KeyError, TypeError, IndexError) as exc:
            st.error(t("evidence.bad_results", detail=type(exc).__name__))
    return checked


def pct(value) -> str:
    return "—" if value is None else f"{100 * float(value):.1f}%"


def num(value) -> str:
    return "—" if value is None else f"{float(value):.3f}"


def layer_label(kind: str, j: int) -> str:
    return t(f"evidence.layer0.{kind}") if j == 0 else t("evidence.layer_j", j=j)


def to_series(rows: list[dict]) -> list[Series]:
    return [Series(r["name"], [layer_label(r["kind"], j) for j in range(len(r["values"]))], r["values"], r["kind"],
                   low=r.get("low"), high=r.get("high")) for r in rows]


def layer_list(layers: list[int]) -> str:
    return "、".join(map(str, layers)) if current_lang() == "zh" else ", ".join(map(str, layers))


def method(paired: bool) -> str:
    """How two accuracies were compared: paired on the same items, or (older files) as independent samples."""
    return t(f"evidence.method.{'paired' if paired else 'independent'}")


def difference(comparison: stats.Paired) -> str:
    """A comparison's difference in points with its 95 % interval, and the exact McNemar p when paired."""
    p_value = "—" if math.isnan(comparison.p_value) else f"{comparison.p_value:.2g}"
    return t(f"evidence.diff.{'paired' if comparison.paired else 'independent'}", diff=points(comparison.diff),
             low=points(comparison.low), high=points(comparison.high), p=p_value)


def points(value: float) -> str:
    return f"{100 * value:+.1f}"


def other_result(key: str, r: dict, scores: view.LayerScores, **extra) -> str:
    """A model's per-layer line: first, best (with the layers sampling error cannot tell from it), last."""
    v = r["values"]
    ties = view.layer_ties(scores)
    return t(key, model=r["name"], first=pct(v[0]), best=ties.best, acc=pct(v[ties.best]), last=pct(v[-1]),
             tied=layer_list(ties.tied), method=method(ties.paired), **extra)


VERDICTS = {"pos": "evidence.verdict.pos_", "senses": "evidence.verdict.sense_"}  # + "same" | "opposite" | "tie"


def finding_line(key: str, model: str, scores: view.LayerScores, task: str, **extra) -> str:
    """ELMo's two biLSTM layers against the paper's finding on ``task``: the same computation as the answer box's
    (``view.layer_finding``)."""
    finding = view.layer_finding(scores, task)
    return t(key, model=model, l1=pct(scores.values[1]), l2=pct(scores.values[2]),
             verdict=t(VERDICTS[task] + finding.agreement, difference=difference(finding.comparison)), **extra)


def findings_answer(results: dict) -> None:
    """The page's question and its answer for a student at home (issue #44): which of the papers' findings our
    ELMo shows, from the verdicts the sections compute; the sections below hold the numbers."""
    try:
        model, findings = view.paper_findings(results)
    except (KeyError, TypeError, IndexError):
        return  # a results file from an older format: the chosen section below says so
    box = plain_answer("evidence_qa", t("evidence.qa.question"))
    if box is None or not findings:
        return
    lines = [t("evidence.qa.answer", model=model, n=len(findings),
               same=sum(outcome == "same" for outcome in findings.values()))]
    lines += [t("evidence.qa.line", finding=t(f"evidence.qa.finding.{name}"),
                outcome=t(f"evidence.qa.outcome.{outcome}")) for name, outcome in findings.items()]
    box.markdown("\n".join(lines))
    box.caption(t("evidence.qa.details"))


def csv_text(rows: list[dict]) -> str:
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return buffer.getvalue()


def show_figure(fig, name: str, rows: list[dict] | None = None) -> None:
    chart(fig, f"fig_{name}")
    download_buttons(fig, name, rows)


def download_buttons(fig, name: str, rows: list[dict] | None = None) -> None:
    with st.container(horizontal=True):  # buttons as wide as their labels, side by side
        # made on click, not on every rerun (the HTML inlines plotly.js: 4.8 MB)
        st.download_button(t("evidence.download_html"), lambda: export_html(fig), file_name=f"evidence-{name}.html",
                           mime="text/html", on_click="ignore", key=f"dl_html_{name}")
        if rows is not None:
            st.download_button(t("evidence.download_csv"), lambda: csv_text(rows), file_name=f"evidence-{name}.csv",
                               mime="text/csv", on_click="ignore", key=f"dl_csv_{name}")


def section_head(title_key: str, paper: str, ours: str) -> None:
    """A section's title, then the paper's finding (boxed) beside how we measured it."""
    st.subheader(t(title_key))
    left, right = st.columns(2)
    with left.container(border=True):
        st.markdown(paper)
    right.markdown(ours)


def show_table(rows: list[dict], percent_cols: tuple[str, ...] = (), key: str = "") -> None:
    with st.expander(t("evidence.show_table")):
        shown = [{k: (pct(v) if k in percent_cols else (num(v) if isinstance(v, float) else v)) for k, v in r.items()}
                 for r in rows]
        st.dataframe(shown, hide_index=True, width="stretch", key=f"table_{key}")


# ---- ① POS probe --------------------------------------------------------------------------------
@experiment
@results_section
def pos_section(results: dict) -> None:
    paper = results["published"]["pos"]["layers"]
    cfg = results["pos"]["config"]
    section_head("evidence.pos.title", t("evidence.pos.paper", l1=paper["biLM layer 1"], l2=paper["biLM layer 2"]),
                 t("evidence.pos.method"))
    seed(Field("_ev_tags", "tags", "fine", one_of("fine", "coarse")))
    tag_labels = {s: t(f"evidence.tagset.{s}", n=cfg[f"n_tags_{s}"]) for s in ("fine", "coarse")}
    with st.container(key="evidence_result"):
        tags = st.radio(t("evidence.pos.tagset"), ("fine", "coarse"), key="_ev_tags", horizontal=True,
                        format_func=tag_labels.__getitem__,  # the options name themselves: no label on the projector
                        label_visibility="collapsed" if presenting() else "visible")
        sync_to_url(tags=tags)
        rows = view.pos_series(results, tags)
        base = view.pos_baselines(results, tags)
        majority_tag = results["pos"]["baselines"]["majority"]["tag"]
        baselines = [(t("evidence.baseline.static"), base["static"]),
                     (t("evidence.baseline.word_identity"), base["word_identity"]),
                     (t("evidence.baseline.majority", tag=majority_tag), base["majority"])]
        fig = shared_figure(layer_curves, to_series(rows), title=t("evidence.pos.chart_title"),
                            xaxis_title=t("evidence.axis.layer"), yaxis_title=t("evidence.axis.accuracy"),
                            baselines=baselines, large=presenting(),
                            height=430 if presenting() else 600)  # below the bar and the pinned switch (en: 2 lines)
        chart(fig, f"fig_pos-{tags}")
    download_buttons(fig, f"pos-{tags}", view.pos_table(results))
    st.caption(t("evidence.interval_note", n=cfg["n_test_words"]))
    static = results["pos"].get("static")
    st.caption(t("evidence.pos.sample", n_train_sent=cfg["n_train_sentences"], n_test_sent=cfg["n_test_sentences"],
                 n_train_words=cfg["n_train_words"], n_test_words=cfg["n_test_words"], n_tags=cfg["n_tags_fine"],
                 oov=pct(static["oov_rate_test"]) if static else "—",
                 unseen=pct(results["pos"]["baselines"]["word_identity"]["unseen_rate"])))
    for r in rows:
        scores = view.pos_scores(results, r["name"], tags)
        if r["kind"] == "elmo" and len(r["values"]) >= 3:
            st.markdown(finding_line("evidence.pos.elmo_result", r["name"], scores, "pos"))
        else:
            st.markdown(other_result("evidence.pos.other_result", r, scores))
    below = view.below_lookup(results, tags)
    if below:  # the probe learned no more than looking the word up: say so next to the verdicts
        joiner = "、" if current_lang() == "zh" else ", "
        st.markdown(t("evidence.pos.below_lookup", models=joiner.join(below), lookup=pct(base["word_identity"]),
                      method=method(view.lookup_scores(results, tags).paired)))
    show_table(view.pos_table(results), ("fine", "coarse"), key="pos")
    st.markdown(t("evidence.pos.note", n_train_words=cfg["n_train_words"]))


# ---- ② word-sense probe ---------------------------------------------------------------------------
@experiment
@results_section
def senses_section(results: dict) -> None:
    paper = results["published"]
    senses = results["senses"]
    words = view.sense_words(results)
    section_head("evidence.senses.title",
                 t("evidence.senses.paper", l1=paper["wsd"]["layers"]["biLM layer 1"],
                   l2=paper["wsd"]["layers"]["biLM layer 2"], coenen=paper["coenen"]["f1"]),
                 t("evidence.senses.method", n_words=len(words), word_list="、".join(words)))
    options = ["__all__"] + words
    seed(Field("_ev_word", "word", "__all__", one_of(*options)))
    word_labels = {w: w for w in words} | {"__all__": t("evidence.senses.all")}
    # the section's result (as ①'s): where presentation mode brings it after a switch of section
    with st.container(key="evidence_result"):
        word = st.selectbox(t("evidence.senses.word"), options, key="_ev_word", format_func=word_labels.__getitem__,
                            label_visibility="collapsed" if presenting() else "visible")  # room for the chart
        sync_to_url(word=word)
        chosen = None if word == "__all__" else word
        rows = view.sense_series(results, chosen)
        baselines = [(t("evidence.baseline.static_sense"), view.sense_static(results, chosen)),
                     (t("evidence.baseline.chance"), view.sense_chance(results, chosen))]
        title = t("evidence.senses.chart_title") + ("" if chosen is None else f" · {chosen}")
        fig = shared_figure(layer_curves, to_series(rows), title=title, xaxis_title=t("evidence.axis.layer"),
                            yaxis_title=t("evidence.axis.accuracy"), baselines=baselines, y_range=(0, 1.05),
                            large=presenting(), height=430 if presenting() else 600)  # as ①'s, below the bar
        chart(fig, "fig_senses")
    download_buttons(fig, "senses", view.sense_table(results))
    st.caption(t("evidence.interval_note", n=view.sense_n(results, chosen)))
    details = "；".join(
        f"{w['word']} {w['n']}（" + " / ".join(f"{k} {v}" for k, v in w["senses"].items()) + "）"
        for w in senses["words"])
    n_sentences = view.sense_n(results)
    st.caption(t("evidence.senses.sample", details=details))
    n_scope = view.sense_n(results, chosen)
    scope = (t("evidence.senses.scope_all", n=n_scope) if chosen is None
             else t("evidence.senses.scope_word", word=chosen, n=n_scope))
    for r in rows:
        v = r["values"]
        scores = view.sense_scores(results, r["name"], chosen)
        if r["kind"] == "elmo" and len(v) >= 3 and None not in v[1:3]:
            st.markdown(finding_line("evidence.senses.elmo_result", r["name"], scores, "senses", scope=scope))
        elif None not in v:
            st.markdown(other_result("evidence.senses.other_result", r, scores, scope=scope))
    show_table(view.sense_table(results), tuple(words) + ("all",), key="senses")
    per_sense = [count for w in senses["words"] for count in w["senses"].values()]
    sizes = [w["n"] for w in senses["words"]]  # one sentence of a word moves its score by 1 / n
    st.markdown(t("evidence.senses.note", n_sentences=n_sentences, n_words=len(words),
                  per_sense=f"{min(per_sense)}–{max(per_sense)}",
                  step=f"{100 / max(sizes):.0f}–{100 / min(sizes):.0f}"))


# ---- ③ context-specificity ------------------------------------------------------------------------
def intra_verdict(kind: str, change: dict) -> str:
    """Intra-sentence similarity from layer 1 to the top against Ethayarajh's finding for this family."""
    expected = view.PAPER_INTRA_SENTENCE_TREND.get(kind)
    if expected is None:
        return ""
    ours, margin = view.change_trend(change)
    agreement = "flat" if ours == "flat" else "same" if ours == expected else "opposite"
    return t(f"evidence.verdict.intra_{agreement}", ours=t(f"evidence.trend.{ours}"), change=change["value"],
             family={"elmo": "ELMo", "bert": "BERT"}[kind], expected=t(f"evidence.trend.{expected}"),
             margin=num(margin))


@experiment
@results_section
def context_section(results: dict) -> None:
    ctx = results["context"]
    cfg = ctx["config"]
    section_head("evidence.ctx.title",
                 t("evidence.ctx.paper", pct=results["published"]["ethayarajh"]["static_variance_explained_below"]),
                 t("evidence.ctx.method", n_words=cfg["n_words"], max_contexts=cfg["max_contexts"],
                   n_occ=cfg["n_occurrences"], n_sent=cfg["n_sentences"], n_pairs=cfg["n_pairs"]))
    seed(Field("_ev_ctx", "ctx", "adjusted", one_of("raw", "adjusted")))
    mode_labels = {m: t(f"evidence.ctx.{m}") for m in ("adjusted", "raw")}
    with st.container(key="evidence_result"):  # the section's result, as ①'s
        mode = st.radio(t("evidence.ctx.mode"), ("adjusted", "raw"), key="_ev_ctx", horizontal=True,
                        format_func=mode_labels.__getitem__,
                        label_visibility="collapsed" if presenting() else "visible")
        adjusted = mode == "adjusted"
        panels = [(t(f"evidence.ctx.panel.{m}") + (t("evidence.ctx.adjusted_suffix") if adjusted and m != "anisotropy"
                                                     else ""), to_series(view.context_series(results, m, adjusted)))
                  for m in view.CONTEXT_MEASURES]
        fig = shared_figure(specificity_panels, panels, title=t("evidence.ctx.chart_title"),
                            xaxis_title=t("evidence.axis.layer_short"), large=presenting(),
                            height=440 if presenting() else 520)
        chart(fig, f"fig_context-{mode}")
    download_buttons(fig, f"context-{mode}", view.context_table(results))
    st.caption(t("evidence.ctx.interval_note"))
    st.caption(t("evidence.ctx.sample", words="、".join(cfg["words"])))
    for name in view.ordered(ctx["models"]):
        e = ctx["models"][name]
        v, change = e["self_similarity_adjusted"], e["change"]
        if change["self_similarity_adjusted"] is not None:
            ours, margin = view.change_trend(change["self_similarity_adjusted"])
            verdict = view.CONTEXT_AGREEMENT[ours]
            intra = e["intra_sentence_adjusted"]
            st.markdown(t("evidence.ctx.result", model=name, first=num(v[1]), last=num(v[-1]),
                          intra_first=num(intra[1]), intra_last=num(intra[-1]),
                          aniso_first=num(e["anisotropy"][1]), aniso_last=num(e["anisotropy"][-1]),
                          verdict=t(f"evidence.verdict.ctx_{verdict}", margin=num(margin)))
                        + " " + intra_verdict(e["kind"], change["intra_sentence_adjusted"]))
    names = view.context_models(results)
    seed(Field("_ev_ctx_model", "ctx_model", names[0], one_of(*names)))
    model = st.selectbox(t("evidence.ctx.heatmap_model"), names, key="_ev_ctx_model")
    sync_to_url(ctx=mode, ctx_model=model)
    words, layer_names, values = view.context_per_word(results, model, adjusted)
    kind = (ctx["models"].get(model) or ctx["static"])["kind"]
    heat = word_heatmap(words, [layer_label(kind, j) for j in range(len(layer_names))], values,
                        title=t("evidence.ctx.heatmap_title", model=model)
                        + (t("evidence.ctx.adjusted_suffix") if adjusted else ""),
                        colorbar_title=t("evidence.ctx.panel.self_similarity"),
                        zrange=None if adjusted else (0.0, 1.0), large=presenting())
    show_figure(heat, f"self-similarity-{model}")
    show_table(view.context_table(results), key="context")
    layer0: dict[str, str] = {}  # kind -> layer 0's raw self-similarity of the first model of that kind
    for e in ctx["models"].values():
        layer0.setdefault(e["kind"], num(e["self_similarity"][0]))
    st.markdown(t("evidence.ctx.note", n_words=cfg["n_words"], elmo0=layer0.get("elmo", "—"),
                  bert0=layer0.get("bert", "—")))


# ---- ④ presets ------------------------------------------------------------------------------------
@results_section
def presets_section(results: dict) -> None:
    st.subheader(t("evidence.presets.title"))
    st.markdown(t("evidence.presets.text", model=DEFAULT_ELMO))
    try:
        presets = probe_presets(results)
    except ValueError:
        st.info(t("evidence.presets.missing", model=DEFAULT_ELMO))
        return
    labels = [t("evidence.presets.s", j=j) for j in range(len(presets["syntax"]["s"]))]
    groups = [(t("evidence.presets.probe_syntax"), presets["syntax"]["s"], ""),
              (t("evidence.presets.probe_semantics"), presets["semantics"]["s"], ""),
              (t("evidence.presets.lecture_syntax"), PRESETS["syntax"][0], "/"),
              (t("evidence.presets.lecture_semantics"), PRESETS["semantics"][0], "/")]
    fig = shared_figure(preset_bars, labels, groups, title=t("evidence.presets.chart_title"), large=presenting())
    rows = [{"preset": name, **{f"s{j}": round(float(w), 4) for j, w in enumerate(weights)}}
            for name, weights, _ in groups]
    show_figure(fig, "presets", rows)
    for name, preset in presets.items():
        st.markdown(t("evidence.presets.line", name=t(f"evidence.presets.name.{name}"),
                      probe=t(f"evidence.presets.probe.{name}"), n=preset["n"], unit=t(f"evidence.presets.unit.{name}"),
                      acc=" / ".join(pct(a) for a in preset["accuracy"]), best=preset["best"],
                      tied=layer_list(preset["tied"]), method=method(preset["paired"]),
                      s=", ".join(f"{w:.2f}" for w in preset["s"])))
    if presets["syntax"]["tied"] == presets["semantics"]["tied"]:
        st.markdown(t("evidence.presets.verdict.same", s=", ".join(f"{w:.2f}" for w in presets["syntax"]["s"])))
    else:
        st.markdown(t("evidence.presets.verdict.differ", syntax=layer_list(presets["syntax"]["tied"]),
                      semantics=layer_list(presets["semantics"]["tied"])))


SECTIONS = {"pos": pos_section, "senses": senses_section, "context": context_section, "presets": presets_section}
CHOICES = (*SECTIONS, "recompute")  # the page's section switch


# ---- ⑤ recompute ----------------------------------------------------------------------------------
def recompute_section(results: dict | None) -> None:
    st.subheader(t("evidence.recompute.title"))
    st.markdown(t("evidence.recompute.text"))
    models = [DEFAULT_ELMO, DEFAULT_BERT]  # the embedded ones: a run on a large model takes the server for long
    st.caption(t("evidence.recompute.models", models=", ".join(models + [DEFAULT_STATIC])))
    chosen = bert_model_name()
    if chosen and chosen != DEFAULT_BERT:
        st.caption(t("evidence.recompute.fixed_model", chosen=chosen, bert=DEFAULT_BERT))
    seed(Field("_ev_quick", "quick", True, bool))
    quick = st.toggle(t("evidence.recompute.quick"), key="_ev_quick")
    sync_to_url(quick=quick)
    if training_gate.button(t("evidence.recompute.button"), key="_ev_run"):
        bar = st.empty()  # drawn by the first report: a refused run shows none

        def progress(fraction: float, text: str) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=f"{t('evidence.recompute.running')} {text}")

        fresh = training_gate.run(experiments.run_all, models, static=DEFAULT_STATIC, quick=quick, progress=progress)
        if fresh is not None:
            st.session_state[RESULTS_KEY] = fresh
            st.session_state["_ev_done"] = fresh["timing_seconds"]["total"]
            st.rerun()  # redraw the whole page (provenance line included) from the new results
    done = st.session_state.pop("_ev_done", None)
    if done is not None:
        st.success(t("evidence.recompute.done", seconds=f"{done:.0f}"))
    if st.session_state.get(RESULTS_KEY) and st.button(t("evidence.recompute.reset"), key="_ev_reset"):
        del st.session_state[RESULTS_KEY]
        st.rerun()
    if results is not None:
        st.download_button(t("evidence.download_json"), lambda: json.dumps(results, ensure_ascii=False, indent=1),
                           file_name="experiments.json", mime="application/json", on_click="ignore", key="dl_json")


def show(section: str, results: dict | None) -> None:
    """The section chosen on the page's switch: the recomputation (also without results), or a section of the
    results."""
    if section == "recompute":
        recompute_section(results)
    elif results is not None:
        SECTIONS[section](results)

