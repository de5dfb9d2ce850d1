"""core.train.cards: the word-sense table says per set whether the 90% target is met."""
from core.train.cards import _senses_table


def _report(best_bert: float, best_elmo: float) -> dict:
    def result(best):
        return {"per_layer": {"layer 0": 0.5, "layer 1": best}, "n": {"水果": 20, "公司": 20}, "best": best}

    return {"senses_苹果": {"authored": {"mini-bert-zh": result(best_bert), "mini-elmo-zh": result(best_elmo),
                                         "word2vec-zh": result(0.5)}}}


def test_verdict_follows_the_measured_best_layer():
    report = _report(0.932, 0.864)
    assert "authored 93.2% (met)" in _senses_table(report, "mini-bert-zh")
    elmo = _senses_table(report, "mini-elmo-zh")
    assert "authored 86.4% (missed)" in elmo and "layer 1: 86.4%" in elmo
    assert "authored 90.0% (met)" in _senses_table(_report(0.9, 0.9), "mini-elmo-zh")


def test_static_model_gets_the_table_but_no_verdict():
    table = _senses_table(_report(0.95, 0.95), "word2vec-zh")
    assert "layer 1: 50.0%" in table and "Target" not in table


def test_a_set_below_the_per_sense_minimum_is_flagged_with_its_step():
    report = _report(0.95, 0.95)
    assert "fewer than" not in _senses_table(report, "mini-bert-zh")
    report["senses_苹果"]["authored"]["mini-bert-zh"]["n"] = {"水果": 43, "公司": 11}
    assert "authored has fewer than 20 occurrences of a sense; one error there moves its figure by 1.9%." \
        in _senses_table(report, "mini-bert-zh")


def test_majority_baseline_is_shown_next_to_an_unbalanced_set():
    report = _report(0.95, 0.95)
    report["senses_苹果"]["authored"]["mini-bert-zh"]["n"] = {"水果": 43, "公司": 11}
    assert "| authored (水果 43, 公司 11) | 79.6% |" in _senses_table(report, "mini-bert-zh")


def test_bert_card_lists_demo_set_misses():
    from core.train.cards import _demo_misses, _demo_row

    result = {"demo_set": {"top": 3, "hits": 1, "sentences": 2, "hit_rate": 0.5, "rows": [
        {"sentence": "北京是中国的[MASK]都。", "answers": ["首"], "top": ["国", "人", "名"], "hit": False},
        {"sentence": "我吃了一个苹[MASK]。", "answers": ["果"], "top": ["果", "个", "斤"], "hit": True}]}}
    assert "| 50.0% (1/2) | ≥ 80% |" in _demo_row(result)
    misses = _demo_misses(result)
    assert "`北京是中国的[MASK]都。` | 首 | 国 / 人 / 名" in misses and "苹[MASK]" not in misses
    assert _demo_row({}) == "" and _demo_misses({}) == ""
    check = {"words_check": {**result["demo_set"], "hits": 0, "hit_rate": 0.0}}
    assert "fill_mask_words_check.tsv" in _demo_row(check, "words_check")
    assert "| 0.0% (0/2) | none (a check) |" in _demo_row(check, "words_check")
