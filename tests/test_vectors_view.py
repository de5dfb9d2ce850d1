"""core.vectors (+ core.content.sentence_sets, core.figures.vectors): the pure functions behind the two vector pages.

Contextual vectors come from the tiny random BERT of conftest.py; static vectors from a tiny
word2vec (``model_support.build_tiny_static``, also used by the page tests). The embedded
models are exercised when they exist (skipped with the registry's reason otherwise).
"""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from core.compute import geometry
from core.compute.mixing import (
    PRESETS,
    format_vector,
    layer_normalise,
    pre_softmax_from_normalised,
    scalar_mix,
    softmax,
)
from core.compute.stats import wilson_interval
from core.content import sentence_sets as scenes
from core.figures import vectors as figs
from core.guard.errors import LabError
from core.guard.safe_text import csv_safe, md_escape
from core.vectors.export import export_rows, to_csv, to_json
from core.vectors.mix import mix_view
from core.vectors.parsing import parse_input
from core.vectors.projection import joint_projection, project_layers
from core.vectors.view import MIN_OWN_FRAME, STATIC_NEIGHBOURS_K, highlight, occurrence_layers
from model_support import build_tiny_static


@pytest.fixture(scope="module")
def tiny_static(tmp_path_factory):
    from core.models.encoders import StaticEncoder

    return StaticEncoder("tiny-w2v", build_tiny_static(tmp_path_factory.mktemp("tiny-w2v")))


APPLE = ["水果|我吃了一个苹果", "公司|苹果昨天发布了新手机", "水果|苹果是水果", "公司|苹果公司发布了手机",
         "今天天气很好"]


# ---- parse_input --------------------------------------------------------------------------------
def test_parse_input_labels_and_blank_lines():
    parsed = parse_input("\n".join(APPLE) + "\n\n   \n", " 苹果 ")
    assert parsed.sentences[0] == "我吃了一个苹果"
    assert parsed.labels == ["水果", "公司", "水果", "公司", None]
    assert parsed.word == "苹果"
    assert parsed.has_labels
    assert not parse_input("我吃了一个苹果\n苹果昨天发布了新手机", "苹果").has_labels


def test_parse_input_strips_control_characters():
    parsed = parse_input("我吃了\x00一个苹果\x07\r\n苹\x1b果\t手机", "苹\x00果")
    assert parsed.sentences == ["我吃了一个苹果", "苹果 手机"]
    assert parsed.word == "苹果"
    assert parsed.removed_controls == 4


@pytest.mark.parametrize(("text", "word", "code"), [
    ("", "苹果", "empty_input"),
    ("   \n \t \n", "苹果", "empty_input"),
    ("我吃了一个苹果", "", "empty_word"),
    ("我吃了一个苹果", "   ", "empty_word"),
    ("我吃了一个苹果", "\x00\x01", "empty_word"),
    ("苹" * 5000, "苹果", "too_long"),  # one line over MAX_LINE_CHARS
    ("苹果\n" * 6000, "苹果", "too_long"),  # the whole box over MAX_TEXT_CHARS
    ("苹果\n" * 201, "苹果", "too_many_sentences"),
    ("我吃了一个苹果", "苹" * 21, "too_long"),
])
def test_parse_input_errors(text, word, code):
    with pytest.raises(LabError) as info:
        parse_input(text, word)
    assert info.value.code == code
    assert info.value.message("zh") and info.value.message("en")


def test_escaping_helpers():
    assert highlight("a<b>苹果&c", 4, 6) == "a&lt;b&gt;【苹果】&amp;c"
    assert highlight("a<b>苹果", 4, 6, escape=False) == "a<b>【苹果】"
    assert md_escape("**x** [l](javascript:1) <script> :red[x] &amp;") == \
        r"\*\*x\*\* \[l\]\(javascript\:1\) \<script\> \:red\[x\] \&amp;"
    assert csv_safe("=cmd()") == "'=cmd()" and csv_safe("苹果") == "苹果"


# ---- occurrence_layers ------------------------------------------------------------------------------
def test_occurrence_layers_contextual(tiny_bert):
    parsed = parse_input("\n".join(APPLE), "苹果")
    calls = []

    def encode(texts):
        calls.append(list(texts))
        return tiny_bert.encode(texts)

    view = occurrence_layers(tiny_bert, None, parsed.sentences, parsed.word, parsed.labels, encode=encode)
    assert calls == [parsed.sentences[:4]]  # only the sentences that contain the word are encoded
    assert view.missing == [4]
    assert view.num_occurrences == 4 and view.ids == ["1", "2", "3", "4"]
    assert view.occurrence_labels == ["水果", "公司", "水果", "公司"]
    assert view.hover[0] == "我吃了一个【苹果】"
    num_layers = tiny_bert.num_layers
    assert view.layer_names == tiny_bert.layer_names
    stacked = view.stacked()
    assert stacked.shape[:2] == (num_layers, 4)
    # the vector of an occurrence is the mean of its characters' vectors
    encoding = tiny_bert.encode([parsed.sentences[1]])[0]
    tokens = [i for i, (s, e) in enumerate(encoding.offsets) if s < 2 and e > 0 and not encoding.special[i]]
    assert np.allclose(stacked[:, 1], encoding.layers[:, tokens].mean(axis=1), atol=1e-5)
    # one joint projection: every layer's coordinates are that frame applied to the layer
    assert view.coords.shape == (num_layers, 4, 2)
    for j in range(num_layers):
        centred = stacked[j] - stacked[j].mean(axis=0)
        assert np.allclose(view.coords[j], centred @ view.projection.components.T, atol=1e-6)
    assert 0 < view.projection.explained_variance_ratio.sum() <= 1 + 1e-9
    # cosine matrices, neighbours and accuracy per layer, raw and centred
    for centre in (False, True):
        assert view.cosine[centre].shape == (num_layers, 4, 4)
        assert np.allclose(np.diagonal(view.cosine[centre], axis1=1, axis2=2), 1.0)
        assert np.allclose(view.cosine[centre][-1], geometry.cosine_matrix(stacked[-1], centre=centre))
        assert len(view.neighbours[centre]) == num_layers
        assert [k for k, _ in view.neighbours[centre][-1][0]][0] != 0
        assert len(view.accuracy[centre]) == num_layers
        expected = geometry.loo_nn_accuracy(stacked[-1], view.occurrence_labels, centre=centre)
        assert view.accuracy[centre][-1] == expected
    assert view.static is None and view.static_map is None and not view.oov


def test_repeated_word_gets_two_ids(tiny_bert):
    view = occurrence_layers(tiny_bert, None, ["苹果苹果", "我吃了一个苹果"], "苹果")
    assert view.ids == ["1·1", "1·2", "2"]


def test_occurrence_layers_static(tiny_static):
    parsed = parse_input("\n".join(APPLE), "苹果")
    view = occurrence_layers(None, tiny_static, parsed.sentences, parsed.word, parsed.labels)
    assert view.contextual is None and view.num_occurrences == 0
    occs = view.static.occurrences
    assert len(occs) == 4
    first = occs[0].layers
    assert all(np.array_equal(o.layers, first) for o in occs)  # ONE vector for every sentence
    assert view.static_map.words[0] == "苹果" and len(view.static_map.words) == 1 + STATIC_NEIGHBOURS_K
    assert view.static_map.coords.shape == (1 + STATIC_NEIGHBOURS_K, 2)
    assert len(view.static_hover) == 4 and view.static_hover[1] == "【苹果】昨天发布了新手机"
    # identical vectors: all others tie and share the vote; each sees 1 of 3 others with its sense
    assert view.static_accuracy[False] == pytest.approx(1 / 3)
    assert view.missing == [4]


def test_oov_static_but_contextual_still_works(tiny_bert, tiny_static):
    sentences = ["很多公司都在谈论元宇宙", "他想在元宇宙里开店"]
    view = occurrence_layers(tiny_bert, tiny_static, sentences, "元宇宙")
    assert view.oov and view.static.occurrences == [] and view.static_map is None
    assert view.num_occurrences == 2  # characters still give vectors ([UNK] pieces for unknown ones)


def test_word_nowhere(tiny_bert, tiny_static):
    calls = []
    view = occurrence_layers(tiny_bert, tiny_static, ["我吃了一个苹果"], "香蕉",
                                encode=lambda texts: calls.append(texts) or tiny_bert.encode(texts))
    assert calls == [] and view.missing == [0] and view.num_occurrences == 0 and view.coords is None
    assert not view.oov and view.static_map is None


def test_single_occurrence(tiny_bert):
    view = occurrence_layers(tiny_bert, None, ["我吃了一个苹果"], "苹果")
    assert view.num_occurrences == 1 and view.coords.shape == (tiny_bert.num_layers, 1, 2)
    assert view.neighbours[False][0] == [[]] and view.accuracy[False] == [None] * tiny_bert.num_layers


@pytest.mark.parametrize("word", ["<script>alert(1)</script>", "😀", "蘋果", "apple", "APPLE"])
def test_odd_words(tiny_bert, tiny_static, word):
    sentences = [f"我吃了一个{word}", "I like apple pie", "<b>苹果</b>"]
    view = occurrence_layers(tiny_bert, tiny_static, sentences, word)
    assert all("<script>" not in h for h in view.hover)
    assert view.oov  # none of these is in the tiny word2vec
    if word.lower() == "apple":
        assert view.num_occurrences == 2 and view.missing == [2]


def test_labels_length_checked(tiny_bert):
    with pytest.raises(ValueError):
        occurrence_layers(tiny_bert, None, ["苹果"], "苹果", labels=["a", "b"])


# ---- mix_view -----------------------------------------------------------------------------------
IDENTITY_STACK = np.identity(3)[:, None, :]  # h_0, h_1, h_2 of one token: (L+1, n=1, dim=3)


@pytest.mark.parametrize(("name", "expected"), [
    ("worked_example", "[0.4, 0.6, 1.0]"), ("syntax", "[1.0, 0.8, 0.2]"), ("semantics", "[0.2, 0.6, 1.2]"),
])
def test_mix_view_lecture_numbers(name, expected):
    s, gamma, _ = PRESETS[name]
    direct = mix_view(IDENTITY_STACK, s, gamma, False, [None])
    assert format_vector(direct.mixed[0]) == expected
    # the page's sliders hold pre-softmax values; their softmax is exactly the lecture's s
    via_sliders = mix_view(IDENTITY_STACK, pre_softmax_from_normalised(s), gamma, True, [None])
    assert np.allclose(via_sliders.s, s, atol=1e-12)
    assert np.allclose(via_sliders.mixed, direct.mixed, atol=1e-12)


def test_mix_view_uniform_and_direct_mode():
    uniform = mix_view(IDENTITY_STACK, [0.0, 0.0, 0.0], 1.0, True, [None])
    assert np.allclose(uniform.s, 1 / 3)
    one_hot = mix_view(IDENTITY_STACK, [0.0, 0.0, 1.0], 1.0, False, [None])
    assert one_hot.s.tolist() == [0.0, 0.0, 1.0] and one_hot.mixed[0].tolist() == [0.0, 0.0, 1.0]
    scaled = mix_view(IDENTITY_STACK, [0.5, 0.5, 1.0], 1.0, False, [None])  # normalised by the sum
    assert np.allclose(scaled.s, [0.25, 0.25, 0.5])
    for bad in ([0.0, 0.0, 0.0], [-0.1, 0.5, 0.6]):
        with pytest.raises(LabError) as info:
            mix_view(IDENTITY_STACK, bad, 1.0, False, [None])
        assert info.value.code == "bad_weights"
    with pytest.raises(LabError) as info:
        mix_view(IDENTITY_STACK, [0.0, 0.0], 1.0, True, [None])  # wrong number of weights
    assert info.value.code == "weights_count" and "3" in info.value.message("zh")
    with pytest.raises(LabError):
        mix_view(IDENTITY_STACK, [0.0, 0.0, 0.0], float("nan"), True, [None])


def test_mix_view_on_real_layers(tiny_bert):
    parsed = parse_input("\n".join(APPLE), "苹果")
    view = occurrence_layers(tiny_bert, None, parsed.sentences, parsed.word, parsed.labels)
    stack = view.stacked()
    n_layers = stack.shape[0]
    w = np.linspace(-1, 1, n_layers)
    mix = mix_view(stack, w, 1.5, True, view.occurrence_labels, view.projection)
    s = np.exp(w) / np.exp(w).sum()
    assert np.allclose(mix.mixed, 1.5 * np.tensordot(s, stack, axes=1), atol=1e-5)
    # linear mix in a fixed frame: the mixed point is γ × the s-weighted average of its layer points
    assert np.allclose(mix.coords, 1.5 * np.tensordot(s, view.coords, axes=1), atol=1e-5)
    # γ does not change cosine-based accuracy
    other = mix_view(stack, w, 0.3, True, view.occurrence_labels, view.projection)
    assert other.accuracy == mix.accuracy
    # a one-hot mix reproduces the single layer's accuracy
    last = mix_view(stack, np.eye(n_layers)[-1], 1.0, False, view.occurrence_labels, view.projection)
    assert last.accuracy == view.accuracy[False][-1]
    # without a projection one is fitted the same way
    assert np.allclose(mix_view(stack, w, 1.5, True, view.occurrence_labels).coords, mix.coords, atol=1e-6)
    assert np.allclose(mix.layer_coords, view.coords, atol=1e-6)  # the page's grey markers, same frame


def test_mix_view_with_standardised_layers(tiny_bert):
    """layer_norm mixes AllenNLP-standardised layers, in a frame fitted on them, whose grey markers are the
    standardised layers: the mixed point stays γ × the s-weighted average of its own layer points."""
    parsed = parse_input("\n".join(APPLE), "苹果")
    view = occurrence_layers(tiny_bert, None, parsed.sentences, parsed.word, parsed.labels)
    stack = view.stacked() * np.array([50.0, 1.0, 1.0])[:, None, None]  # one layer far longer than the others
    w = [0.0, 0.0, 0.0]
    raw = mix_view(stack, w, 2.0, True, view.occurrence_labels)
    norm = mix_view(stack, w, 2.0, True, view.occurrence_labels, layer_norm=True)
    assert np.allclose(norm.mixed, scalar_mix(stack, w, 2.0, pre_softmax=True, do_layer_norm=True), atol=1e-9)
    assert np.allclose(norm.mixed, mix_view(view.stacked(), w, 2.0, True, [None] * 4, layer_norm=True).mixed,
                       atol=1e-6)  # the scales are gone ...
    assert not np.allclose(raw.mixed / 50, mix_view(view.stacked(), w, 2.0, True, [None] * 4).mixed, atol=1e-3)
    frame = joint_projection(layer_normalise(stack))
    assert np.allclose(norm.layer_coords, project_layers(frame, layer_normalise(stack)), atol=1e-9)
    assert np.allclose(norm.coords, 2.0 * norm.layer_coords.mean(axis=0), atol=1e-9)
    assert np.allclose(norm.explained, frame.explained_variance_ratio)
    assert raw.layer_accuracy == view.accuracy[False]  # the raw layers alone, as the page's view scores them
    assert norm.layer_accuracy == [geometry.loo_nn_accuracy(layer, view.occurrence_labels)
                                   for layer in layer_normalise(stack)]


def test_two_occurrences_get_their_cosines(tiny_bert):
    """Two occurrences: the cosine between them in each layer (as mixed) and in the mix, γ-free; three or more
    get a map instead."""
    pair = occurrence_layers(tiny_bert, None, ["我吃了一个苹果", "苹果昨天发布了新手机"], "苹果")
    stack = pair.stacked()
    w = np.linspace(-1, 1, stack.shape[0])
    mix = mix_view(stack, w, 1.7, True, pair.occurrence_labels, pair.projection)
    assert np.allclose(mix.layer_cosines, [geometry.cosine_matrix(layer)[0, 1] for layer in stack])
    assert mix.mixed_cosine == pytest.approx(geometry.cosine_matrix(np.tensordot(softmax(w), stack, axes=1))[0, 1])
    assert mix_view(stack, w, 0.2, True, pair.occurrence_labels).mixed_cosine == pytest.approx(mix.mixed_cosine)
    standardised = mix_view(stack, w, 1.0, True, pair.occurrence_labels, layer_norm=True)
    assert np.allclose(standardised.layer_cosines, [geometry.cosine_matrix(layer)[0, 1]
                                                    for layer in layer_normalise(stack)])
    three = occurrence_layers(tiny_bert, None, ["我吃了一个苹果", "苹果昨天发布了新手机", "苹果很甜"], "苹果")
    assert mix_view(three.stacked(), w, 1.0, True, three.occurrence_labels).layer_cosines is None


def test_centring_needs_three_occurrences(tiny_bert):
    pair = occurrence_layers(tiny_bert, None, ["我吃了一个苹果", "苹果昨天发布了新手机"], "苹果")
    assert not pair.can_centre
    # why: two points centred on their mean are exact opposites, whatever they were
    assert np.allclose(pair.cosine[True][:, 0, 1], -1.0) and not np.allclose(pair.cosine[False][:, 0, 1], -1.0)
    three = occurrence_layers(tiny_bert, None, ["我吃了一个苹果", "苹果昨天发布了新手机", "苹果很甜"],
                                 "苹果")
    assert three.can_centre and not np.allclose(three.cosine[True][:, 0, 1], -1.0)


# ---- export -------------------------------------------------------------------------------------------
def test_export_rows_csv_json(tiny_bert, tiny_static):
    sentences = ["=HYPERLINK(苹果)", "我吃了一个苹果"]
    view = occurrence_layers(tiny_bert, tiny_static, sentences, "苹果", ["水果", "水果"])
    rows = export_rows(view)
    assert len(rows) == 2 * 1 + 2 * tiny_bert.num_layers  # static: 1 layer; contextual: every layer
    assert {r["model"] for r in rows} == {"tiny-w2v", tiny_bert.name}
    assert rows[0]["start"] == 11 and rows[0]["end"] == 13
    table = list(csv.reader(io.StringIO(to_csv(rows))))
    assert table[0] == ["model", "layer", "sentence_index", "sentence", "start", "end", "label", "vector"]
    assert table[1][3] == "'=HYPERLINK(苹果)"  # no formula injection
    assert len(table[1][7].split()) == 16
    data = json.loads(to_json(view))
    assert data["word"] == "苹果" and len(data["rows"]) == len(rows) and data["sentences"] == sentences


# ---- scenes and uploads ---------------------------------------------------------------------------------
def test_scenes_are_consistent():
    assert scenes.DEFAULT_SCENE == "lecture_apple"
    assert scenes.SCENES["lecture_apple"].lines == ("我吃了一个苹果", "苹果昨天发布了新手机")
    for scene in scenes.SCENES.values():
        parsed = parse_input(scene.text, scene.word)
        assert all(scene.word in s for s in parsed.sentences), scene.id
        if scene.labelled:
            assert parsed.has_labels and None not in parsed.labels
            counts = {label: parsed.labels.count(label) for label in set(parsed.labels)}
            assert len(counts) >= 2 and min(counts.values()) >= 4, (scene.id, counts)
    apple = parse_input(scenes.SCENES["apple"].text, "苹果")
    assert apple.labels.count("水果") == 8 and apple.labels.count("公司") == 8
    assert set(parse_input(scenes.SCENES["baofu"].text, "包袱").labels) == {"布包", "负担", "笑料"}
    assert scenes.get_scene("nope").id == scenes.DEFAULT_SCENE


def test_decode_upload():
    assert scenes.decode_upload("水果|我吃了一个苹果\r\n苹果手机\r\n".encode()) == "水果|我吃了一个苹果\n苹果手机\n"
    assert scenes.decode_upload("\ufeff苹果".encode()) == "苹果"
    for data in (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "苹果".encode("gbk"), bytes(range(1, 31)) * 10):
        with pytest.raises(LabError) as info:
            scenes.decode_upload(data)
        assert info.value.code == "not_text"
    with pytest.raises(LabError) as info:
        scenes.decode_upload(b"a" * 11, max_bytes=10)
    assert info.value.code == "file_too_large"


# ---- figure builders --------------------------------------------------------------------------------------
def test_figures_escape_and_shape(tiny_bert, tiny_static):
    view = occurrence_layers(tiny_bert, tiny_static, ["<i>苹果</i>", "苹果手机"], "苹果")
    m = view.static_map
    fig = figs.static_vs_contextual_figure(
        static_words=m.words, static_coords=m.coords, static_explained=m.explained, static_label="one",
        static_hover="h", static_note=None, coords=view.coords[-1], ids=view.ids,
        labels=["<b>x</b>", None], hover=view.hover, explained=view.projection.explained_variance_ratio,
        axis_range=None, static_title="L", contextual_title="R")
    names = [tr.name for tr in fig.data]
    assert "&lt;b&gt;x&lt;/b&gt;" in names and "<b>x</b>" not in names
    star = next(tr for tr in fig.data if tr.name == "one")
    assert len(star.x) == 1  # ONE static point
    assert fig.data[-2].customdata[0] == "&lt;i&gt;【苹果】&lt;/i&gt;"
    heat = figs.cosine_heatmap(view.cosine[False][-1], view.ids, "t")
    matrix = np.asarray(view.cosine[False][-1])
    assert list(heat.data[0].x) == ["#1", "#2"] and heat.data[0].zmax == 1.0
    assert heat.data[0].zmin == figs.cosine_range(matrix)[0] <= matrix.min()  # scaled to the data, not −1…1
    bars = figs.weights_bar(["a", "b", "c"], [0.2, 0.3, 0.5], "s")
    assert list(bars.data[0].text) == ["0.20", "0.30", "0.50"]
    named = figs.weights_bar(["字向量层", "第 1 层 biLSTM", "token layer"], [0.2, 0.3, 0.5], None)
    assert list(named.data[0].x) == ["s<sub>0</sub><br>字向量层", "s<sub>1</sub><br>第 1 层<br>biLSTM",
                                     "s<sub>2</sub><br>token<br>layer"] and named.layout.xaxis.tickangle == 0
    acc = figs.accuracy_chart(["0", "1"], [0.5, None], 0.25, n=12, contextual_name="c", static_name="s", title="t")
    assert list(acc.data[-1].y) == [0.25, 0.25]
    # #48: every accuracy with its n and its 95% Wilson interval (one of twelve is 8 points)
    low, high = wilson_interval(0.5, 12)
    assert acc.layout.title.text.endswith("n = 12")
    assert acc.data[0].error_y.array[0] == pytest.approx(high - 0.5)
    assert acc.data[0].error_y.arrayminus[0] == pytest.approx(0.5 - low)
    diag = figs.elmo_diagram(["x"] + ["f1", "b1", "f2", "b2"], ["h0", "h1", "h2"], "sum", ["s0", "s1", "s2"])
    assert len([a for a in diag.layout.annotations if a.text in ("x", "f1", "h2", "sum")]) == 4


# ---- the embedded models (when trained) -------------------------------------------------------------------
def _embedded(name):
    from core.models.cache import load_encoder
    from core.models.catalogue import list_models

    info = next(m for m in list_models() if m.name == name)
    if not info.available:
        pytest.skip(f"{name} not available: {info.reason}")
    return load_encoder(name)


@pytest.mark.realmodel
def test_embedded_elmo_and_word2vec_on_apple_scene():
    elmo = _embedded("mini-elmo-zh")
    scene = scenes.SCENES["apple"]
    parsed = parse_input(scene.text, scene.word)
    view = occurrence_layers(elmo, None, parsed.sentences, parsed.word, parsed.labels)
    assert view.layer_names == ["token layer", "biLSTM 1", "biLSTM 2"]
    stacked = view.stacked()
    assert stacked.shape == (3, 16, stacked.shape[-1])
    # layer 0 = [x; x]: context-free, the same for every occurrence of 苹果 ...
    assert np.allclose(stacked[0], stacked[0][0], atol=1e-5)
    half = stacked.shape[-1] // 2
    assert np.allclose(stacked[0, :, :half], stacked[0, :, half:])
    # ... while the biLSTM layers depend on the sentence
    assert not np.allclose(stacked[2], stacked[2][0], atol=1e-3)
    assert all(a is not None for a in view.accuracy[False][1:])


@pytest.mark.realmodel
def test_embedded_word2vec_one_vector_and_oov():
    w2v = _embedded("word2vec-zh")
    view = occurrence_layers(None, w2v, ["我吃了一个苹果", "苹果昨天发布了新手机"], "苹果")
    if view.oov:
        pytest.skip("苹果 is not in this word2vec-zh vocabulary")
    assert np.array_equal(view.static.occurrences[0].layers, view.static.occurrences[1].layers)
    coinage = occurrence_layers(None, w2v, ["他发明了量子煎饼侠这个词"], "量子煎饼侠")
    assert coinage.oov


def test_two_occurrences_are_drawn_among_the_sentences_other_tokens(elmo):
    """#38 item 9: a projection of two points alone puts them at mirrored ends whatever their cosine (0.93 for
    the lecture's 苹果 pair on mini-elmo-zh); with the sentences' other characters as a background, the pair
    lies closer together than most pairs of those characters, as its cosine says, in every contextual layer."""
    scene = scenes.get_scene("lecture_apple")
    parsed = parse_input(scene.text, scene.word)
    view = occurrence_layers(elmo, None, parsed.sentences, scene.word, parsed.labels)
    assert view.num_occurrences == 2 < MIN_OWN_FRAME
    assert view.background_tokens == [c for s in parsed.sentences for c in s.replace(scene.word, "")]
    assert view.background_coords.shape == (elmo.num_layers, len(view.background_tokens), 2)
    for j in range(1, elmo.num_layers):
        assert view.coords[j][0] != pytest.approx(-view.coords[j][1], abs=1e-6)  # not mirrored about the centre
        pair = np.linalg.norm(view.coords[j][0] - view.coords[j][1])
        bg = view.background_coords[j]
        others = np.linalg.norm(bg[:, None] - bg[None], axis=-1)[np.triu_indices(len(bg), 1)]
        assert pair < np.quantile(others, 0.1)
        assert geometry.cosine_matrix(view.stacked()[j])[0, 1] > 0.9
    many = occurrence_layers(elmo, None, parsed.sentences + ["苹果很甜"], scene.word)
    assert many.background_coords is None and not many.background_tokens  # three points: a frame of their own
