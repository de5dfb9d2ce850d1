"""The ELMo scalar mix γ · Σ_j s_j h_j of the cached layers, projected into the page's frame, with its sense
accuracy, and whether the weights on show make a difference. Cheap: a weight or γ slider only calls this."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..compute import geometry, stats
from ..compute.mixing import layer_normalise, normalise_weights, scalar_mix
from ..guard.errors import LabError
from .projection import joint_projection, project_layers


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
    # Two occurrences: a 2-D frame centred on them draws two mirrored points whatever they are, so what is shown
    # is their cosine, in each layer as mixed (L+1,) and in the mix
    layer_cosines: np.ndarray | None = None
    mixed_cosine: float | None = None


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
    below = {key for key, hits in settings if stats.paired(best[1], hits).verdict == "higher"}
    extremes = stats.paired(best[1], worst[1])
    diff, low, high = extremes.diff, extremes.low, extremes.high
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

    ``layer_norm``: each layer standardised first (``core.compute.mixing.layer_normalise``, AllenNLP's
    ``do_layer_norm``, over these n occurrences); ``projection`` must then have been fitted on the
    standardised layers (default: fitted here).

    The mix is centred on its own mean and projected with ``projection`` (default:
    :func:`joint_projection` of the layers, as in ``core.vectors.view.occurrence_layers``), so moving a weight
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
    view = MixView(s, mixed, coords, None if hits is None else float(hits.mean()), project_layers(projection, stack),
                   projection.explained_variance_ratio, [None if h is None else float(h.mean()) for h in alone],
                   hits, alone)
    if n == 2:
        view.layer_cosines = np.array([geometry.cosine_matrix(layer)[0, 1] for layer in stack])
        view.mixed_cosine = float(geometry.cosine_matrix(mixed)[0, 1])
    return view
