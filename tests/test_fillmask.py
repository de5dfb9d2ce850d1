"""core/fillmask.py on the tiny random BERT fixtures (and mini-bert-zh where noted)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.fillmask.corruption import corruption_stats, mlm_corruption
from core.fillmask.iterative import iterative_fill
from core.fillmask.masks import check_masked_sentence, mask_runs, whole_word_mask
from core.fillmask.prediction import fill_mask, fill_masks
from core.fillmask.scoring import candidate_scores
from core.fillmask.words import proposals, word_candidates
from core.guard.errors import LabError
from core.models.cache import load_encoder
from core.models.catalogue import list_models


def _mini_bert():
    info = next((m for m in list_models() if m.name == "mini-bert-zh"), None)
    if info is None or not info.available:
        pytest.skip("mini-bert-zh is not available here")
    return load_encoder("mini-bert-zh")


# ---- input checks ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sentence", "code"),
    [
        ("", "empty_input"),
        ("   \n\t ", "empty_input"),
        (None, "empty_input"),
        ("今" * 501 + "[MASK]", "too_long"),
        ("今天天气很好。", "no_mask"),
        ("[MASK][MASK]", "only_masks"),
        ("[MASK]，[MASK]。", "only_masks"),
        ("今天" + "[MASK]" * 17, "too_many_masks"),
        ("今天" + "[MASK]" * 20, "too_many_masks"),
    ],
)
def test_check_masked_sentence_rejects(sentence, code):
    with pytest.raises(LabError) as info:
        check_masked_sentence(sentence)
    assert info.value.code == code
    assert info.value.message("zh") and info.value.message("en")


def test_check_masked_sentence_accepts_and_normalises():
    assert check_masked_sentence("  我吃了一个[mask]［MASK］。 ") == "我吃了一个[MASK][MASK]。"
    assert check_masked_sentence("今天" + "[MASK]" * 16).count("[MASK]") == 16
    assert check_masked_sentence("今天[ Mask ]", "<mask>") == "今天<mask>"


# ---- fill_mask -----------------------------------------------------------------------------------
def test_fill_mask_full_distributions_sum_to_one(tiny_bert):
    result = fill_mask(tiny_bert, "我吃了一个[MASK][MASK]。", top_k=7)
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert [slot.index for slot in result.masks] == [0, 1]
    assert [slot.token_index for slot in result.masks] == [6, 7]
    vocab_size = len(tiny_bert.tokenizer)
    for slot in result.masks:
        assert slot.probabilities.shape == (vocab_size,)
        assert slot.probabilities.sum() == pytest.approx(1.0, abs=1e-5)
        assert np.all(slot.probabilities >= 0)
        scores = [c.score for c in slot.candidates]
        assert len(scores) == 7 and scores == sorted(scores, reverse=True)
        for c in slot.candidates:
            assert c.score == pytest.approx(slot.probabilities[tiny_bert.tokenizer.convert_tokens_to_ids(c.token)])


def test_fill_mask_never_offers_special_tokens(tiny_bert):
    special = set(tiny_bert.tokenizer.all_special_tokens)
    result = fill_mask(tiny_bert, "[MASK]天气很好", top_k=50)
    assert not special & {c.token for c in result.masks[0].candidates}


def test_fill_mask_top_k_bounds(tiny_bert):
    for k in (0, 51):
        with pytest.raises(LabError) as info:
            fill_mask(tiny_bert, "今天[MASK]", top_k=k)
        assert info.value.code == "out_of_range"


def test_fill_mask_too_many_tokens(tiny_bert):
    # the tiny model has 64 positions; 80 characters are 80 tokens
    with pytest.raises(LabError) as info:
        fill_mask(tiny_bert, "今天" * 40 + "[MASK]")
    assert info.value.code == "too_many_tokens"


@pytest.mark.realmodel
def test_fill_mask_mini_bert_sums_to_one():
    encoder = _mini_bert()
    result = fill_mask(encoder, "我吃了一个[MASK][MASK]。", top_k=5)
    assert len(result.masks) == 2
    for slot in result.masks:
        assert slot.probabilities.shape == (len(encoder.tokenizer),)
        assert slot.probabilities.sum() == pytest.approx(1.0, abs=1e-4)


# ---- candidate_scores ----------------------------------------------------------------------------
def test_candidate_scores_product_and_fit(tiny_bert):
    sentence = "我吃了一个[MASK][MASK]。"
    result = fill_mask(tiny_bert, sentence)
    vocab = tiny_bert.tokenizer.get_vocab()
    scored = candidate_scores(tiny_bert, sentence, ["苹果", " 水果 ", "", "公司的", "好", "犇犇"])
    by_word = {s.word: s for s in scored}
    assert set(by_word) == {"苹果", "水果", "公司的", "好", "犇犇"}  # empty entries skipped, stripped
    apple = by_word["苹果"]
    expected = [result.masks[0].probabilities[vocab["苹"]], result.masks[1].probabilities[vocab["果"]]]
    assert apple.fits and list(apple.per_token) == pytest.approx(expected)
    assert apple.score == pytest.approx(expected[0] * expected[1])
    assert by_word["好"].fits and len(by_word["好"].per_token) == 1  # one character, first mask
    assert not by_word["公司的"].fits and by_word["公司的"].score is None  # 3 tokens, 2 masks
    assert not by_word["犇犇"].fits  # unknown to the vocabulary: [UNK] is not a candidate


def test_candidate_scores_first_mask(tiny_bert):
    sentence = "我吃了一个[MASK][MASK]。"
    result = fill_mask(tiny_bert, sentence)
    vocab = tiny_bert.tokenizer.get_vocab()
    (score,) = candidate_scores(tiny_bert, sentence, ["果"], first_mask=1)
    assert score.fits and score.score == pytest.approx(result.masks[1].probabilities[vocab["果"]])
    (too_long,) = candidate_scores(tiny_bert, sentence, ["苹果"], first_mask=1)
    assert not too_long.fits


# ---- whole_word_mask -----------------------------------------------------------------------------
def test_whole_word_mask(tiny_bert):
    assert whole_word_mask("他背着包袱去北京。", "包袱") == "他背着[MASK][MASK]去北京。"
    assert whole_word_mask("苹果和苹果", "苹果", tiny_bert) == "[MASK][MASK]和[MASK][MASK]"
    assert whole_word_mask("苹果昨天发布了新手机。", "手", tiny_bert) == "苹果昨天发布了新[MASK]机。"
    with pytest.raises(LabError) as info:
        whole_word_mask("今天天气很好", "北京")
    assert info.value.code == "word_not_in_sentence" and "北京" in info.value.message("zh")


# ---- iterative_fill ------------------------------------------------------------------------------
def test_iterative_fill_one_mask_per_step(tiny_bert):
    steps = iterative_fill(tiny_bert, "他背着[MASK][MASK]去[MASK]京。")
    assert [s.step for s in steps] == [1, 2, 3]
    assert [len(s.open_masks) for s in steps] == [3, 2, 1]
    for step in steps:
        assert 0 <= step.filled_mask < len(step.open_masks)
        assert step.text_before.count("[MASK]") == step.text_after.count("[MASK]") + 1
        best = step.open_masks[step.filled_mask].candidates[0]
        assert best.token == step.token and best.score == pytest.approx(step.score)
        assert step.score == pytest.approx(max(m.candidates[0].score for m in step.open_masks))
    assert steps[0].text_before == "他背着[MASK][MASK]去[MASK]京。"
    assert "[MASK]" not in steps[-1].text_after
    assert steps[-1].text_after.startswith("他背着") and steps[-1].text_after.endswith("京。")


def test_iterative_fill_terminates_when_model_prefers_mask(tmp_path):
    """A model whose favourite prediction is [MASK] must not fill [MASK] with [MASK] forever."""
    from conftest import build_tiny_bert

    directory = build_tiny_bert(tmp_path / "mask-lover", seed=3)
    encoder = load_encoder(str(directory))
    mask_id = encoder.tokenizer.mask_token_id
    predictions = encoder.model.cls.predictions
    with torch.no_grad():
        for bias in {id(b): b for b in (predictions.bias, getattr(predictions.decoder, "bias", None))
                     if b is not None}.values():
            bias[mask_id] = 50.0
    result = fill_mask(encoder, "今天[MASK]好")
    assert result.masks[0].probabilities[mask_id] > 0.9  # the model really prefers [MASK] ...
    assert result.masks[0].candidates[0].token != "[MASK]"  # ... but it is never offered
    steps = iterative_fill(encoder, "今天[MASK][MASK]好")
    assert len(steps) == 2 and "[MASK]" not in steps[-1].text_after


# ---- mlm_corruption ------------------------------------------------------------------------------
@pytest.mark.parametrize("sentence", ["今天天气很好。", "我吃了一个苹果，苹果昨天发布了新手机。他背着包袱去北京。"])
def test_mlm_corruption_fifteen_percent(tiny_bert, sentence):
    tokens = tiny_bert.tokenizer.tokenize(sentence)
    corrupted = mlm_corruption(tiny_bert, sentence, seed=4)
    assert [c.token for c in corrupted] == tokens
    assert sum(c.chosen for c in corrupted) == max(1, round(0.15 * len(tokens)))
    for c in corrupted:
        assert c.chosen == (c.action != "keep")
        if c.action in ("keep", "unchanged"):
            assert c.shown == c.token
        elif c.action == "mask":
            assert c.shown == "[MASK]"
        else:
            assert c.shown not in tiny_bert.tokenizer.all_special_tokens
    assert mlm_corruption(tiny_bert, sentence, seed=4) == corrupted  # a fixed seed is reproducible


def test_mlm_corruption_80_10_10(tiny_bert):
    counts = {"mask": 0, "random": 0, "unchanged": 0}
    for seed in range(600):
        for c in mlm_corruption(tiny_bert, "我吃了一个苹果，苹果昨天发布了新手机。", seed=seed):
            if c.chosen:
                counts[c.action] += 1
    total = sum(counts.values())
    assert counts["mask"] / total == pytest.approx(0.8, abs=0.04)
    assert counts["random"] / total == pytest.approx(0.1, abs=0.03)
    assert counts["unchanged"] / total == pytest.approx(0.1, abs=0.03)


def test_corruption_stats_count_the_same_draws_as_mlm_corruption(tiny_bert):
    sentence = "我吃了一个苹果，苹果昨天发布了新手机。"
    draws = [mlm_corruption(tiny_bert, sentence, seed=seed) for seed in range(500, 700)]
    chosen = [c for draw in draws for c in draw if c.chosen]
    stats = corruption_stats(tiny_bert, sentence, draws=200, first_seed=500)
    assert stats["chosen"] == len(chosen) / sum(len(draw) for draw in draws)
    for action in ("mask", "random", "unchanged"):
        assert stats[action] == sum(c.action == action for c in chosen) / len(chosen)
    assert stats["mask"] + stats["random"] + stats["unchanged"] == pytest.approx(1.0)
    with pytest.raises(LabError):
        corruption_stats(tiny_bert, "  ")


def test_mlm_corruption_rejects_empty(tiny_bert):
    for text in ("", "   "):
        with pytest.raises(LabError) as info:
            mlm_corruption(tiny_bert, text)
        assert info.value.code == "empty_input"


# ---- next-sentence prediction (BertEncoder) ------------------------------------------------------
def test_nsp_probability_and_missing_head(tiny_bert, tiny_mlm_dir):
    p = tiny_bert.next_sentence_probability("今天天气很好。", "我吃了一个苹果。")
    assert 0.0 <= p <= 1.0
    without = load_encoder(str(tiny_mlm_dir))
    with pytest.raises(LabError) as info:
        without.next_sentence_probability("今天天气很好。", "我吃了一个苹果。")
    assert info.value.code == "no_nsp_head"


# ---- whole-word candidates for runs of adjacent masks ------------------------------------------------
@pytest.mark.parametrize(("sentence", "runs"), [
    ("我吃了一个[MASK][MASK]。", [(0, 2)]),
    ("[MASK]吃了[MASK][MASK][MASK]，[MASK][MASK]", [(1, 3), (4, 2)]),
    ("[MASK]和[MASK]", []),
    ("[MASK] [MASK]", []),  # a space between masks separates them
])
def test_mask_runs(sentence, runs):
    assert mask_runs(sentence) == runs


def test_word_candidates_are_joint_chain_probabilities(tiny_bert):
    runs = word_candidates(tiny_bert, "我吃了一个[MASK][MASK]，[MASK]很好。[MASK][MASK][MASK]", top_n=6)
    assert [(r.first, r.length) for r in runs] == [(0, 2), (3, 3)]
    for run in runs:
        assert len(run.words) == 6
        scores = [w.score for w in run.words]
        assert scores == sorted(scores, reverse=True) and sum(scores) <= 1.0 + 1e-9
        for w in run.words:
            assert len(w.word) == run.length and len(w.per_token) == run.length
            assert w.score == pytest.approx(np.prod(w.per_token))
            assert not any(ch in "。，！？" for ch in w.word)
    # the first character's probability is the one fill_mask gives for that mask (same context)
    first = runs[0].words[0]
    slot = fill_mask(tiny_bert, "我吃了一个[MASK][MASK]，[MASK]很好。[MASK][MASK][MASK]", top_k=50).masks[0]
    first_id = tiny_bert.tokenizer.get_vocab()[first.word[0]]
    assert first.per_token[0] == pytest.approx(float(slot.probabilities[first_id]), rel=1e-4)


def test_word_candidates_second_character_sees_the_first(tiny_bert):
    """The second probability is conditioned on the first character: it equals fill_mask on the
    sentence with the first character written in."""
    word = word_candidates(tiny_bert, "我吃了一个[MASK][MASK]。", top_n=1)[0].words[0]
    slot = fill_mask(tiny_bert, f"我吃了一个{word.word[0]}[MASK]。", top_k=1).masks[0]
    vocab = tiny_bert.tokenizer.get_vocab()
    assert word.per_token[1] == pytest.approx(float(slot.probabilities[vocab[word.word[1]]]), rel=1e-4)


def test_word_candidates_without_runs_is_empty(tiny_bert):
    assert word_candidates(tiny_bert, "我吃了一个[MASK]。") == []


def test_proposals_are_whole_words_of_a_run_else_characters(tiny_bert):
    run = "我吃了一个[MASK][MASK]。"
    assert proposals(fill_mask(tiny_bert, run), word_candidates(tiny_bert, run, top_n=4)) == \
        [w.word for w in word_candidates(tiny_bert, run, top_n=4)[0].words]
    single = "今天天气很[MASK]。"
    result = fill_mask(tiny_bert, single, top_k=4)
    assert proposals(result, word_candidates(tiny_bert, single)) == [c.token for c in result.masks[0].candidates]


@pytest.mark.realmodel
def test_a_batch_of_sentences_fills_as_each_alone():
    """fill_masks pads the shorter sentences of one forward pass: each still gets its own masks' candidates."""
    bert = _mini_bert()
    sentences = ["我吃了一个[MASK]果", "他每天早上都喝一杯牛[MASK]，然后去[MASK]校上课。"]
    together = fill_masks(bert, sentences, top_k=3)
    for sentence, batched in zip(sentences, together):
        alone = fill_mask(bert, sentence, top_k=3)
        assert batched.tokens == alone.tokens  # no padding tokens
        assert [m.token_index for m in batched.masks] == [m.token_index for m in alone.masks]
        for a, b in zip(batched.masks, alone.masks):
            assert [c.token for c in a.candidates] == [c.token for c in b.candidates]
            assert [c.score for c in a.candidates] == pytest.approx([c.score for c in b.candidates], rel=1e-4)
