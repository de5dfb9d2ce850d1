"""core.train.cards: each model's card, as ``write_cards`` writes it from an evaluation report and a training
record (synthetic ones, or the stored ones the shipped cards come from): the word-sense table says per set whether
the 90% target is met, the budget section compares the models' training, the curve sections are the recorded ones."""
import json

import pytest

from core.models.catalogue import MODELS_DIR
from core.train.cards import write_cards

CARDS = ("mini-bert-zh", "mini-elmo-zh", "word2vec-zh")
STORED = {name: json.loads((MODELS_DIR / f"{name}.json").read_text(encoding="utf-8"))
          for name in ("evaluation", "training")}


def cards(tmp_path, report: dict | None = None, training: dict | None = None) -> dict[str, str]:
    """The cards ``write_cards`` writes from ``report`` and ``training`` (the stored ones by default), for
    directories holding the shipped models' config and weights (linked: only their shapes are read)."""
    for name in CARDS:
        directory = tmp_path / name
        directory.mkdir(exist_ok=True)
        for file in ("config.json", "model.safetensors"):
            if (MODELS_DIR / name / file).exists() and not (directory / file).exists():
                (directory / file).symlink_to((MODELS_DIR / name / file).resolve())
    write_cards(STORED["evaluation"] if report is None else report, tmp_path,
                STORED["training"] if training is None else training)
    return {name: (tmp_path / name / "README.md").read_text(encoding="utf-8") for name in CARDS}


def section(card: str, title: str) -> str:
    """The card's ``## title`` section, up to the next one."""
    start = card.index(f"## {title}")
    end = card.find("\n## ", start)
    return card[start:] if end < 0 else card[start:end]


def test_the_shipped_cards_are_the_stored_records_written_out(tmp_path):
    """The figures the cards show are the stored evaluation's and training record's, curves included
    (after a change: python -m core.train.cards)."""
    written = cards(tmp_path)
    for name in CARDS:
        assert written[name] == (MODELS_DIR / name / "README.md").read_text(encoding="utf-8"), name


def senses(card: str) -> str:
    return section(card, "Word senses of 苹果")


def _report(best_bert: float, best_elmo: float) -> dict:
    def result(best):
        return {"per_layer": {"layer 0": 0.5, "layer 1": best}, "n": {"水果": 20, "公司": 20}, "best": best}

    return {**STORED["evaluation"], "senses_苹果": {"authored": {
        "mini-bert-zh": result(best_bert), "mini-elmo-zh": result(best_elmo), "word2vec-zh": result(0.5)}}}


def test_verdict_follows_the_measured_best_layer(tmp_path):
    written = cards(tmp_path, _report(0.932, 0.864))
    assert "authored 93.2% (met)" in senses(written["mini-bert-zh"])
    elmo = senses(written["mini-elmo-zh"])
    assert "authored 86.4% (missed)" in elmo and "layer 1: 86.4%" in elmo
    assert "authored 90.0% (met)" in senses(cards(tmp_path, _report(0.9, 0.9))["mini-elmo-zh"])


def test_static_model_gets_the_table_but_no_verdict(tmp_path):
    table = senses(cards(tmp_path, _report(0.95, 0.95))["word2vec-zh"])
    assert "layer 1: 50.0%" in table and "Target" not in table


def test_a_set_below_the_per_sense_minimum_is_flagged_with_its_step(tmp_path):
    report = _report(0.95, 0.95)
    assert "fewer than" not in senses(cards(tmp_path, report)["mini-bert-zh"])
    report["senses_苹果"]["authored"]["mini-bert-zh"]["n"] = {"水果": 43, "公司": 11}
    assert "authored has fewer than 20 occurrences of a sense; one error there moves its figure by 1.9%." \
        in senses(cards(tmp_path, report)["mini-bert-zh"])


def test_majority_baseline_is_shown_next_to_an_unbalanced_set(tmp_path):
    report = _report(0.95, 0.95)
    report["senses_苹果"]["authored"]["mini-bert-zh"]["n"] = {"水果": 43, "公司": 11}
    assert "| authored (水果 43, 公司 11) | 79.6% |" in senses(cards(tmp_path, report)["mini-bert-zh"])


def _with_bert(**result) -> dict:
    """The stored report with mini-bert-zh's demo-set entries replaced by ``result``'s."""
    bert = {k: v for k, v in STORED["evaluation"]["mini-bert-zh"].items() if k not in ("demo_set", "words_check")}
    return {**STORED["evaluation"], "mini-bert-zh": {**bert, **result}}


def test_the_demo_set_that_chose_runs_is_not_headlined_as_held_out(tmp_path):
    """#48: training runs were chosen on the fill-mask demo set, so its figure and its misses have a section of
    their own that says so; the held-out table keeps the sets no shipped weights were chosen on."""
    demo = {"top": 3, "hits": 1, "sentences": 2, "hit_rate": 0.5, "rows": [
        {"sentence": "北京是中国的[MASK]都。", "answers": ["首"], "top": ["国", "人", "名"], "hit": False},
        {"sentence": "我吃了一个苹[MASK]。", "answers": ["果"], "top": ["果", "个", "斤"], "hit": True}]}
    card = cards(tmp_path, _with_bert(demo_set=demo))["mini-bert-zh"]
    held_out = section(card, "Held-out evaluation")
    assert "50.0% (1/2)" not in held_out and "fill_mask_demo.tsv" not in held_out and "[MASK]" not in held_out
    chosen = section(card, "Fill-mask demo set (used to choose runs, not held out)")
    assert "chosen on it" in chosen and "50.0% (1/2)" in chosen and "(target ≥ 80%)" in chosen
    assert "`北京是中国的[MASK]都。` | 首 | 国 / 人 / 名" in chosen and "苹[MASK]" not in chosen
    bare = cards(tmp_path, _with_bert())["mini-bert-zh"]
    assert "## Fill-mask demo set" not in bare and "words_check" not in section(bare, "Held-out evaluation")
    check = section(cards(tmp_path, _with_bert(words_check={**demo, "hits": 0, "hit_rate": 0.0}))["mini-bert-zh"],
                    "Held-out evaluation")
    assert "fill_mask_words_check.tsv" in check and "| 0.0% (0/2) | none (a check) |" in check
    assert "[MASK]" not in check  # the misses listed are the demo set's only


def test_the_training_record_does_not_call_the_demo_set_held_out():
    """#48: the record the card's training section comes from names the demo set as the set runs were chosen on."""
    record = STORED["training"]["mini-bert-zh"]
    assert "lecture demo set" not in record
    assert "not held out: the runs below were compared and chosen on it" in record


# ---- training budgets (core.content.budgets, from training.json) --------------------------------------------------
def _record() -> dict:
    return {"budgets": {
        "big": {"tokens": 1.2e9, "stages": [
            {"device": "cpu", "cores": 2, "minutes": 240, "whole_word": 0},
            {"device": "gpu", "gpu": "NVIDIA H200", "minutes": 10.8, "whole_word": 0.3},
            {"device": "gpu", "gpu": "NVIDIA H200", "minutes": 10.8, "whole_word": 0.3}]},
        "small": {"tokens": 1.24e8, "stages": [{"device": "cpu", "cores": 2, "minutes": 475}]}}}


def test_budgets_sum_the_stages_and_compare_tokens():
    from core.content.budgets import budgets_from, format_minutes, format_tokens, token_ratio

    budgets = budgets_from(_record())
    big, small = budgets["big"], budgets["small"]
    assert (big.cpu_minutes, big.cpu_cores, big.gpu, big.whole_word) == (240, 2, "NVIDIA H200", 0.3)
    assert big.gpu_minutes == pytest.approx(21.6)
    assert (small.gpu, small.gpu_minutes, small.whole_word) == (None, 0.0, 0.0)
    assert token_ratio(budgets, "big", "small") == pytest.approx(1.2e9 / 1.24e8)
    assert token_ratio(budgets, "big", "unrecorded") is None and budgets_from({}) == {}
    assert [format_tokens(1.2e9), format_tokens(1.24e8), format_tokens(1.2e9, "zh"), format_tokens(1.24e8, "zh")] \
        == ["1.2 B", "124 M", "12 亿", "1.24 亿"]
    assert [format_minutes(469.9), format_minutes(21.6)] == ["470", "21.6"]


def test_card_budget_section_names_hardware_whole_word_masking_and_the_gap(tmp_path):
    budgets = _record()["budgets"]
    training = {**STORED["training"], "budgets": {"mini-bert-zh": budgets["big"], "mini-elmo-zh": budgets["small"]}}
    written = cards(tmp_path, training=training)
    big = section(written["mini-bert-zh"], "Training budget")
    assert "About 1.2 B tokens seen in training: 240 min on 2 CPU cores, then 21.6 min on one NVIDIA H200 GPU." in big
    assert "30% of the examples used whole-word masking" in big and "Cui et al., 2019" in big
    assert "a technique from after the BERT paper" in big
    assert "mini-bert-zh saw about 10× as many tokens as mini-elmo-zh" in big
    small = section(written["mini-elmo-zh"], "Training budget")
    assert "About 124 M tokens seen in training: 475 min on 2 CPU cores." in small and "whole-word" not in small
    assert "mini-bert-zh saw about 10× as many tokens as mini-elmo-zh" in small
    assert "## Training budget" not in written["word2vec-zh"]


def test_shipped_budget_record_agrees_with_the_training_notes_and_the_cards():
    """The figures the pages compute from are the ones the training notes report, and the cards carry them."""
    from core.content.budgets import TRAINING_FILE, format_tokens, load_budgets

    notes = json.loads(TRAINING_FILE.read_text(encoding="utf-8"))
    budgets = load_budgets()
    assert "about 1.2 billion tokens" in notes["mini-bert-zh"] and budgets["mini-bert-zh"].tokens == 1.2e9
    assert "about 124 M tokens" in notes["mini-elmo-zh"] and budgets["mini-elmo-zh"].tokens == 124e6
    assert f"{budgets['mini-elmo-zh'].cpu_minutes:.0f} min of training in total" in notes["mini-elmo-zh"]
    assert "229.9 min" in notes["mini-bert-zh"] and "10.8 minutes of one H200" in notes["mini-bert-zh"]
    assert "30% whole-word examples" in notes["mini-bert-zh"] and budgets["mini-bert-zh"].whole_word == 0.3
    for name in ("mini-bert-zh", "mini-elmo-zh"):  # the cards write these (the shipped cards are as written)
        card = section((MODELS_DIR / name / "README.md").read_text(encoding="utf-8"), "Training budget")
        assert f"About {format_tokens(budgets[name].tokens)} tokens seen in training" in card
    bert_card = (MODELS_DIR / "mini-bert-zh" / "README.md").read_text(encoding="utf-8")
    assert "AutoModelForMaskedLM.from_pretrained(dir)`" in bert_card


def test_the_cards_plain_loading_example_gives_float32():
    """The card's plain from_pretrained example computes in float32 although the weights are stored in fp16."""
    import torch
    from safetensors import safe_open
    from transformers import AutoModelForMaskedLM

    directory = MODELS_DIR / "mini-bert-zh"
    if not (directory / "model.safetensors").exists():
        pytest.skip("mini-bert-zh is not trained yet")
    with safe_open(str(directory / "model.safetensors"), "pt") as weights:
        assert weights.get_tensor(next(iter(weights.keys()))).dtype == torch.float16
    assert next(AutoModelForMaskedLM.from_pretrained(directory).parameters()).dtype == torch.float32


EVERYDAY = "Continued pre-training on everyday text"


def test_the_bert_card_shows_the_everyday_learning_curve_as_recorded(tmp_path):
    """The card's curve table is the curve file's (regenerate with python -m core.train.cards after a point)."""
    from core.train.cards import EVERYDAY_CURVE
    from core.train.curve_report import read_curve

    curve = section(cards(tmp_path)["mini-bert-zh"], EVERYDAY)
    assert curve.count("\n| ") == 1 + len(read_curve(EVERYDAY_CURVE))  # the header row and one row per point


def _curve_point(step: int, minutes: float, hits: tuple[int, int, int], top1: float = 0.53) -> dict:
    sizes = (28, 23, 30)
    return {"step": step, "minutes": minutes, "heldout": {"zh_mixed_v1": {"masked_top1": top1, "nsp_accuracy": 0.91}},
            **{name: {"hits": h, "sentences": n}
               for name, h, n in zip(("demo_set", "words_check", "everyday_check"), hits, sizes)}}


def test_the_stopping_rule_stops_a_flat_curve_only_after_its_time():
    from core.train.curve_report import verdict

    flat = [_curve_point(0, 0, (18, 6, 7)), _curve_point(10, 200, (19, 6, 8))]
    assert verdict(flat)["moves"] == {"demo_set": 1, "words_check": 0, "everyday_check": 1}
    assert not verdict(flat)["stop"]  # 200 minutes: too early to give up
    flat.append(_curve_point(20, 360, (19, 7, 9)))
    result = verdict(flat)
    assert result["stop"] and not result["moved"] and result["shippable"] == []
    assert "demo set ≥ 80%" in result["missed_at_end"]
    moved = flat[:-1] + [_curve_point(20, 360, (18, 6, 10))]
    assert verdict(moved)["moved"] and not verdict(moved)["stop"]


def test_only_a_point_meeting_every_shipping_rule_is_shippable():
    from core.train.curve_report import verdict

    good = (23, 12, 15)  # 82%, 52%, 50%
    points = [_curve_point(0, 0, (18, 6, 7)), _curve_point(5, 30, good, top1=0.515), _curve_point(9, 60, good)]
    assert verdict(points)["shippable"] == [9]  # step 5 loses zh_mixed_v1 top-1


def test_the_card_states_the_rules_verdict_on_the_recorded_curve(tmp_path):
    from core.train.cards import EVERYDAY_CURVE
    from core.train.curve_report import read_curve, verdict

    result = verdict(read_curve(EVERYDAY_CURVE))
    curve = section(cards(tmp_path)["mini-bert-zh"], EVERYDAY)
    assert ("nothing shipped" in curve) == result["stop"]
    for name, move in result["moves"].items():
        assert f"{name} {move:+d}" in curve


def _elmo_point(step: int, authored: float, heldout: float, ppl: float) -> dict:
    return {"step": step, "minutes": step / 10, "tokens": step * 4000, "lr": 1e-4,
            "heldout": {"zh_mixed_v1": {"forward_ppl": ppl, "backward_ppl": ppl},
                        "zh_everyday_v1": {"forward_ppl": 90.0, "backward_ppl": 90.0}},
            "sense_probe_best": {"苹果": authored, "花": 0.9},
            "senses_苹果": {"authored": authored, "heldout_corpus": heldout}}


def test_the_elmo_rule_needs_both_apple_sets_and_no_perplexity_regression():
    from core.train.curve_report import elmo_curve_table, elmo_verdict

    points = [_elmo_point(0, 0.86, 0.78, 100.0), _elmo_point(10, 0.95, 0.92, 104.0),
              _elmo_point(20, 0.95, 0.89, 99.0), _elmo_point(30, 0.91, 0.90, 100.0)]
    result = elmo_verdict(points)
    assert result["shippable"] == [30]  # 10 loses perplexity, 20 misses the held-out 苹果 set
    assert result["missed"][10] == ["zh_mixed_v1 perplexity not above the start"]
    assert result["missed"][20] == ["苹果 heldout_corpus ≥ 90%"]
    assert elmo_curve_table(points).count("\n| ") == len(points)  # one row per point after the header


def test_the_elmo_card_shows_its_curve_as_recorded(tmp_path):
    from core.train.cards import ELMO_CURVE
    from core.train.curve_report import read_curve

    curve = section(cards(tmp_path)["mini-elmo-zh"], "Continued training on everyday text")
    assert curve.count("\n| ") == 1 + len(read_curve(ELMO_CURVE))
