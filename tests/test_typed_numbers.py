"""Texts that state numbers must compute them: every digit and quantity word (most, all, always,
多数, 一半, …) in the translation tables is either a placeholder filled from results, notation the text
defines, or on the allow-list below with the reason it may be typed. A new typed number or "at most
positions" fails here: compute it (a ``{placeholder}``) or, when it really is fixed, add it with its reason.

Not counted: placeholders, LaTeX and code spans, citations (years, §, Table/Figure numbers, arXiv ids),
identifiers with digits (GPT-2, UTF-8, word2vec), layer and lecture numbers, the 95% of the app's
intervals (checked against ``core.compute.stats.Z_95``), superlatives ("the most probable", "at most N") and
ELMo's "forward/backward half" (the halves of its vectors).
"""
from __future__ import annotations

import inspect
import json
import re
from collections import Counter
from pathlib import Path
from statistics import NormalDist

import pytest

ROOT = Path(__file__).resolve().parent.parent
LECTURE = ROOT.parent / "shared" / "lecture" / "52-pretraining-elmo-to-bert.txt"

QUANTITY = {"en": re.compile(r"\b(?:most|mostly|majority|all|always|never|half|usually|almost|nearly)\b", re.I),
            "zh": re.compile("大多数|多数|大部分|全部|一半|总是|从不|从来|永远|几乎|"
                             "通常|大都")}
NOT_COUNTED = [re.compile(p, re.I) for p in (
    r"\bat (?:most|least)(?=\s*[\d{])",  # a limit ("at most {limit} characters"), before its placeholder goes
    r"\{[^{}]*\}", r"\$[^$]*\$", r"`[^`]*`",  # placeholders, formulas, code
    r"arXiv:\d+\.\d+", r"§\s?\d+(?:\.\d+)*", r"\b(?:Table|Fig\.|Figure)\s\d+", r"[表图]\s?\d+",
    r"(?<![\d.,])(?:19[5-9]\d|20[0-3]\d)[a-z]?(?!\d|[.,]\d|\s?%)",  # a year: a citation or a corpus' date
    r"[A-Za-z][A-Za-z_\-]*\d[\w\-]*",  # identifiers with digits: GPT-2, UTF-8, word2vec, mini-bert-zh
    r"\blayers? \d+\b", r"第\s?\d+\s?层", r"\blecture \d+\b", r"第\s?\d+\s?节",
    r"95\s?%\s?(?:Wilson\s?)?(?:confidence\s?)?(?:intervals?|区间|置信)",
    r"\b(?:the most|most likely)\b", r"\bmost (?=frequent|probable|confident|sure|similar|strongly)",
    r"(?:forward|backward) half", r"[前后]向一半")]
NUMBER = re.compile(r"\d+(?:[.,]\d+)*(?:\s?%)?")

# Why each remaining number or quantity word may be typed. LECTURE and CONFIG are checked below.
LECTURE_ = "the lecture's own numbers (checked against the lecture text)"
CONFIG = "the shipped models' architecture (checked against their config.json)"
PAPER = "a cited paper's setting or finding, with the citation in the text"
NOTATION = "notation the text defines: indices, a scale's ends, the 0 of a difference, 1 / n, 2 classes"
DEFINITION = "what a method, control or file is by construction (all layers, every parameter), not a result"
PROSE = "ordinary prose about the interface or the data, not a claim about a result"
CONSTANT = "a fixed setting of the app, checked against the constant in CONSTANTS"
CHECKED = "a claim about the shipped models, checked by the named test"

ALLOWED: dict[str, tuple[str, str]] = {  # key: (its numbers and quantity words, each as often as typed; why)
    # the lecture
    "elmo.diag.title": ("1 1 2 3 5", LECTURE_),
    "elmo.exercise.hidden": ("2", LECTURE_),
    "elmo.exercise.title": ("2", LECTURE_),
    "elmo.explain": ("1 2", LECTURE_),
    "elmo.preset.worked_example": ("2", LECTURE_),
    "elmo.preset_help.semantics": ("0.1 0.3 0.6 2", LECTURE_),
    "elmo.preset_help.syntax": ("0.1 0.4 0.5 2", LECTURE_),
    "elmo.preset_help.worked_example": ("0.2 0.3 0.5 2 2", LECTURE_),
    "elmo.toy_hidden": ("2", LECTURE_),
    "elmo.toy_now": ("0 0 0 0 0 0 1 1 1", LECTURE_),
    "evidence.presets.text": ("0 0.1 0.1 0.3 0.4 0.5 0.6", LECTURE_),
    "ex.concept.title": ("1", LECTURE_),
    "ex.formula.answer": ("3", LECTURE_),
    "ex.formula.hint.reversed": ("1 3", LECTURE_),
    "ex.formula.hint.wrong": ("1", LECTURE_),
    "ex.formula.question": ("0 0 0 0 0 0 1 1 1 2 2 3", LECTURE_),
    "ex.formula.question_variant": ("0 0 0 0 0 0 1 1 1", LECTURE_),
    "ex.formula.title": ("2", LECTURE_),
    "ex.formula.variant.lecture": ("0.2 0.3 0.5 2", LECTURE_),
    "ex.formula.variant.semantics": ("0.1 0.3 0.6 2", LECTURE_),
    "ex.formula.variant.syntax": ("0.1 0.4 0.5 2", LECTURE_),
    "fill.action.chosen": ("15%", LECTURE_),
    "fill.sec.corrupt": ("15%", LECTURE_),
    "present.note.semantics": ("0.1 0.2 0.3 0.6 0.6 1.2", LECTURE_),
    "present.note.syntax": ("0.1 0.2 0.4 0.5 0.8 1.0", LECTURE_),
    "present.note.worked": ("0.2 0.3 0.5 2", LECTURE_),
    "present.scene.worked": ("2", LECTURE_),
    # the models
    "home.models.desc.mini-bert-zh": ("4", CONFIG),
    "home.models.desc.mini-elmo-zh": ("2", CONFIG),
    "obj.bilm.ours": ("1 1 2", CONFIG),
    # papers
    "att.hide_special_help": ("1 most 大部分", PAPER),
    "att.honest": ("almost 几乎", PAPER),
    "att.rollout_intro": ("0.5 0.5", PAPER),
    "evidence.ctx.note": ("1 1 1 5", PAPER),
    "evidence.pos.note": ("1 128 2 2 256 4 4096 8 800 97% all 全部", PAPER + "; ours from config.json"),
    "evidence.senses.paper": ("all", PAPER),
    "evidence.ctx.paper": ("all", PAPER),  # Ethayarajh (2019), §4.1: "anisotropic in all non-input layers"
    "ex.concept.answer": ("usually 通常", PAPER),
    "fill.action.mask": ("80%", PAPER),
    "fill.action.random": ("10%", PAPER),
    "fill.action.unchanged": ("10%", PAPER),
    "fill.corrupt_intro": ("10% 10% 15% 80% never 从不", PAPER),
    "fill.count.chosen_help": ("1 15%", PAPER),
    "fill.nsp_note": ("50% 50%", PAPER),
    "transfer.intro": ("all", PAPER),
    "transfer.lora.body": ("0 10,000 175 most 多数", PAPER),
    "transfer.prompting.body": ("0.1% 175 1750 4 5 500 all", PAPER),
    # notation
    "att.intro": ("1 all all", NOTATION),
    "att.rollout_upto": ("1", NOTATION),
    "att.word_level_help": ("1", NOTATION),
    "elmo.diag.h0": ("0", NOTATION),
    "elmo.intro": ("1 all", NOTATION),
    "elmo.learned.compare.tie": ("0", NOTATION),
    "error.embed_too_many_sentences": ("all", DEFINITION + " (the function holds every sentence it is given)"),
    "error.config_bad_rate": ("0 0 1 1", DEFINITION + " (a rate's valid range)"),
    "error.config_not_size": ("1", DEFINITION + " (a size's smallest valid value)"),
    "elmo.learned.method": ("2", NOTATION),
    "elmo.learned.verdict.opposite": ("0 1 all all", NOTATION),
    "elmo.learned.verdict.same": ("0 1 all all", NOTATION),
    "elmo.learned.verdict.unclear": ("0 1 all all", NOTATION),
    "elmo.learned.verdict.weak": ("0 1 all all", NOTATION),
    "elmo.live.caption": ("1 all all", NOTATION),
    "elmo.mode_help": ("0 never", NOTATION),
    "elmo.preset_help.onehot": ("0 1 1", NOTATION),
    "elmo.preset_help.uniform": ("0 1 all", NOTATION),
    "elmo.preset_needs3": ("1 3", NOTATION),
    "elmo.zero_sum": ("0", NOTATION),
    "error.bad_json_numbers": ("0.2 0.3 0.5", NOTATION),
    "error.bad_weights": ("0 0", NOTATION),
    "error.must_be_even": ("一半", NOTATION),
    "evidence.axis.layer": ("0", NOTATION),
    "evidence.baseline.chance": ("1", NOTATION),
    "evidence.presets.verdict.differ": ("0", NOTATION),
    "evidence.presets.verdict.same": ("0", NOTATION),
    **{f"evidence.verdict.{task}_{outcome}": ("0", NOTATION)  # "the interval excludes / contains 0"
       for task in ("pos", "sense") for outcome in ("same", "opposite", "tie")},
    "ex.formula.answer_help": ("0.1 0.1,0.2,0.3 0.2 0.3", NOTATION),
    "ex.formula.placeholder": ("0.1 0.2 0.3", NOTATION),
    "fill.nsp_verdict": ("50%", NOTATION),
    "fill.step0": ("0", NOTATION),
    "obj.layer_axis": ("0", NOTATION),
    "obj.ll.help": ("0", NOTATION),
    "obj.m.forward_help": ("0", NOTATION),
    "obj.m.min_help": ("0 1", NOTATION),
    "obj.metric.cosine": ("1", NOTATION),
    "present.off_list": ("1", NOTATION),
    "static.centre_pair": ("1", NOTATION),
    "static.cosine_scale": ("1 1 1", NOTATION),
    "static.fig.static_caption": ("1", NOTATION),
    "static.nn_caption": ("2", NOTATION),
    "static.pair_cos_note": ("1 1 always 总是", NOTATION),
    "elmo.live.pair_caption": ("1", NOTATION),
    "transfer.baseline": ("50%", NOTATION),
    "transfer.curve.caption": ("0", NOTATION),
    "transfer.data.body": ("50% half half never", NOTATION),
    "transfer.elmo_page.note": ("1 3 all 全部", NOTATION),
    "transfer.feature.body": ("1 3", NOTATION),
    "transfer.gain.higher": ("0", NOTATION),
    "transfer.gain.lower": ("0", NOTATION),
    "transfer.gain.tie": ("0", NOTATION),
    "transfer.elmo_bert.higher": ("0", NOTATION),
    "transfer.elmo_bert.lower": ("0", NOTATION),
    "transfer.elmo_bert.tie": ("0", NOTATION),
    "transfer.lora.verdict.higher": ("0", NOTATION),
    "transfer.lora.verdict.lower": ("0", NOTATION),
    "transfer.lora.verdict.tie": ("0", NOTATION),
    # by construction
    "att.avg_intro": ("all", DEFINITION),
    "att.tab.grid": ("all 全部", DEFINITION),
    "att.download_bertviz": ("every 全部", DEFINITION),
    "elmo.concat.intro": ("all", DEFINITION),
    "elmo.concat.method": ("all all 全部", DEFINITION),
    "elmo.layer_norm_help": ("all 全部", DEFINITION),
    "evidence.baseline.majority": ("majority 全部 多数", DEFINITION),
    "evidence.download_json": ("all 全部", DEFINITION),
    "evidence.pos.sample": ("never", DEFINITION),
    "evidence.senses.all": ("all 全部", DEFINITION),
    "evidence.senses.note": ("all", DEFINITION),
    "fill.corrupt_text_help": ("never 从不", DEFINITION),
    "fill.hidden_note": ("all 全部", DEFINITION),
    "fill.replay_intro": ("all", DEFINITION),
    "fill.seed_help": ("always 总是", DEFINITION),
    "fill.show_all": ("all 全部", DEFINITION),
    "fill.total_prob": ("never", DEFINITION),
    "home.threads.legend": ("all", DEFINITION),
    "obj.deep.read": ("0 never 从来 全部", DEFINITION),
    "obj.deep.text": ("never", DEFINITION),
    "obj.table.title": ("全部", DEFINITION),
    "present.all": ("all 全部", DEFINITION),
    "present.note.deep": ("0 all", DEFINITION),
    "present.note.home": ("all", DEFINITION),
    "present.note.transfer": ("全部", DEFINITION),
    "scenes.oov": ("never", DEFINITION),
    "static.caption_spaces": ("all", DEFINITION),
    "static.caption_spaces_background": ("all", DEFINITION),
    "static.fig.static_point": ("all", DEFINITION),
    "static.layer_help": ("all", DEFINITION),
    "static.oov": ("all", DEFINITION),
    "static.static_always": ("always", DEFINITION),
    "transfer.dl_json": ("all 全部", DEFINITION),
    "transfer.finetune.body": ("16 2 all all 全部", DEFINITION),
    "transfer.finetune.title": ("全部", DEFINITION),
    "transfer.lora_card.body": ("全部", DEFINITION),
    "transfer.method.finetune": ("all 全部", DEFINITION),
    "transfer.params.time_caption": ("全部", DEFINITION),
    "transfer.params.what.finetune": ("all 全部", DEFINITION),
    "transfer.params.what.lora": ("all all 全部", DEFINITION),
    "transfer.pool_help": ("all", DEFINITION),
    "transfer.recompute.fixed_model": ("always", DEFINITION),
    "transfer.takeaway": ("全部", DEFINITION),
    "transfer.tuning.body": ("all 全部", DEFINITION),
    # claims about the shipped models
    "obj.bilm.read": ("almost half 一半 几乎", CHECKED + ": test_objectives::test_the_pages_examples_hold"),
    "present.note.objective": ("几乎", CHECKED + ": test_objectives::test_the_pages_examples_hold"),
    # prose
    "home.models.hub_howto.body": ("usually 通常", PROSE),
    "obj.latin_note": ("almost 几乎", PROSE),
    "fill.conf.guess": ("all", PROSE + " (several words fit one gap)"),
    "fill.conf.wrong": ("all", PROSE + " (several words fit one gap)"),
    "static.reading.lower": ("never", PROSE + " (how to compare)"),
    # what the app computes or does by construction
    "fill.conf.levels": ("never", DEFINITION + " (punctuation is filtered out)"),
    "att.qa.answer": ("most", DEFINITION + " (the row's largest weight, computed beside it)"),
    "elmo.qa": ("all", DEFINITION + " (ELMo mixes every layer)"),
    "obj.qa.reading.deep": ("all never 从不", DEFINITION + " (the forward LSTM reads nothing to its right); "
                            "\"not at all\" is the outcome core.views.objectives.deep_reading computed"),
    "transfer.qa.why": ("全部", DEFINITION + " (fine-tuning changes every parameter)"),
    "evidence.recompute.fixed_model": ("always", DEFINITION),
    "static.reading": ("1", NOTATION),
    "static.acc_guess": ("1", NOTATION + " (1 / number of senses)"),
    # fixed settings
    "evidence.pos.method": ("1 100", CONSTANT),
    "fill.corrupt_stats": ("10% 10% 15% 15% 400 80% always", CONSTANT + " (the rates: Devlin et al. 2019)"),
    "fill.sentence_help": ("16 500 usually 通常", CONSTANT),
    "static.upload_help": ("1 most", CONSTANT),
    "static.upload_limits": ("1 most", CONSTANT),
    "static.upload_refused": ("1 most", CONSTANT),
    "transfer.recompute.steps_help": ("16", CONSTANT),
    "board.senses_help": ("6 12", CONSTANT),
    "board.caption_space": ("2 all", NOTATION + " (a 2-D picture; one PCA over all layers, by construction)"),
    "board.approval_help": ("all 全部", PROSE + " (approve them all at once: a control)"),
    "board.approve_all": ("all 全部", PROSE + " (the button that approves every waiting sentence)"),
    "a11y.clear_all": ("all 全部", PROSE + " (Streamlit's own button name, translated: a control)"),
    "board.lecturer_intro": ("never 从不", PROSE + " (the projector never shows the controls: by construction)"),
}


def _constants() -> dict[str, set[str]]:
    """The numbers of the CONSTANT entries, read from the code (besides words the entry allows)."""
    from core.board import rules as board
    from core.content import sentence_sets as scenes
    from core.experiments.pos_probe import DEFAULTS as POS
    from core.fillmask import corruption, masks
    from core.transfer import DEFAULT_CONFIG

    upload_mb = f"{scenes.MAX_UPLOAD_BYTES / 1e6:g}"
    draws = inspect.signature(corruption.corruption_stats).parameters["draws"].default
    return {"fill.sentence_help": {str(masks.MAX_MASKS), str(masks.MAX_CHARS)},
            "fill.corrupt_stats": {"10%", "15%", "80%", str(draws)},
            **{f"static.upload_{name}": {upload_mb} for name in ("limits", "refused", "help")},
            "evidence.pos.method": {"1", str(POS["max_chars"])},  # "January 1998"'s month, the sentence limit
            "transfer.recompute.steps_help": {str(DEFAULT_CONFIG.batch_size)},
            "board.senses_help": {str(board.MAX_SENSES), str(board.MAX_SENSE_CHARS)}}


def tokens(text: str, lang: str) -> list[str]:
    for pattern in NOT_COUNTED:
        text = pattern.sub(" ", text)
    return ([n.replace(" ", "") for n in NUMBER.findall(text)]
            + [w.lower() for w in QUANTITY[lang].findall(text)])


def _tables() -> dict[str, dict[str, str]]:
    """Every text a user reads: the app's tables with core's error messages (ui.i18n.table)."""
    from ui.i18n import table

    return {lang: table(lang) for lang in ("zh", "en")}


def _is_number(token: str) -> bool:
    return NUMBER.fullmatch(token) is not None


def test_every_typed_number_and_quantity_word_is_backed():
    tables = _tables()
    unbacked = {}
    for key in tables["en"]:
        # counted per language, so a second typed "2" beside an allowed one is new
        found = Counter(tokens(tables["en"][key], "en")) | Counter(tokens(tables["zh"].get(key, ""), "zh"))
        extra = found - Counter(ALLOWED.get(key, ("", ""))[0].split())
        if extra:
            unbacked[key] = sorted(extra.elements())
    assert unbacked == {}, ("typed numbers or quantity words without a results file, placeholder or reason: compute "
                            "them ({placeholder}) or add them to ALLOWED with the reason")


def test_the_allow_list_names_existing_keys_and_one_reason_each():
    tables = _tables()
    assert sorted(set(ALLOWED) - set(tables["en"])) == []
    assert all(reason for _, reason in ALLOWED.values())


def test_lecture_numbers_are_in_the_lecture():
    if not LECTURE.exists():
        pytest.skip("the lecture text is not next to the repository")
    lecture = set(NUMBER.findall(LECTURE.read_text(encoding="utf-8")))
    lecture |= {n.replace(" ", "") for n in lecture}
    missing = {key: sorted(t for t in allowed.split() if _is_number(t) and t not in lecture)
               for key, (allowed, reason) in ALLOWED.items() if reason == LECTURE_}
    assert {k: v for k, v in missing.items() if v} == {}


def test_architecture_numbers_are_the_shipped_configs():
    values = set()
    for name in ("mini-bert-zh", "mini-elmo-zh"):
        config = json.loads((ROOT / "assets" / "models" / name / "config.json").read_text(encoding="utf-8"))
        values |= {str(v) for v in config.values() if isinstance(v, int) and not isinstance(v, bool)}
    for key, (allowed, reason) in ALLOWED.items():
        if reason == CONFIG:
            assert {t for t in allowed.split() if _is_number(t)} - {"1"} <= values, key  # "1": "per direction"


def test_fixed_settings_are_the_apps_constants():
    constants = _constants()
    for key, (allowed, reason) in ALLOWED.items():
        if reason.startswith(CONSTANT):
            assert {t for t in allowed.split() if _is_number(t)} == constants[key], key


def test_the_95_percent_is_the_apps_interval_level():
    from core.compute.stats import Z_95

    assert Z_95 == pytest.approx(NormalDist().inv_cdf(0.975), abs=1e-3)


def test_the_extraction_finds_what_a_text_types():
    assert tokens("BERT is surer at most positions (5 of 7)", "en") == ["5", "7", "most"]
    assert tokens("在 {surer} / {n} 个位置上更有把握，大多数", "zh") == ["大多数"]
    assert tokens("GPT-2 (Radford et al., 2019, §3.1): layer 2, the 95% interval, at most {limit} chars", "en") == []
    assert tokens("trained for about 2–4 hours each on 2 CPU cores", "en") == ["2", "4", "2"]  # a range of hours
    assert tokens("ELMo's forward half is 0", "en") == ["0"]
