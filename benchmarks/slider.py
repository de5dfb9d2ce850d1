"""ELMo weights page: one slider move re-mixes cached layers and runs no model.

- ``elmo_slider_remix_ms``: what the ELMo page's mixer fragment (app_pages/elmo_weights/mixer.py) computes when
  a weight or γ slider moves: ``core.vectors.mix.normalised_s(values, True)`` then
  ``core.vectors.mix.mix_view(view.stacked(), s, γ, False, view.occurrence_labels, view.projection)``
  on the view the page caches, ``core.vectors.view.occurrence_layers`` of 20 labelled sentences.
  The moves sweep the top layer's softmax-mode slider −3 → 3 and γ 0.5 → 2.
  Value = median ms per move; target ≤ 20 ms.
- ``elmo_slider_forward_passes``: model forward passes during those moves, counted by
  :class:`ForwardCounter`, which must then see one deliberate forward pass. Target = 0.
"""
from __future__ import annotations

import statistics
import time

from benchmarks.common import (
    WORD,
    Config,
    load_encoder,
    make_labelled_sentences,
    make_result,
    ms,
    quantile,
    skipped_result,
)

NAMES, LIMITS = ("elmo_slider_remix_ms", "elmo_slider_forward_passes"), (20.0, 0)
# app_pages.elmo_weights.mixer.W_RANGE, the page's weight slider in softmax mode (not imported: the page
# modules' Streamlit caches log a warning each outside a Streamlit server; tests/test_benchmarks_smoke.py keeps
# the two equal)
W_RANGE = (-3.0, 3.0)


class ForwardCounter:
    """Counts model forward passes: top-level entries into the model's compute methods (nested calls
    such as layer_vectors → representations count once) and every submodule call as a safety net."""

    METHODS = ("forward", "layer_vectors", "representations", "lm_losses")

    def __init__(self, encoder):
        import torch.nn as nn

        self.model = encoder.model
        self.passes = 0
        self.module_calls = 0
        self._depth = 0
        self.wrapped: list[tuple[object, str]] = []
        self._handles = []
        # Embedding runs the encoder alone (base_model), fill-mask the whole model: count both entries.
        base = getattr(self.model, "base_model", None)
        targets = [self.model] + ([base] if base is not None and base is not self.model else [])
        for target in targets:
            for name in self.METHODS:
                original = getattr(target, name, None)
                if callable(original):
                    target.__dict__[name] = self._wrap(original)
                    self.wrapped.append((target, name))
        if isinstance(self.model, nn.Module):
            self._handles = [m.register_forward_pre_hook(self._hook) for m in self.model.modules()]

    def _wrap(self, original):
        def counted(*args, **kwargs):
            if self._depth == 0:
                self.passes += 1
            self._depth += 1
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1
        return counted

    def _hook(self, module, args):
        self.module_calls += 1

    def reset(self) -> None:
        self.passes = self.module_calls = 0

    def remove(self) -> None:
        for target, name in self.wrapped:
            target.__dict__.pop(name, None)
        for handle in self._handles:
            handle.remove()


def slider_positions(num_layers: int, moves: int) -> list[tuple[list[float], float]]:
    """(softmax-mode slider values, γ) as a teacher drags the sliders: the top layer's value sweeps
    the slider's range while the others stay at 0, γ sweeps 0.5 → 2; on the sliders' steps (0.01, 0.1)."""
    lo, hi = W_RANGE
    out = []
    for i in range(moves):
        x = i / max(1, moves - 1)
        out.append(([0.0] * (num_layers - 1) + [round(lo + (hi - lo) * x, 2)], round(0.5 + 1.5 * x, 1)))
    return out


def measure(cfg: Config) -> list[dict]:
    encoder, reason = load_encoder(cfg.elmo_model, "layers")
    if encoder is None:
        return [skipped_result(NAMES[0], LIMITS[0], reason, unit="ms"),
                skipped_result(NAMES[1], LIMITS[1], reason, unit="passes")]
    from core.vectors.mix import mix_view, normalised_s
    from core.vectors.view import occurrence_layers

    labels, sentences = map(list, zip(*make_labelled_sentences(cfg.slider_sentences, seed=1)))
    view = occurrence_layers(encoder, None, sentences, WORD, labels)  # once: the page caches it
    stack_shape = list(view.stacked().shape)  # (num_layers, n_occ, dim)
    positions = slider_positions(stack_shape[0], cfg.slider_moves)

    def move(values, gamma):
        s = normalised_s(values, True)
        return mix_view(view.stacked(), s, gamma, False, view.occurrence_labels, view.projection)

    for values, gamma in positions[:5]:
        move(values, gamma)
    counter = ForwardCounter(encoder)
    try:
        times = []
        for values, gamma in positions:
            t0 = time.perf_counter()
            mix = move(values, gamma)
            times.append(time.perf_counter() - t0)
        passes, module_calls = counter.passes, counter.module_calls
        counter.reset()
        encoder.encode([sentences[0]])  # proves the counter sees a real forward pass
        verified = counter.passes > 0 or counter.module_calls > 0
    finally:
        counter.remove()
    med = statistics.median(times)
    details = {"model": cfg.elmo_model, "sentences": len(sentences), "occurrences": stack_shape[1],
               "stack_shape": stack_shape, "moves": len(positions), "slider_mode": "softmax",
               "sense_accuracy_computed": mix.accuracy is not None, "median_ms": ms(med),
               "p95_ms": ms(quantile(times, 0.95)), "max_ms": ms(max(times))}
    count_details = {"model_forward_passes": passes, "submodule_calls": module_calls,
                     "counter_verified": verified,
                     "wrapped_methods": [f"{type(t).__name__}.{n}" for t, n in counter.wrapped]}
    counted = make_result(NAMES[1], passes + module_calls, LIMITS[1], unit="passes", details=count_details)
    if not verified:
        counted.update({"pass": False, "error": True,
                        "reason": "the counter did not register a deliberate forward pass"})
    return [make_result(NAMES[0], med * 1000.0, LIMITS[0], unit="ms", details=details), counted]
