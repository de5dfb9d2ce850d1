"""The BERT trainer's corruption: BERT's 15% / 80-10-10 per token, and whole-word masking (BERT-wwm)."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from transformers import BertTokenizerFast

from core.train.data import NO_PAIR, PairSampler, cached_tokenize, collate_pairs, tokenize_corpus

VOCAB = Path(__file__).resolve().parents[1] / "assets" / "models" / "mini-bert-zh" / "vocab.txt"
TEXT = ["我吃了一个苹果。苹果昨天发布了新手机。北京是中国的首都。他每天早上都喝一杯牛奶。",
        "中华人民共和国成立了。我们去图书馆借书。老师在黑板上写字。小朋友们高高兴兴地上学。"] * 20


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizerFast(vocab=str(VOCAB), do_lower_case=True, tokenize_chinese_chars=True)


def _sampler(tokenizer, whole_word: float, seed: int = 0, single: float = 0.0) -> PairSampler:
    special = {tokenizer.convert_tokens_to_ids(t) for t in tokenizer.all_special_tokens}
    return PairSampler(tokenize_corpus(tokenizer, TEXT, segment=whole_word > 0), len(tokenizer), special,
                       tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id, 128,
                       random.Random(seed), whole_word, single)


def test_segmented_sentences_carry_word_starts(tokenizer):
    sentence = tokenize_corpus(tokenizer, ["我吃了一个苹果。"], segment=True)[0][0]
    assert sentence.shape == (2, 8)
    tokens = tokenizer.convert_ids_to_tokens(sentence[0].tolist())
    words, current = [], ""
    for token, start in zip(tokens, sentence[1]):
        if start and current:
            words.append(current)
            current = ""
        current += token
    words.append(current)
    assert "苹果" in words and "".join(words) == "我吃了一个苹果。"


def _apple_coverage(tokenizer, sampler, examples: int) -> tuple[int, int, float]:
    """(苹果 with one character chosen, 苹果 with both chosen, share of tokens chosen) over ``examples``."""
    split = whole = chosen_total = token_total = 0
    for _ in range(examples):
        corrupted, _, chosen, targets, _ = sampler.example()
        ids = corrupted.copy()
        ids[chosen] = targets
        original = tokenizer.convert_ids_to_tokens(ids.tolist())
        chosen_set = set(chosen.tolist())
        for i in range(len(original) - 1):
            if original[i] == "苹" and original[i + 1] == "果":
                covered = len({i, i + 1} & chosen_set)
                split += covered == 1
                whole += covered == 2
        chosen_total += len(chosen)
        token_total += sum(t not in ("[CLS]", "[SEP]") for t in original)
    return split, whole, chosen_total / token_total


def test_whole_word_masking_masks_words_as_units(tokenizer):
    split, whole, share = _apple_coverage(tokenizer, _sampler(tokenizer, whole_word=1.0), 300)
    assert whole > 0 and split == 0  # 苹果 is never masked as 苹[MASK]
    assert 0.12 < share < 0.18  # about 15% of the tokens


def test_whole_word_corruption_is_80_10_10_per_word(tokenizer):
    sampler = _sampler(tokenizer, whole_word=1.0, seed=3)
    mask_id = tokenizer.mask_token_id
    actions = {"mask": 0, "random": 0, "same": 0}
    mixed = 0
    for _ in range(1500):
        corrupted, _, chosen, targets, _ = sampler.example()
        shown = corrupted[chosen]
        # positions of one multi-token word share one roll: never [MASK] next to an unmasked chosen token
        masked = shown == mask_id
        if masked.any() and not masked.all():
            mixed += 1
        for s, tgt in zip(shown, targets):
            actions["mask" if s == mask_id else "same" if s == tgt else "random"] += 1
    total = sum(actions.values())
    assert 0.75 < actions["mask"] / total < 0.85
    assert 0.06 < actions["random"] / total < 0.14 and 0.06 < actions["same"] / total < 0.14
    assert mixed > 0  # several words per example, each with its own roll


def test_token_masking_is_unchanged_without_segmentation(tokenizer):
    """The held-out evaluation uses the per-token path: same random stream as BERT's original recipe."""
    sampler = _sampler(tokenizer, whole_word=0.0, seed=5)
    reference = _sampler(tokenizer, whole_word=0.0, seed=5)
    for _ in range(50):
        corrupted, _, chosen, targets, _ = sampler.example()
        # the recipe as first written: sample positions, then one roll per chosen position, in order
        a, b, _ = reference.nsp_pair()
        ids = np.concatenate([[reference.cls_id], a, [reference.sep_id], b, [reference.sep_id]])
        candidates = [i for i in range(len(ids)) if ids[i] not in reference.special_ids]
        expected = sorted(reference.rng.sample(candidates, min(max(1, round(0.15 * len(candidates))), len(candidates))))
        shown = ids.copy()
        for pos in expected:
            roll = reference.rng.random()
            if roll < 0.8:
                shown[pos] = reference.mask_id
            elif roll < 0.9:
                shown[pos] = reference.rng.randrange(reference.first_normal_id, reference.vocab_size)
        assert chosen.tolist() == expected and targets.tolist() == ids[expected].tolist()
        assert corrupted.tolist() == shown.tolist()


def test_a_share_of_whole_word_examples_keeps_single_characters_masked_inside_words(tokenizer):
    """With F = 0.5 some examples still mask 苹 or 果 alone: the case the app's character masks ask about."""
    split, whole, _ = _apple_coverage(tokenizer, _sampler(tokenizer, whole_word=0.5, seed=7), 400)
    assert split > 0 and whole > 0


@pytest.mark.parametrize("segment", [False, True])
def test_tokenized_corpus_cache_round_trips_and_follows_the_lines(tokenizer, tmp_path, segment):
    cache = tmp_path / "corpus-tokens.npz"
    fresh = cached_tokenize(tokenizer, TEXT, segment, cache)
    assert cache.exists()
    stamp = cache.stat().st_mtime_ns
    loaded = cached_tokenize(tokenizer, TEXT, segment, cache)
    assert cache.stat().st_mtime_ns == stamp  # read, not rebuilt
    assert len(loaded) == len(fresh)
    for a, b in zip(fresh, loaded):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert x.dtype == y.dtype == np.int32 and np.array_equal(x, y)
    changed = cached_tokenize(tokenizer, TEXT[:-1] + ["今天天气很好。"], segment, cache)
    assert np.array_equal(changed[-1][0], tokenize_corpus(tokenizer, ["今天天气很好。"], segment)[0][0])


@pytest.mark.parametrize("whole_word", [0.0, 1.0])
def test_one_sentence_examples_have_one_segment_and_no_nsp_label(tokenizer, whole_word):
    """--single: [CLS] sentence [SEP], the shape of what the app's users type, with no NSP target."""
    sentences = {s + "。" for line in TEXT for s in line.split("。") if s}
    sampler = _sampler(tokenizer, whole_word, seed=11, single=0.5)
    kinds = {"single": 0, "pair": 0}
    for _ in range(200):
        corrupted, types, chosen, targets, label = sampler.example()
        ids = corrupted.copy()
        ids[chosen] = targets
        seps = int((ids == tokenizer.sep_token_id).sum())
        if label == NO_PAIR:
            kinds["single"] += 1
            assert seps == 1 and ids[-1] == tokenizer.sep_token_id and not types.any()
            assert tokenizer.decode(ids[1:-1].tolist()).replace(" ", "") in sentences
            assert len(chosen) >= 1
        else:
            kinds["pair"] += 1
            assert seps == 2 and types[-1] == 1
    assert kinds["single"] > 60 and kinds["pair"] > 60


def test_batches_of_one_sentence_examples_train_without_the_nsp_term(tokenizer):
    import torch
    from transformers import BertConfig, BertForPreTraining

    from core.train.bert import pretraining_loss

    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=64))
    only_single = _sampler(tokenizer, 0.3, seed=2, single=1.0)
    mixed = _sampler(tokenizer, 0.3, seed=2, single=0.5)
    for sampler in (only_single, mixed):
        batch = collate_pairs([sampler.example() for _ in range(16)])
        loss, mlm_logits, _ = pretraining_loss(model, batch)
        mlm_only = torch.nn.functional.cross_entropy(mlm_logits, batch["mlm_targets"])
        assert torch.isfinite(loss)
        if sampler is only_single:
            assert torch.equal(loss, mlm_only)
        else:
            assert loss > mlm_only  # the pairs still add their NSP loss
