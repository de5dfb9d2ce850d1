"""core.interface.api on the embedded models: the functions the pages use, the shapes its docstrings promise,
LabErrors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from core.compute.occurrences import word_vectors
from core.guard.errors import LabError
from core.interface import api, export
from core.models import cache
from core.vectors.view import occurrence_layers

APPLE = ["我吃了一个苹果。", "苹果昨天发布了新手机。", "今天天气很好。"]


def test_load_goes_through_the_registry(bert):
    assert api.load("mini-bert-zh") is bert is cache.load_encoder("mini-bert-zh")
    assert api.load(bert) is bert
    with pytest.raises(LabError) as err:
        api.load("./no/such/model")
    assert err.value.code == "unknown_model"


def test_masked_lm_refuses_elmo(elmo):
    with pytest.raises(LabError) as err:
        api.load_masked_lm(elmo)
    assert err.value.code == "not_masked_lm" and "mini-elmo-zh" in err.value.message("en", markdown=False)


def test_embed_is_the_pages_word_vectors(bert):
    vectors = api.embed("mini-bert-zh", APPLE, "苹果", labels=["水果", "公司", None])
    assert vectors.stacked().shape == (bert.num_layers, 2, 256)
    assert [(o.sentence_index, o.start, o.end, o.label) for o in vectors.occurrences] == [(0, 5, 7, "水果"),
                                                                                         (1, 0, 2, "公司")]
    assert vectors.missing == [2]
    direct = word_vectors(bert, APPLE, "苹果")
    np.testing.assert_array_equal(vectors.stacked(), direct.stacked())


def test_embed_errors(bert):
    with pytest.raises(LabError) as err:
        api.embed(bert, APPLE, "苹果", labels=["水果"])
    assert err.value.code == "labels_count"
    with pytest.raises(LabError) as err:
        api.embed(bert, [], "苹果")
    assert err.value.code == "empty_input"
    with pytest.raises(LabError) as err:
        api.embed("word2vec-zh", APPLE, "苹果香蕉梨")
    assert err.value.code == "word_oov"


@pytest.mark.parametrize("call, code, fragment", [
    (lambda m: api.embed(m, None, "苹果"), "bad_argument", "sentences must be a list of str, not None"),
    (lambda m: api.embed(m, APPLE, 5), "bad_argument", "word must be str, not int"),
    (lambda m: api.embed(m, [b"\xe8\x8b\xb9\xe6\x9e\x9c"], "苹果"), "bad_argument", "sentences[0] must be str"),
    (lambda m: api.embed(m, b"apple", "苹果"), "bad_argument", "sentences must be a list of str, not bytes"),
    (lambda m: api.embed(m, ["\ud800苹果"], "苹果"), "not_unicode", "sentences[0] is not valid Unicode"),
    (lambda m: api.embed(m, "我吃了一个苹果", "苹果"), "bad_argument", "not str"),  # not split into characters
    (lambda m: api.embed(m, APPLE, "苹果", labels="abc"), "bad_argument", "labels must be"),
    (lambda m: api.fill_mask(m, "我[MASK]了", top_k="5"), "bad_argument", "top_k must be int, not str"),
    (lambda m: api.fill_mask(m, None), "bad_argument", "sentence must be str, not None"),
    (lambda m: api.attentions(m, "我吃了一个苹果", pair=3), "bad_argument", "pair must be str, not int"),
    (lambda m: api.load(42), "bad_argument", "model must be str, not int"),
    (lambda m: next(api.stream_word_vectors(m, [1, 2], "苹果")), "bad_sentence", "Sentence 0: sentences[0] must be"),
    # issue #53 item 4: on main these raised ValueError / TypeError / AttributeError, or returned without error
    (lambda m: api.project(float("nan")), "bad_argument", "vectors must be an embed result"),
    (lambda m: api.project(np.full((2, 3, 4), np.nan)), "bad_argument", "not NaN or infinity"),
    (lambda m: api.project("abc"), "bad_argument", "vectors must be an embed result"),
    (lambda m: api.read_labelled(None), "bad_argument", "path must be str or Path, not None"),
    (lambda m: export.write_projector(None, "unwritten"), "bad_argument", "vectors must be WordVectors"),
    (lambda m: export.write_projector(api.embed(m, APPLE, "苹果"), None), "bad_argument", "path must be str or Path"),
    (lambda m: api.embed(m, dict.fromkeys(APPLE, 1), "苹果"), "bad_argument", "a list of str, not dict"),
    (lambda m: api.embed(m, set(APPLE), "苹果"), "bad_argument", "sentences must be a list of str, not set"),
    (lambda m: api.embed(m, APPLE, "苹果", labels=[5, None, "x"]), "bad_argument", "labels[0] must be str or None"),
])
def test_bad_arguments_raise_lab_errors(tiny_bert, call, code, fragment):
    """On main each of these raised TypeError / AttributeError (or, for one string, read its characters as
    sentences), although the module promises LabError for bad input. The message is plain text by default (on main
    ``err.message("en")`` said ``top\\_k``: Markdown escapes, for the app)."""
    with pytest.raises(LabError) as err:
        call(tiny_bert)
    assert err.value.code == code and fragment in err.value.message("en"), err.value.message("en")
    for lang in ("en", "zh"):
        assert err.value.message(lang) == err.value.message(lang, markdown=False)


def test_embed_caps_the_sentences_it_holds(tiny_bert):
    """On main embed read any number of sentences into memory (the CLI stops at 10,000)."""
    def endless():
        yield from itertools.repeat("苹果", 10_001)
        raise AssertionError("read beyond the cap")  # what main did, until its memory ran out

    with pytest.raises(LabError) as err:
        api.embed(tiny_bert, endless(), "苹果")
    message = err.value.message("en", markdown=False)
    assert err.value.code == "embed_too_many_sentences" and "10,000" in message
    assert "stream_word_vectors" in message and "stream_word_vectors" in err.value.message("zh", markdown=False)


def test_embed_beyond_one_batch_keeps_global_indices(tiny_bert):
    sentences = [f"我吃了一个苹果{i}" if i % 3 else "今天天气很好" for i in range(450)]
    vectors = api.embed(tiny_bert, sentences, "苹果")
    assert [o.sentence_index for o in vectors.occurrences] == [i for i in range(450) if i % 3]
    assert vectors.missing == list(range(0, 450, 3))


def test_stream_reads_lazily(tiny_bert):
    """An endless stream gives its first batch: only one batch is ever held."""
    read = []
    endless = (read.append(i) or f"苹果{i}" for i in itertools.count())
    first = next(api.stream_word_vectors(tiny_bert, endless, "苹果", batch_size=3))
    assert len(first.occurrences) == 3 and len(read) == 3



def test_stream_runs_the_model_on_full_batches_of_sentences_with_the_word(tiny_bert, encode_calls):
    """A rare word in a corpus: the model reads only the sentences that contain it, batch_size at a time (it used
    to read every batch of input lines, mostly to find nothing); the others are listed as missing, in order."""
    corpus = [f"我吃了一个苹果{i}。" if i % 10 == 3 else f"今天天气很好{i}。" for i in range(200)]
    parts = list(api.stream_word_vectors(tiny_bert, corpus, "苹果", batch_size=8))
    assert [len(call) for call in encode_calls] == [8, 8, 4]
    assert all("苹果" in sentence for call in encode_calls for sentence in call)
    assert [o.sentence_index for p in parts for o in p.occurrences] == list(range(3, 200, 10))
    assert [i for p in parts for i in p.missing] == [i for i in range(200) if i % 10 != 3]


def test_stream_holds_at_most_a_bounded_list_of_misses(tiny_bert, monkeypatch, encode_calls):
    monkeypatch.setattr(api, "MISSING_PER_BATCH", 5)
    parts = list(api.stream_word_vectors(tiny_bert, ["今天天气很好。"] * 12, "苹果"))
    assert [len(p.missing) for p in parts] == [5, 5, 2] and not encode_calls

def test_mix_lecture_example_and_word_vectors(elmo):
    identity = np.eye(3)
    np.testing.assert_allclose(api.mix(identity, [0.2, 0.3, 0.5], gamma=2), [0.4, 0.6, 1.0])
    vectors = api.embed(elmo, APPLE, "苹果")
    mixed = api.mix(vectors, [0.2, 0.3, 0.5], gamma=2)
    assert mixed.shape == (2, vectors.stacked().shape[-1])
    np.testing.assert_allclose(mixed, 2 * np.tensordot([0.2, 0.3, 0.5], vectors.stacked().astype(float), axes=1))
    with pytest.raises(LabError) as err:
        api.mix(vectors, [0.5, 0.5], gamma=1)
    assert err.value.code == "bad_mix" and "2 weights for 3 layers" in str(err.value)


def test_project_is_the_pages_frame(bert):
    sentences = APPLE + ["苹果很甜"]  # three occurrences: the page fits its frame on them alone too
    projection = api.project(api.embed(bert, sentences, "苹果"))
    page = occurrence_layers(bert, None, sentences, "苹果")
    assert projection.coords.shape == (bert.num_layers, 3, 2)
    np.testing.assert_allclose(projection.coords, page.coords)
    np.testing.assert_allclose(projection.explained_variance_ratio, page.projection.explained_variance_ratio)
    # two occurrences: the page adds the sentences' other tokens as a background, the API keeps the bare frame
    pair = api.project(api.embed(bert, APPLE, "苹果"))
    np.testing.assert_allclose(pair.coords[:, 0], -pair.coords[:, 1], atol=1e-9)  # mirrored, whatever the cosine
    assert occurrence_layers(bert, None, APPLE, "苹果").background_coords is not None


def test_fill_mask_with_whole_words(bert):
    capital = api.fill_mask(bert, "北京是中国的[MASK]都。", top_k=5)
    assert capital.tokens[0] == "[CLS]" and len(capital.masks) == 1 and capital.words == []
    scores = [c.score for c in capital.masks[0].candidates]
    assert len(scores) == 5 and scores == sorted(scores, reverse=True)
    assert "首" in [c.token for c in capital.masks[0].candidates]
    apple = api.fill_mask(bert, "我吃了一个[mask][MASK]。")
    assert apple.sentence == "我吃了一个[MASK][MASK]。"
    assert apple.words[0].length == 2 and all(len(w.word) == 2 for w in apple.words[0].words)
    with pytest.raises(LabError) as err:
        api.fill_mask(bert, "我吃了一个苹果。")
    assert err.value.code == "no_mask"


def test_attentions_and_bertviz_layout(bert, elmo):
    view = api.attentions(bert, "我吃了一个苹果")
    layers, heads, n = bert.num_layers - 1, bert.model.config.num_attention_heads, 9
    assert view.att.shape == (layers, heads, n, n) and view.head_avg.shape == (layers, n, n)
    np.testing.assert_allclose(view.att.sum(axis=-1), 1.0, atol=1e-4)
    attention, tokens = api.bertviz_attention(bert, "我吃了一个苹果")
    assert isinstance(attention, tuple) and len(attention) == layers and tokens == view.labels
    for j, layer in enumerate(attention):
        assert layer.dtype == torch.float32 and layer.shape == (1, heads, n, n)
        np.testing.assert_allclose(layer[0].numpy(), view.att[j], atol=1e-6)
    pair, pair_tokens = api.bertviz_attention(bert, "我吃了一个苹果", "他去北京")
    assert pair_tokens.count("[SEP]") == 2 and pair[0].shape[-1] == len(pair_tokens)
    with pytest.raises(LabError) as err:
        api.attentions(elmo, "我吃了一个苹果")
    assert err.value.code == "no_attention"
