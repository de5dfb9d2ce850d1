"""core.views.objectives on the embedded models: the biLM's forward/backward predictions, masked prediction,
and the right-context test (ELMo's forward half never moves, its backward half and every BERT layer do);
plus the two CLI subcommands that reproduce the page's numbers."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from core.__main__ import main
from core.fillmask.prediction import fill_mask
from core.guard.errors import LabError
from core.models.catalogue import DEFAULT_BERT, DEFAULT_ELMO
from core.views import objectives as obj

SENTENCE = "我吃了一个苹果"
pytestmark = pytest.mark.usefixtures("embedded_elmo_and_bert")
PAIRS = (("苹果昨天发布了新手机", "苹果昨天掉在了地上"), ("我吃了一个苹果", "我吃了一个苹果派"))


@pytest.fixture(scope="module")
def reading(elmo):
    return obj.bilm_reading(elmo, SENTENCE)


# ---- the biLM ----------------------------------------------------------------------------------------
def test_language_model_is_what_the_biLM_trains(elmo):
    """ElmoEncoder.language_model gives exactly the predictions BiLM.lm_losses scores."""
    ids, offsets, following, preceding = elmo.language_model(SENTENCE)
    assert elmo.tokenizer.convert_ids_to_tokens(ids) == ["[CLS]", *SENTENCE, "[SEP]"]
    assert following.shape == preceding.shape == (len(ids), elmo.tokenizer.vocab_size)
    np.testing.assert_allclose(following.sum(-1), 1.0, atol=1e-4)
    forward_nll = -np.mean([math.log(following[t, ids[t + 1]]) for t in range(len(ids) - 1)])
    backward_nll = -np.mean([math.log(preceding[t, ids[t - 1]]) for t in range(1, len(ids))])
    with torch.inference_mode():
        fwd, bwd, _ = elmo.model.lm_losses(torch.tensor([ids]), torch.tensor([len(ids)]))
    assert forward_nll == pytest.approx(float(fwd), rel=1e-4)
    assert backward_nll == pytest.approx(float(bwd), rel=1e-4)


def test_bilm_reading_every_character(elmo, reading):
    assert reading.tokens == list(SENTENCE) and reading.offsets == [(i, i + 1) for i in range(len(SENTENCE))]
    ids, _, following, preceding = elmo.language_model(SENTENCE)
    specials = set(elmo.tokenizer.all_special_tokens)
    for k, (fwd, bwd) in enumerate(zip(reading.forward, reading.backward)):
        # token k+1 of the ids (after [CLS]): forward from the position before it, backward from the one after
        assert fwd.actual == pytest.approx(float(following[k, ids[k + 1]]))
        assert bwd.actual == pytest.approx(float(preceding[k + 2, ids[k + 1]]))
        for prediction, distribution in ((fwd, following[k]), (bwd, preceding[k + 2])):
            scores = [c.score for c in prediction.candidates]
            assert len(scores) == obj.TOP_K and scores == sorted(scores, reverse=True)
            assert not specials & {c.token for c in prediction.candidates}
            assert prediction.rank == int((distribution > distribution[ids[k + 1]]).sum()) + 1
            if prediction.rank == 1:
                assert prediction.candidates[0].token == SENTENCE[k]
    for direction, predictions in (("forward", reading.forward), ("backward", reading.backward)):
        assert reading.log_likelihood(direction) == pytest.approx(sum(math.log(p.actual) for p in predictions))
        assert reading.log_likelihood(direction) < 0


def test_forward_predictions_never_see_the_right(elmo):
    """Appending text changes no forward prediction of the shared characters, but backward ones."""
    short, long = (obj.bilm_reading(elmo, text) for text in PAIRS[1])
    n = len(short.tokens)
    assert [p.actual for p in short.forward] == [p.actual for p in long.forward[:n]]
    assert [[c.token for c in p.candidates] for p in short.forward] == \
           [[c.token for c in p.candidates] for p in long.forward[:n]]
    assert [p.actual for p in short.backward] != [p.actual for p in long.backward[:n]]


def test_masked_reading_is_fill_mask_at_that_character(bert, reading):
    position = SENTENCE.index("苹")
    masked = obj.masked_reading(bert, SENTENCE, reading.offsets[position], "苹")
    slot = fill_mask(bert, "我吃了一个[MASK]果", top_k=obj.TOP_K).masks[0]
    assert [c.token for c in masked.candidates] == [c.token for c in slot.candidates]
    assert masked.actual == pytest.approx(float(slot.probabilities[bert.tokenizer.get_vocab()["苹"]]))
    assert masked.rank >= 1
    unknown = obj.masked_reading(bert, SENTENCE, reading.offsets[position], "no-such-token")
    assert unknown.actual is None and unknown.rank is None and unknown.candidates


def test_masked_readings_and_where_each_objective_is_surer(bert, reading):
    every = obj.masked_readings(bert, SENTENCE, tuple(reading.offsets), tuple(reading.tokens))
    assert len(every) == len(reading.tokens)
    for k, prediction in enumerate(every):
        one = obj.masked_reading(bert, SENTENCE, reading.offsets[k], reading.tokens[k])
        # one batched forward pass: the same numbers up to float rounding of a larger matrix product
        assert prediction.actual == pytest.approx(one.actual, rel=1e-4) and prediction.rank == one.rank
    surer, others = obj.surer_positions(reading.forward, every)
    assert sorted(surer + others) == list(range(len(reading.tokens)))  # every character is known to both
    assert all(every[k].actual > reading.forward[k].actual for k in surer)
    assert all(every[k].actual <= reading.forward[k].actual for k in others)


def test_the_pages_examples_hold(bert, reading):
    """What the texts say of the default sentence: 果 after 苹 is almost certain from the left but not from the
    right (obj.bilm.read); 苹 is hardly guessable from the left, and BERT, seeing 果, gives it more
    (present.note.objective)."""
    guo, ping = SENTENCE.index("果"), SENTENCE.index("苹")
    assert reading.forward[guo].actual > 0.9 > reading.backward[guo].actual
    assert reading.forward[ping].actual < 0.05
    assert obj.masked_reading(bert, SENTENCE, reading.offsets[ping], "苹").actual > reading.forward[ping].actual


def test_surer_positions_leaves_out_unscored_tokens():
    def p(actual):
        return obj.Prediction([], actual, None if actual is None else 1)

    left = [p(0.9), p(0.1), p(None), p(0.4), p(0.2)]
    masked = [p(0.5), p(0.2), p(0.3), p(None), p(0.2)]
    assert obj.surer_positions(left, masked) == ([1], [0, 4])  # a tie is not "surer"


# ---- shallow concatenation vs deep bidirectionality ----------------------------------------------------
@pytest.mark.parametrize("first, second", PAIRS)
def test_elmo_forward_halves_unchanged_bert_changes(elmo, bert, first, second):
    moved = obj.measure_right_context(elmo, bert, first, second)
    shared = moved.shared
    assert first.startswith(shared) and second.startswith(shared) and moved.tokens == list(shared)
    for metric in obj.METRICS:
        forward, backward, deep = moved.elmo_forward[metric], moved.elmo_backward[metric], moved.bert[metric]
        assert forward.shape == backward.shape == (3, len(shared)) and deep.shape == (5, len(shared))
        assert np.all(forward == 0.0), "ELMo's forward LSTM never reads to the right: not one bit may change"
        assert np.all(backward[0] == 0.0) and np.all(backward[1:] > 1e-4)
        assert np.all(deep[0] < 1e-6), "BERT's embedding layer has no context"
        assert np.all(deep[1:] > 1e-4), "every BERT layer of every shared token moves"
    assert moved.largest("elmo_forward", first_layer=0) == 0.0
    assert moved.smallest("bert") > 1e-4 and moved.smallest("elmo_backward") > 1e-4


def test_the_forward_half_is_the_encoders_own_layers(elmo, bert):
    first, second = PAIRS[0]
    moved = obj.measure_right_context(elmo, bert, first, second)
    a, b = elmo.encode([first, second])
    half = a.layers.shape[-1] // 2
    np.testing.assert_array_equal(a.layers[:, 1:5, :half], b.layers[:, 1:5, :half])
    expected = obj.movement(a.layers[:, 1:5, half:], b.layers[:, 1:5, half:])
    np.testing.assert_allclose(moved.elmo_backward["cosine"], expected["cosine"])


def test_the_plain_reading_of_the_lecture_pair_is_computed(elmo, bert):
    """The page's answer on the lecture's pair (issue #44): the shipped models show the lecture's contrast."""
    moved = obj.measure_right_context(elmo, bert, *PAIRS[0])
    reading = obj.deep_reading(moved)
    assert reading.verdict == "deep"
    assert reading.forward == moved.largest("elmo_forward") == 0.0
    assert reading.bert == moved.smallest("bert") > 1e-4 and reading.backward == moved.smallest("elmo_backward")
    for token in range(len(moved.tokens)):  # one character's reading: ②'s figures for it
        one = obj.deep_reading(moved, "l2", token)
        assert one.verdict == "deep" and one.forward == moved.largest("elmo_forward", "l2", first_layer=0, token=token)
        assert (one.backward, one.bert) == (moved.smallest("elmo_backward", "l2", token=token),
                                            moved.smallest("bert", "l2", token=token))


def test_the_plain_reading_flips_when_the_measurement_does_not_show_the_contrast(elmo, bert):
    """A synthetic case: a forward half that moved, or a BERT that did not, is no evidence of the lecture's contrast."""
    moved = obj.measure_right_context(elmo, bert, *PAIRS[0])
    leaky = dataclasses.replace(moved, elmo_forward={m: a + 0.01 for m, a in moved.elmo_forward.items()})
    assert obj.deep_reading(leaky).verdict == "other" and obj.deep_reading(leaky).forward == pytest.approx(0.01)
    frozen = dataclasses.replace(moved, bert={m: np.zeros_like(a) for m, a in moved.bert.items()})
    assert obj.deep_reading(frozen).verdict == "other"


def test_movement_metrics():
    u = np.array([[1.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    v = np.array([[0.0, 2.0], [3.0, 4.0], [-1.0, -1.0]])
    moved = obj.movement(u, v)
    np.testing.assert_allclose(moved["cosine"], [1.0, 0.0, 2.0])
    np.testing.assert_allclose(moved["l2"], [math.sqrt(5), 0.0, 2.0])
    assert moved["cosine"][1] == 0.0 and moved["l2"][1] == 0.0  # identical vectors: exactly 0


@pytest.mark.parametrize("first, second, code", [
    ("", "苹果", "empty_input"), ("苹果", "   ", "empty_input"), ("苹果" * 31, "苹果", "too_long"),
    ("苹果昨天", "苹果昨天", "same_text"), ("今天天气很好", "苹果昨天掉在了地上", "no_shared_prefix"),
    (" 今天", " 明天", "no_shared_prefix"), ("我吃了[MASK]", "我吃了个", "special_in_text"),
    ("我吃了一个苹果", "我吃了 [ cls ]", "special_in_text"),
])
def test_bad_pairs(first, second, code):
    with pytest.raises(LabError) as info:
        obj.check_pair(first, second)
    assert info.value.code == code
    assert info.value.message("zh") and info.value.message("en")


def test_bad_sentences(elmo):
    for text, code in (("", "empty_input"), ("好" * 61, "too_long"), ("[MASK][MASK]", "special_in_text"),
                       ("\x07\x1b", "empty_input")):
        with pytest.raises(LabError) as info:
            obj.bilm_reading(elmo, text)
        assert info.value.code == code, text
    emoji = obj.bilm_reading(elmo, "我吃了🍎")  # an unknown character: no probability, not in the likelihood
    assert emoji.tokens[-1] == "[UNK]" and emoji.forward[-1].actual is None and emoji.backward[-1].rank is None
    assert emoji.log_likelihood("forward") == pytest.approx(sum(math.log(p.actual) for p in emoji.forward[:-1]))
    assert obj.is_chinese("I ate 苹果") and not obj.is_chinese("I ate an apple.")


# ---- the command line ------------------------------------------------------------------------------------
def test_cli_bilm(capsys, reading):
    assert main(["bilm", "--bert", DEFAULT_BERT, "--top-k", "3", SENTENCE]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sentence"] == SENTENCE and out["model"] == DEFAULT_ELMO
    assert [p["token"] for p in out["positions"]] == list(SENTENCE)
    assert out["log_likelihood"]["forward"] == pytest.approx(reading.log_likelihood("forward"), abs=1e-5)
    first = out["positions"][0]
    assert len(first["forward"]["candidates"]) == 3 and first["masked"]["rank"] >= 1
    assert first["forward"]["actual"] == pytest.approx(reading.forward[0].actual, abs=1e-6)


def test_cli_right_context(capsys):
    assert main(["right-context", *PAIRS[0]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shared"] == "苹果昨天" and out["tokens"] == list("苹果昨天")
    assert out["summary"]["elmo_forward_max"] == 0.0 and out["summary"]["bert_min"] > 0
    assert np.all(np.array(out["movement"]["l2"]["elmo_forward"]) == 0.0)
    assert len(out["movement"]["cosine"]["bert"]) == 5


@pytest.mark.parametrize("argv", [["right-context", "今天天气很好", "苹果昨天"], ["bilm", "[MASK]"],
                                  ["bilm", "--top-k", "0", "苹果"],
                                  ["right-context", "--bert", DEFAULT_ELMO, "苹果", "苹"]])
def test_cli_errors(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
