"""``core.fillmask.view``: the fill-mask page's results, one call each, agree with the core functions they gather."""
from __future__ import annotations

import pytest

from core.fillmask import examples as fx
from core.fillmask.corruption import corruption_stats, mlm_corruption
from core.fillmask.iterative import iterative_fill
from core.fillmask.view import corruption_source, corruption_view, fill_view, next_sentence_view
from core.fillmask.words import proposals
from core.guard.errors import LabError


def test_a_known_example_in_every_input_mode_gives_one_view(bert):
    example = fx.EXAMPLES[0]
    start = example.plain.index(example.word)
    chars = tuple(range(start, start + len(example.word)))
    views = [fill_view(bert, "masked", sentence=example.masked, top_k=5),
             fill_view(bert, "word", plain=example.plain, word=example.word, top_k=5),
             fill_view(bert, "chars", plain=example.plain, chars=chars, top_k=5)]
    assert {view.masked for view in views} == {example.masked}
    view = views[0]
    masks = view.masked.count(bert.mask_token)
    assert len(view.result.masks) == len(view.steps) == masks
    assert all(len(slot.candidates) == 5 for slot in view.result.masks)
    assert view.known is not None and view.known.accepted == fx.lookup(example.masked).accepted
    assert view.proposals == proposals(view.result, view.runs)
    assert bert.mask_token not in view.steps[-1].text_after


def test_filling_one_at_a_time_starts_from_the_view_s_own_forward_pass(tiny_bert, monkeypatch):
    """The first step of BERT filling one mask at a time is the prediction the view already made: two separate
    masks (no run, so no whole-word search) take two forward passes, not three; the steps are unchanged."""
    from core.models.encoders import BertEncoder

    sentence = "我[MASK]了一个苹果[MASK]"
    alone = iterative_fill(tiny_bert, sentence, top_k=5, characters_only=True)
    passes = []
    forward = BertEncoder.forward
    monkeypatch.setattr(BertEncoder, "forward",
                        lambda self, texts, *a, **k: passes.append(list(texts)) or forward(self, texts, *a, **k))
    view = fill_view(tiny_bert, "masked", sentence=sentence, top_k=5)
    assert passes == [[sentence], [view.steps[0].text_after]]
    assert [(s.filled_mask, s.token, s.score, s.text_after) for s in view.steps] == \
        [(s.filled_mask, s.token, s.score, s.text_after) for s in alone]


def test_an_unknown_sentence_has_no_answers_and_bad_input_raises(bert):
    assert fill_view(bert, "masked", sentence="我今天[MASK]了很久。").known is None
    with pytest.raises(LabError):
        fill_view(bert, "masked", sentence="没有掩码的句子")
    with pytest.raises(LabError):
        fill_view(bert, "word", plain="我吃了一个苹果", word="香蕉")


def test_the_corruption_starts_from_a_true_sentence_never_the_model_s_guess(bert):
    example, other = fx.EXAMPLES[0], fx.EXAMPLES[1]
    assert corruption_source("word", f" {example.plain} ", None) == (example.plain, "plain")  # the plain modes
    mine = fill_view(bert, "masked", sentence=example.masked)
    assert mine.mask_token == bert.mask_token
    assert corruption_source("masked", example.plain, mine) == (example.plain, "plain")  # the example, masked
    # a masked sentence the data knows, beside another plain sentence: its own true sentence
    assert corruption_source("masked", other.plain, mine) == (mine.known.sentence, "answer")
    assert mine.known.sentence == example.plain
    unknown = fill_view(bert, "masked", sentence="我今天[MASK]了很久。")
    assert corruption_source("masked", example.plain, unknown) == (None, "unknown")
    assert corruption_source("masked", example.plain, None) == (None, None)  # nothing computed


def test_corruption_view_counts_its_own_draw(bert):
    view = corruption_view(bert, "我吃了一个苹果，味道很好。", seed=3)
    assert view.tokens == mlm_corruption(bert, "我吃了一个苹果，味道很好。", seed=3)
    assert view.chosen == sum(view.count(action) for action in ("mask", "random", "unchanged")) >= 1
    assert view.stats == pytest.approx(corruption_stats(bert, "我吃了一个苹果，味道很好。"))


def test_next_sentence_view_labels_example_pairs_only(bert):
    pair = fx.NSP_EXAMPLES[0]
    view = next_sentence_view(bert, pair.first, pair.second)
    assert view.label is pair.is_next and 0.0 <= view.p_next <= 1.0
    assert view.judged_next == (view.p_next > 0.5)
    assert next_sentence_view(bert, pair.first, "完全无关的一句话。").label is None
    assert next_sentence_view(bert, "我的\u200b名字", "叫小明。").notes.control == ["U+200B"]
