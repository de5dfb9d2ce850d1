"""The fill-mask page's examples, default sentence, scenes and NSP pairs teach their point with the
shipped mini-bert-zh: judged against the accepted answers and labels kept in core/fillmask/examples.py."""
from __future__ import annotations

import pytest

from core.fillmask import examples as fx
from core.fillmask.iterative import iterative_fill
from core.fillmask.masks import masked_input
from core.fillmask.nsp import next_sentence
from core.fillmask.prediction import fill_mask
from core.fillmask.scoring import candidate_scores
from core.fillmask.words import proposals, word_candidates
from core.models.cache import load_encoder
from core.models.catalogue import list_models
from ui import lecture_scenes as pres


@pytest.fixture(scope="module")
def mini_bert():
    info = next((m for m in list_models() if m.name == "mini-bert-zh"), None)
    if info is None or not info.available:
        pytest.skip("mini-bert-zh is not available here")
    return load_encoder("mini-bert-zh")


def _filled_word(masked: str, filled: str) -> str:
    """What the masks of ``masked`` became in ``filled``."""
    before, after = masked.split(fx.MASK)[0], masked.split(fx.MASK)[-1]
    return filled[len(before):len(filled) - len(after)]


def _assert_teaches(encoder, masked: str) -> None:
    """The page's two results for ``masked`` show an accepted answer: as the model's first candidate (①
    the whole words of a run of masks, else the characters: the page's ✓) and as the step-by-step
    filling's end (②)."""
    known = fx.lookup(masked)
    assert known is not None, f"{masked}: no accepted answers in the data"
    proposed = proposals(fill_mask(encoder, masked), word_candidates(encoder, masked))
    assert fx.answer_rank(proposed, known.accepted) == 1, f"{masked}: {proposed} does not start with {known.accepted}"
    final = iterative_fill(encoder, masked)[-1].text_after
    assert _filled_word(masked, final) in known.accepted, f"{masked}: filled step by step as {final}"


@pytest.mark.parametrize("example", fx.EXAMPLES, ids=lambda e: e.masked)
def test_every_example_teaches_its_point(mini_bert, example):
    # the page masks the example's word with the model's tokenizer: the same sentence as the data's
    assert masked_input(mini_bert, "word", plain=example.plain, word=example.word) == example.masked
    assert example.word in example.accepted and fx.lookup(example.masked).sentence == example.plain
    _assert_teaches(mini_bert, example.masked)


@pytest.mark.parametrize("scene", [s for s in pres.SCENES if s.url_path == "fill-mask"], ids=lambda s: s.id)
def test_every_fill_mask_scene_teaches_its_point(mini_bert, scene):
    _assert_teaches(mini_bert, scene.query["sentence"])


def test_default_candidates_prefer_an_accepted_answer(mini_bert):
    default = fx.EXAMPLES[0]
    scored = candidate_scores(mini_bert, default.masked, list(fx.DEFAULT_CANDIDATES))
    assert all(s.score is not None for s in scored)
    best = max(scored, key=lambda s: s.score or 0.0)
    assert best.word in default.accepted
    assert any(word not in default.accepted for word in fx.DEFAULT_CANDIDATES)  # a wrong one to compare with


@pytest.mark.parametrize("pair", fx.NSP_EXAMPLES, ids=lambda p: "IsNext" if p.is_next else "NotNext")
def test_nsp_examples_are_judged_right(mini_bert, pair):
    p = next_sentence(mini_bert, pair.first, pair.second)
    assert (p > 0.5) == pair.is_next, f"P(IsNext) = {p:.3f}"


def test_nsp_examples_show_both_labels_and_the_default_is_next():
    assert fx.NSP_EXAMPLES[0].is_next
    assert {pair.is_next for pair in fx.NSP_EXAMPLES} == {True, False}
    first = fx.NSP_EXAMPLES[0]
    assert fx.nsp_label(first.first, first.second) is True
    assert fx.nsp_label(first.first, "随便一句话。") is None


# ---- the data's answers, not the model's: what the page knows about a masked sentence -----------------
def test_lookup_restores_the_true_sentence_from_the_data():
    # the demo set's sentence: the accepted answer 首, whatever the model guesses
    known = fx.lookup("北京是中国的[MASK]都。")
    assert known.accepted == ("首",) and known.sentence == "北京是中国的首都。"
    assert known.source == fx.DEMO_FILE.name
    assert fx.lookup("北京是中国的<mask>都。", "<mask>") == known
    assert fx.lookup("今天[MASK]很好。") is None
    example = fx.EXAMPLES[0]
    assert fx.lookup(example.masked) == fx.Known(example.accepted, example.plain, "examples")
    for path in fx.CHECK_SETS.values():
        for masked, _ in fx.answer_set(path):
            true = fx.lookup(masked).sentence
            assert fx.MASK not in true and len(true) == len(masked) - masked.count(fx.MASK) * (len(fx.MASK) - 1)


def test_answer_rank():
    assert fx.answer_rank(["成", "首", "人"], ("首",)) == 2
    assert fx.answer_rank(["成", "人"], ("首",)) is None
    assert fx.answer_rank([], ("首",)) is None
