"""Everything the two vector pages show, computed in one place (pure: arrays in, arrays out).

- :func:`parse_input`: the text box and the target word → clean sentences, sense labels, word.
- :func:`occurrence_layers`: one call per (models, sentences, word) → :class:`VectorsView` with
  the static and contextual vectors of every occurrence, ONE joint PCA over all layers (so a
  layer scrubber moves points inside a fixed frame; see :func:`joint_projection`), cosine
  matrices, nearest neighbours and
  leave-one-out nearest-neighbour sense accuracy per layer.
- :func:`mix_view`: the ELMo scalar mix γ · Σ_j s_j h_j of the cached layers, projected into the
  same frame, with its sense accuracy. Cheap: a slider only calls this.
- :func:`export_rows` / :func:`to_csv` / :func:`to_json`: the vectors as downloadable data.
"""
from __future__ import annotations

import csv
import html
import io
import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from . import geometry
from .errors import LabError
from .mixing import layer_normalise, normalise_weights, scalar_mix
from .models.encoders import Encoder, Encoding, StaticEncoder
from .occurrences import MAX_SENTENCES, WordVectors, find_spans, parse_labelled, word_vectors
from .safe_text import csv_safe
from .stats import paired_difference_interval
from .validation import check_length

MAX_TEXT_CHARS = 10_000  # the whole text box
MAX_LINE_CHARS = 500  # one sentence (the models have their own, smaller token limits)
MAX_WORD_CHARS = 20
NEIGHBOURS_K = 3
MIN_OWN_FRAME = 3  # fewer occurrences: the projection is fitted on the sentences' other tokens too (a background)
STATIC_NEIGHBOURS_K = 8
HOVER_MAX_SENTENCES = 12



@dataclass
class ParsedInput:
    sentences: list[str]
    labels: list[str | None]
    word: str
    removed_controls: int = 0  # control characters dropped from the text and the word

    @property
    def has_labels(self) -> bool:
        return sum(1 for label in self.labels if label) >= 2 and len({l for l in self.labels if l}) >= 2


def strip_controls(text: str) -> tuple[str, int]:
    """``text`` without control/format characters (tabs become spaces, line breaks stay)."""
    out, removed = [], 0
    for char in text.replace("\r\n", "\n").replace("\r", "\n"):
        if char == "\n":
            out.append(char)
        elif char == "\t":
            out.append(" ")
        elif unicodedata.category(char) in ("Cc", "Cs") or char in "\u2028\u2029":
            removed += 1
        else:
            out.append(char)
    return "".join(out), removed


def parse_input(text: str, word: str) -> ParsedInput:
    """Validate the text box (one sentence per line, optional ``label|sentence``) and the word.

    Raises LabError: ``too_long`` (whole text, one line or the word), ``empty_input``,
    ``too_many_sentences``, ``empty_word``.
    """
    text = text or ""
    check_length(text, MAX_TEXT_CHARS)
    clean, removed = strip_controls(text)
    sentences, labels = parse_labelled(clean.split("\n"))
    if not sentences:
        raise LabError("empty_input")
    if len(sentences) > MAX_SENTENCES:
        raise LabError("too_many_sentences", count=len(sentences), limit=MAX_SENTENCES)
    for sentence in sentences:
        check_length(sentence, MAX_LINE_CHARS)
    word_clean, removed_word = strip_controls(word or "")
    word_clean = " ".join(word_clean.split())
    if not word_clean:
        raise LabError("empty_word")
    check_length(word_clean, MAX_WORD_CHARS)
    return ParsedInput(sentences, labels, word_clean, removed + removed_word)


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
) -> VectorsView:
    """All views of ``word`` in ``sentences`` for one contextual and one static model.

    Either model may be None (not available): its part of the view stays empty. ``encode`` lets
    the caller route the forward pass through a cache; it receives only the sentences that
    contain the word. Raises LabError for empty input, too many sentences or over-long text.
    """
    sentences = list(sentences)
    labels = list(labels) if labels is not None else [None] * len(sentences)
    if len(labels) != len(sentences):
        raise ValueError(f"got {len(labels)} labels for {len(sentences)} sentences")
    view = VectorsView(word, sentences, labels, None, None)

    if static_encoder is not None:
        view.static = word_vectors(static_encoder, sentences, word, labels)
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
    view.contextual = word_vectors(encoder, sentences, word, labels, encodings=encodings)
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


def joint_projection(stacked: np.ndarray) -> geometry.Projection:
    """ONE PCA for all layers of (L, n, dim): every layer is centred on its own mean, then all
    layers are stacked and fitted together.

    The shared components keep the frame fixed while a layer scrubber moves; the per-layer
    centring keeps each layer's cloud around the origin. Without it the offsets BETWEEN layers
    (each layer has its own mean and scale) take the first components and squeeze the
    differences WITHIN a layer, the ones the page is about, into a dot.
    """
    stacked = np.asarray(stacked, dtype=np.float64)
    num_layers, n, dim = stacked.shape
    centred = stacked - stacked.mean(axis=1, keepdims=True)
    return geometry.project(centred.reshape(num_layers * n, dim))


def project_layers(projection: geometry.Projection, vectors: np.ndarray) -> np.ndarray:
    """Coordinates of (..., n, dim) vectors in the joint frame, each group centred on its own mean."""
    vectors = np.asarray(vectors, dtype=np.float64)
    centred = vectors - vectors.mean(axis=-2, keepdims=True)
    return centred @ projection.components.T


@dataclass
class MixView:
    s: np.ndarray  # normalised weights (L+1,)
    mixed: np.ndarray  # (n, dim)
    coords: np.ndarray  # (n, 2) in the given projection's frame
    accuracy: float | None  # leave-one-out nearest-neighbour sense accuracy (cosine)
    layer_coords: np.ndarray | None = None  # (L+1, n, 2): the layers as mixed (normalised or not), same frame
    explained: np.ndarray | None = None  # that frame's explained variance ratio (2,)
    layer_accuracy: list[float | None] | None = None  # each layer alone, as mixed (standardised or not)
    hits: np.ndarray | None = None  # per labelled occurrence, the mix's nearest-neighbour outcome (paired tests)
    layer_hits: list[np.ndarray | None] | None = None  # the same for each layer alone


@dataclass(frozen=True)
class WeightsVerdict:
    """Do the settings on show (the current mix, each layer alone) differ in sense accuracy on these
    occurrences? Each is compared with the most accurate one by the paired 95 % interval over the same
    occurrences. ``verdict``: "tie" (none falls behind beyond sampling error), "layer0" (only layer 0 alone
    does: the input layer, before any other token is mixed in), "differ" (another setting does, so the
    weighting changes the accuracy). ``best`` / ``worst``: None for the mix, else the layer; ``diff``,
    ``low``, ``high``: best − worst."""

    verdict: str
    best: int | None
    worst: int | None
    diff: float
    low: float
    high: float
    n: int


def weights_verdict(mix: MixView) -> WeightsVerdict | None:
    """:class:`WeightsVerdict` of a :func:`mix_view`; None without sense labels to score."""
    candidates: list[tuple[int | None, np.ndarray | None]] = [(None, mix.hits), *enumerate(mix.layer_hits or [])]
    settings = [(key, hits) for key, hits in candidates if hits is not None]
    if len(settings) < 2:
        return None
    best = max(settings, key=lambda item: item[1].mean())  # a tie: the mix, listed first
    worst = min(settings, key=lambda item: item[1].mean())
    below = {key for key, hits in settings if paired_difference_interval(best[1], hits)[1] > 0}
    diff, low, high = paired_difference_interval(best[1], worst[1])
    verdict = "tie" if not below else "layer0" if below == {0} else "differ"
    return WeightsVerdict(verdict, best[0], worst[0], diff, low, high, len(best[1]))


def normalised_s(weights: Sequence[float] | np.ndarray, pre_softmax: bool) -> np.ndarray:
    """s from slider values: softmax(w) when ``pre_softmax``, else the values divided by their sum.

    Raises LabError("bad_weights") for non-finite values, and for negative values or a zero sum in
    the direct mode.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)):
        raise LabError("bad_weights")
    if pre_softmax:
        return normalise_weights(w, pre_softmax=True)
    if np.any(w < 0) or w.sum() <= 0:
        raise LabError("bad_weights")
    return normalise_weights(w / w.sum(), pre_softmax=False)


def mix_view(
    layer_stack: np.ndarray,
    weights: Sequence[float] | np.ndarray,
    gamma: float,
    pre_softmax: bool,
    labels: Sequence[str | None],
    projection: geometry.Projection | None = None,
    layer_norm: bool = False,
) -> MixView:
    """ELMo_k = γ · Σ_j s_j h_{k,j} for every occurrence of ``layer_stack`` (L+1, n, dim).

    ``layer_norm``: each layer standardised first (``core.mixing.layer_normalise``, AllenNLP's
    ``do_layer_norm``, over these n occurrences); ``projection`` must then have been fitted on the
    standardised layers (default: fitted here).

    The mix is centred on its own mean and projected with ``projection`` (default:
    :func:`joint_projection` of the layers, as in :func:`occurrence_layers`), so moving a weight
    moves points inside a fixed frame: since the mix is linear, each mixed point lands exactly at
    γ times the s-weighted average of its own layer points there. γ only scales lengths, so the
    cosine-based accuracy does not depend on it (γ > 0).
    """
    stack = np.asarray(layer_stack, dtype=np.float64)
    if stack.ndim != 3:
        raise ValueError(f"layer_stack must be (L+1, n, dim), got shape {stack.shape}")
    s = normalised_s(weights, pre_softmax)
    if s.shape[0] != stack.shape[0]:
        raise LabError("weights_count", given=s.shape[0], layers=stack.shape[0])
    if not np.isfinite(gamma):
        raise LabError("bad_gamma")
    if layer_norm:
        stack = layer_normalise(stack)
    mixed = scalar_mix(stack, s, float(gamma), pre_softmax=False)
    num_layers, n, dim = stack.shape
    if n == 0:
        return MixView(s, mixed, np.zeros((0, 2)), None)
    if projection is None:
        projection = joint_projection(stack)
    if projection.components.shape[1] != dim:
        raise ValueError(f"projection fitted on dimension {projection.components.shape[1]}, layers have {dim}")
    coords = project_layers(projection, mixed)
    hits = geometry.loo_nn_hits(mixed, list(labels), centre=False) if n >= 2 else None
    # standardising shifts a layer by its mean, which moves its cosines: score the layers as they are mixed
    alone = [geometry.loo_nn_hits(layer, list(labels), centre=False) if n >= 2 else None for layer in stack]
    return MixView(s, mixed, coords, None if hits is None else float(hits.mean()), project_layers(projection, stack),
                   projection.explained_variance_ratio, [None if h is None else float(h.mean()) for h in alone],
                   hits, alone)


def export_rows(view: VectorsView) -> list[dict]:
    """One row per (model, layer, occurrence): sentence, start, end, label, vector."""
    rows = []
    for vectors in (view.static, view.contextual):
        if vectors is None:
            continue
        for occ in vectors.occurrences:
            for j, name in enumerate(vectors.layer_names):
                rows.append({
                    "model": vectors.model,
                    "layer": name,
                    "sentence_index": occ.sentence_index + 1,
                    "sentence": occ.sentence,
                    "start": occ.start,
                    "end": occ.end,
                    "label": occ.label or "",
                    "vector": [round(float(x), 6) for x in occ.layers[j]],
                })
    return rows


def to_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["model", "layer", "sentence_index", "sentence", "start", "end", "label", "vector"])
    for r in rows:
        writer.writerow([csv_safe(r["model"]), r["layer"], r["sentence_index"], csv_safe(r["sentence"]),
                         r["start"], r["end"], csv_safe(r["label"]), " ".join(f"{x:.6g}" for x in r["vector"])])
    return buffer.getvalue()


def to_json(view: VectorsView) -> str:
    return json.dumps({"word": view.word, "sentences": view.sentences, "rows": export_rows(view)},
                      ensure_ascii=False)
