"""Every verdict-bearing sentence of the text catalogues is chosen by a verdict function, or is a plain
description (#38). A key counts as verdict-bearing when its English text uses the words of a verdict (better,
worse, beyond / within sampling error, reproduces, the opposite, falls behind, ...): each such key is listed
here either under the function whose result selects it (and whose numbers fill it), or as plain with the reason
it judges nothing. A new verdict sentence fails here until it says where its verdict comes from.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERDICT_WORDS = re.compile(
    r"sampling error|beyond|better|worse|more accurate|less accurate|reproduc|agrees? with|opposite|"
    r"differ(?:s|ence)? |the lecture's (?:order|point|claim|lesson)|falls? behind|cannot be told apart|"
    r"no (?:clear|measurable)|\btie\b", re.I)

# family of keys (a prefix, or one key) -> (module:function that picks the key or fills its verdict, the outcomes
# that are keys of the family: the function's possible results; None for a single key shown on a condition)
PRODUCED = {
    "elmo.learned.verdict.": ("core.experiments.learned_mix_verdict:verdict", {"same", "weak", "opposite", "unclear"}),
    "elmo.learned.compare.": ("core.experiments.learned_mix_verdict:task_verdict", {"better", "worse", "tie"}),
    "elmo.learned.result.": ("core.experiments.learned_mix_verdict:task_verdict", {"pos", "sentiment"}),
    "elmo.learned.peters_ours.": ("core.experiments.learned_mix_verdict:verdict", {"some", "none"}),
    "elmo.concat.verdict.": ("core.experiments.concat:verdict", {"both", "one", "none"}),
    "elmo.concat.word.": ("core.experiments.concat:compare", {"better", "worse", "tie"}),
    "elmo.concat.grid_edge": ("core.experiments.concat:grid_edges", None),
    "elmo.live.weights.": ("core.vectors.mix:weights_verdict", {"differ", "tie", "layer0", "mix"}),
    "transfer.gain.": ("core.transfer.compare:compare",
                       {"higher", "lower", "tie", "picked", "chosen_note", "one_run"}),
    "transfer.qa.verdict.": ("core.transfer.compare:compare", {"higher", "lower", "tie"}),
    "transfer.qa.unjudged": ("core.transfer.compare:validation_pick", None),
    "transfer.elmo_bert.": ("core.transfer.compare:compare", {"higher", "lower", "tie"}),
    "transfer.lora.verdict.": ("core.transfer.compare:compare", {"higher", "lower", "tie"}),
    "transfer.elmo_page.": ("core.transfer.compare:elmo_page_gap", {"note", "old", "higher", "lower", "tie"}),
    "transfer.layers.verdict.": ("core.transfer.compare:curve_verdict",
                                 {"tie", "embeddings", "cls", "differ", "unjudged"}),
    "transfer.layers.chosen.": ("core.transfer.compare:layer_ties", {"validation", "test"}),
    "transfer.layers.pool_line": ("core.transfer.compare:layer_ties", None),
    "evidence.verdict.pos_": ("core.experiments.view:layer_finding", {"same", "opposite", "tie"}),
    "evidence.verdict.sense_": ("core.experiments.view:layer_finding", {"same", "opposite", "tie"}),
    "evidence.verdict.ctx_": ("core.experiments.view:change_trend", {"same", "opposite", "flat"}),
    "evidence.verdict.intra_": ("core.experiments.view:change_trend", {"same", "opposite", "flat"}),
    "evidence.diff.": ("core.experiments.view:compare_layers", {"paired", "independent"}),
    "evidence.method.": ("core.experiments.view:layer_ties", {"paired", "independent"}),
    "evidence.pos.other_result": ("core.experiments.view:layer_ties", None),
    "evidence.senses.other_result": ("core.experiments.view:layer_ties", None),
    "evidence.pos.below_lookup": ("core.experiments.view:below_lookup", None),
    "evidence.presets.verdict.": ("core.experiments:probe_presets", {"same", "differ"}),
    "evidence.presets.line": ("core.experiments.view:layer_ties", None),
    "evidence.qa.outcome.": ("core.experiments.view:paper_findings", {"same", "opposite", "tie", "flat"}),
    "elmo.qa.verdict.": ("core.experiments.learned_mix_verdict:verdict", {"same", "weak", "opposite", "unclear"}),
    "obj.qa.reading.": ("core.views.objectives:deep_reading", {"deep", "other"}),
}

PLAIN = {  # key -> why it is a plain description
    "obj.intro": "names what the page computes",
    "obj.reproduce": "a command that reproduces the page",
    "fill.seed": "a control's label",
    "budget.ratio": "a ratio computed from the stored budgets, and what it means for any comparison",
    "att.honest": "cites published findings about attention (Jain & Wallace; Wiegreffe & Pinter)",
    "static.layer_help": "what layer 0 is by construction",
    "static.centre_pair": "a mathematical fact (two centred points are opposites)",
    "static.caption_spaces_background": "how the picture is drawn and why",
    "static.pair_cos_note": "how the number beside it is measured",
    "elmo.layer_norm_help": "what the switch does",
    "elmo.live.pair_caption": "a fact of geometry, and what the chart beside it measures",
    "elmo.learned.acc_caption": "how to read the chart; the verdicts are the paragraphs below it",
    "elmo.concat.method": "the method and its limits",
    "transfer.layers_caption": "how to read the curve; the verdict lines follow it",
    "transfer.tuning.body": "the tuning protocol",
    "transfer.lora.body": "quotes the lecture and describes LoRA",
    "evidence.senses.note": "the differences from the paper's setting",
    "evidence.presets.text": "how the presets are built",
    "ex.concept.question": "the lecture's exercise",
    "ex.concept.own_placeholder": "a text box's placeholder",
    "ex.formula.computed_by": "which function computes the reference answer",
    "home.start.class.body": "what presentation mode does",
    "home.link.evidence": "what the linked page tests",
    "present.note.evidence": "a question the scene asks",
    "fill.words_note": "how a whole word's score is computed",
    "transfer.qa.question": "the page's question",
    "evidence.qa.finding.pos": "a paper's finding (Peters et al. 2018, Table 6); ours is computed beside it",
    "evidence.qa.finding.senses": "a paper's finding (Peters et al. 2018, Table 5); ours is computed beside it",
    "evidence.qa.details": "where the numbers behind the answer are",
    "static.acc_guess": "why word2vec's accuracy is the guessing level (the share beside it is computed)",
}


# families whose verdict is not a statistical one, with why (every other family's function reaches core.compute.stats)
NOT_STATISTICAL = {
    "elmo.concat.grid_edge": "whether the chosen C sits on the edge of the grid searched: a fact of the search",
    "obj.qa.reading.": "whether a vector moved at all (exactly 0 or not): a fact of the architecture, no sample",
}
POLICY = "core.compute.stats"


def _reaches_policy(module: str, depth: int = 3, seen: set[str] | None = None) -> bool:
    """Whether ``module`` imports the statistics policy, itself or through the core modules it imports
    (``depth`` steps)."""
    seen = seen if seen is not None else set()
    if module in seen:
        return False
    seen.add(module)
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return False
    package = module if spec.origin.endswith("__init__.py") else module.rpartition(".")[0]
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else (node.module or "")
            targets += [base] + [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
    if POLICY in targets:
        return True
    inner = [t for t in targets if t.startswith("core.") and _is_module(t)]
    return depth > 0 and any(_reaches_policy(t, depth - 1, seen) for t in inner)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name imported from a module, not a module
        return False


def _family(key: str) -> str | None:
    return next((prefix for prefix in PRODUCED if key == prefix or (prefix[-1] in "._" and key.startswith(prefix))),
                None)


def _catalogue(lang: str) -> dict[str, str]:
    return json.loads((ROOT / "assets" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def _unlisted(catalogue: dict[str, str]) -> list[str]:
    return [key for key, text in catalogue.items()
            if VERDICT_WORDS.search(text) and not _family(key) and key not in PLAIN]


def test_every_verdict_sentence_comes_from_a_verdict_function_or_is_plain():
    en = _catalogue("en")
    assert _unlisted(en) == [], "verdict words without a verdict function: list the key in PRODUCED or PLAIN (why)"
    assert all(key in en for key in PLAIN), [key for key in PLAIN if key not in en]
    # a typed verdict is caught: the check is not vacuous
    assert _unlisted({**en, "transfer.typed": "Frozen features beat fine-tuning beyond sampling error."}) == \
        ["transfer.typed"]


def test_every_statistical_verdict_goes_through_the_policy():
    """#48: one method behind every verdict: each family's function lives in a module that reads core.compute.stats (the
    statistics policy), directly or through the core modules it imports; the few non-statistical ones say why."""
    away = sorted({producer.split(":")[0] for prefix, (producer, _) in PRODUCED.items()
                   if prefix not in NOT_STATISTICAL and not _reaches_policy(producer.split(":")[0])})
    assert away == [], f"verdict functions outside the statistics policy ({POLICY}): {away}"
    assert set(NOT_STATISTICAL) <= set(PRODUCED)
    assert not _reaches_policy("core.guard.safe_text")  # a module without statistics is told apart


def test_each_family_is_exactly_the_outcomes_of_its_function():
    en = _catalogue("en")
    for prefix, (producer, outcomes) in PRODUCED.items():
        module, name = producer.split(":")
        assert callable(getattr(importlib.import_module(module), name)), producer
        keys = {key[len(prefix):] for key in en if _family(key) == prefix}
        assert keys == (outcomes if outcomes is not None else {""}), prefix


def test_every_family_is_rendered_by_the_ui():
    """Each family's key is built in a UI section (``f"{prefix}{result}"``: a page's folder or ``ui/``), so a family
    the pages no longer show does not linger here."""
    sources = "\n".join(p.read_text(encoding="utf-8") for folder in ("ui", "app_pages")
                        for p in (ROOT / folder).rglob("*.py"))
    for prefix in PRODUCED:
        assert '"' + prefix.rstrip('._') in sources, prefix
