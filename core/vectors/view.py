"""Everything the two vector pages show of ``word`` in some sentences, one call per (models, sentences, word):
:func:`occurrence_layers` → :class:`VectorsView` with the static and contextual vectors of every occurrence, ONE
joint PCA over all layers (so a layer scrubber moves points inside a fixed frame; see
``core.vectors.projection``), cosine matrices, nearest neighbours and leave-one-out nearest-neighbour sense
accuracy per layer.
"""
from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..compute import geometry
from ..compute.occurrences import WordVectors, find_spans, word_vectors
from ..models.encoders import Encoder, Encoding, StaticEncoder
from .projection import joint_projection, project_layers

NEIGHBOURS_K = 3
MIN_OWN_FRAME = 3  # fewer occurrences: the projection is fitted on the sentences' other tokens too (a background)
STATIC_NEIGHBOURS_K = 8
HOVER_MAX_SENTENCES = 12


def highlight(sentence: str, start: int, end: int, escape: bool = True) -> str:
    """``sentence`` with the span marked 【like this】; HTML-escaped for plotly hover text."""
    marked = f"{sentence[:start]}【{sentence[start:end]}】{sentence[end:]}"
    return html.escape(marked, quote=False) if escape else marked



@dataclass
class StaticMap:
    """The static word and its word2vec neighbours in a 2-D PCA of their vectors."""

    words: list[str]  # [word, neighbour 1, ...]
    similarities: list[float]  # cosine to the word (1.0 for the word itself)
    coords: np.ndarray  # (len(words), 2)
    explained: np.ndarray  # (2,)


@dataclass
class VectorsView:
    word: str
    sentences: list[str]
    labels: list[str | None]
    contextual: WordVectors | None
    static: WordVectors | None
    layer_names: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # one short id per contextual occurrence, e.g. "3" or "3·2"
    hover: list[str] = field(default_factory=list)  # escaped sentence with the word marked, per occurrence
    # ONE PCA over all layers (each centred, see joint_projection; with a background also scaled, occurrence_layers)
    projection: geometry.Projection | None = None
    coords: np.ndarray | None = None  # (num_layers, n_occ, 2)
    cosine: dict[bool, np.ndarray] = field(default_factory=dict)  # centre -> (num_layers, n, n)
    neighbours: dict[bool, list[list[list[tuple[int, float]]]]] = field(default_factory=dict)
    accuracy: dict[bool, list[float | None]] = field(default_factory=dict)  # centre -> per layer
    static_accuracy: dict[bool, float | None] = field(default_factory=dict)
    static_map: StaticMap | None = None
    static_hover: list[str] = field(default_factory=list)  # escaped sentences sharing the one static vector
    # With fewer than MIN_OWN_FRAME occurrences, the sentences' other tokens: the frame is fitted on them too
    background_tokens: list[str] = field(default_factory=list)
    background_coords: np.ndarray | None = None  # (num_layers, m, 2), the same frame as ``coords``

    @property
    def num_occurrences(self) -> int:
        return len(self.contextual.occurrences) if self.contextual else 0

    @property
    def can_centre(self) -> bool:
        """Whether mean-centring says anything: two points centred on their mean are exact opposites
        (cosine −1) whatever they were, so it takes three or more occurrences."""
        return self.num_occurrences >= 3

    @property
    def occurrence_labels(self) -> list[str | None]:
        return [o.label for o in self.contextual.occurrences] if self.contextual else []

    @property
    def scored(self) -> int:
        """Occurrences behind each sense accuracy: the labelled ones (the n shown beside every accuracy)."""
        return sum(1 for label in self.occurrence_labels if label)

    @property
    def missing(self) -> list[int]:
        """Sentence indices without the word."""
        source = self.contextual or self.static
        return list(source.missing) if source else []

    @property
    def oov(self) -> bool:
        return bool(self.static and self.static.oov)

    def stacked(self) -> np.ndarray:
        """(num_layers, n_occ, dim) contextual vectors."""
        assert self.contextual is not None  # asked only of a view with a contextual model
        return self.contextual.stacked()

    def mean_cosine(self, centre: bool, layer: int) -> float:
        """The mean cosine between different occurrences at ``layer`` (two or more occurrences): how alike the
        model makes the word across the sentences; layer 0, before any context, is its baseline."""
        matrix = self.cosine[centre][layer]
        n = matrix.shape[0]
        return float((matrix.sum() - np.trace(matrix)) / (n * (n - 1)))


def _background(encodings: Mapping[int, Encoding], occurrences) -> tuple[np.ndarray | None, list[str]]:
    """Every other token of the encoded sentences (by sentence index, in sentence order), (num_layers, m, dim)
    and its text: what a projection of a few occurrences is drawn against (specials and the occurrences' own
    tokens left out)."""
    layers, tokens = [], []
    for i, encoding in encodings.items():
        own = {k for o in occurrences if o.sentence_index == i for k in o.token_indices}
        for k, (start, end) in enumerate(encoding.offsets):
            if not encoding.special[k] and k not in own:
                layers.append(encoding.layers[:, k])
                tokens.append(encoding.text[start:end])
    return (np.stack(layers, axis=1).astype(np.float64) if layers else None), tokens


def _occurrence_ids(vectors: WordVectors) -> list[str]:
    per_sentence: dict[int, int] = {}
    for occ in vectors.occurrences:
        per_sentence[occ.sentence_index] = per_sentence.get(occ.sentence_index, 0) + 1
    seen: dict[int, int] = {}
    ids = []
    for occ in vectors.occurrences:
        seen[occ.sentence_index] = seen.get(occ.sentence_index, 0) + 1
        base = str(occ.sentence_index + 1)
        ids.append(base if per_sentence[occ.sentence_index] == 1 else f"{base}·{seen[occ.sentence_index]}")
    return ids


def _static_map(static_encoder: StaticEncoder, word: str, vector: np.ndarray) -> StaticMap:
    neighbours = static_encoder.most_similar(word, STATIC_NEIGHBOURS_K)
    words = [word] + [w for w, _ in neighbours]
    sims = [1.0] + [s for _, s in neighbours]
    points = np.stack([vector, *static_encoder.vectors[[static_encoder.index[w] for w, _ in neighbours]]])
    projection = geometry.project(points)
    return StaticMap(words, sims, projection.coords, projection.explained_variance_ratio)


def occurrence_layers(
    encoder: Encoder | None,
    static_encoder: StaticEncoder | None,
    sentences: Sequence[str],
    word: str,
    labels: Sequence[str | None] | None = None,
    encode: Callable[[list[str]], list[Encoding]] | None = None,
    first_only: bool = False,
) -> VectorsView:
    """All views of ``word`` in ``sentences`` for one contextual and one static model.

    Either model may be None (not available): its part of the view stays empty. ``encode`` lets
    the caller route the forward pass through a cache; it receives only the sentences that
    contain the word. ``first_only``: each sentence's first occurrence only (the class board: one sentence, one
    point, in the picture and in every accuracy). Raises LabError for empty input, too many sentences or
    over-long text.
    """
    sentences = list(sentences)
    labels = list(labels) if labels is not None else [None] * len(sentences)
    if len(labels) != len(sentences):
        raise ValueError(f"got {len(labels)} labels for {len(sentences)} sentences")
    view = VectorsView(word, sentences, labels, None, None)

    if static_encoder is not None:
        view.static = word_vectors(static_encoder, sentences, word, labels, first_only=first_only)
        if view.static.occurrences:
            vector = view.static.occurrences[0].layers[0]
            view.static_map = _static_map(static_encoder, word, vector)
            view.static_hover = [highlight(o.sentence, o.start, o.end) for o in view.static.occurrences]
            static_points = np.stack([o.layers[0] for o in view.static.occurrences])
            static_labels = [o.label for o in view.static.occurrences]
            for centre in (False, True):
                view.static_accuracy[centre] = geometry.loo_nn_accuracy(static_points, static_labels, centre=centre)

    if encoder is None:
        return view
    view.layer_names = list(encoder.layer_names)
    # Find which sentences contain the word first, and encode only those (through the cache).
    present = [i for i, sentence in enumerate(sentences) if find_spans(sentence, word.strip())]
    encodings: dict[int, Encoding] = {}
    if present:
        run = encode or (lambda texts: encoder.encode(texts))
        encodings = dict(zip(present, run([sentences[i] for i in present])))
    view.contextual = word_vectors(encoder, sentences, word, labels, encodings=encodings, first_only=first_only)
    occurrences = view.contextual.occurrences
    if not occurrences:
        return view

    view.ids = _occurrence_ids(view.contextual)
    view.hover = [highlight(o.sentence, o.start, o.end) for o in occurrences]
    stacked = view.contextual.stacked().astype(np.float64)  # (L, n, dim)
    num_layers, n, dim = stacked.shape
    background = None
    if n < MIN_OWN_FRAME:  # fitted on these points alone, two points always land at mirrored ends
        background, view.background_tokens = _background(encodings, occurrences)
    if background is None:
        view.projection = joint_projection(stacked)
        view.coords = project_layers(view.projection, stacked)
    else:
        # each layer centred and scaled to one RMS length with its background, so that every layer (ELMo's
        # token layer is several times longer) spreads alike in the shared frame
        frame = np.concatenate([stacked, background], axis=1)
        frame = frame - frame.mean(axis=1, keepdims=True)
        frame /= np.maximum(np.sqrt((frame ** 2).sum(axis=-1).mean(axis=1, keepdims=True))[..., None], 1e-12)
        view.projection = geometry.project(frame.reshape(-1, dim))
        coords = frame @ view.projection.components.T
        view.coords, view.background_coords = coords[:, :n], coords[:, n:]
    occ_labels = view.occurrence_labels
    for centre in (False, True):
        view.cosine[centre] = np.stack([geometry.cosine_matrix(stacked[j], centre=centre) for j in range(num_layers)])
        if n >= 2:
            view.neighbours[centre] = [geometry.nearest_neighbours(stacked[j], NEIGHBOURS_K, centre=centre)
                                       for j in range(num_layers)]
        else:
            view.neighbours[centre] = [[[]] for _ in range(num_layers)]
        view.accuracy[centre] = [geometry.loo_nn_accuracy(stacked[j], occ_labels, centre=centre)
                                 for j in range(num_layers)]
    return view
