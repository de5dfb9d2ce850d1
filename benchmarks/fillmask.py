"""``fillmask_app_vs_bare_forward``: the fill-mask page's code path against a bare forward pass.

``core.fillmask.prediction.fill_mask(encoder, s)`` (input checks, length check, one forward with hidden
states, softmax over the vocabulary, top-k) against ``model(**tokenizer(s, return_tensors="pt"))``
of the same model, both under ``torch.inference_mode()``, tokenizer included in both, interleaved.
Value = median(app) / median(bare); target ≤ 1.3×.
"""
from __future__ import annotations

import gc
import statistics

from benchmarks.common import Config, interleaved, load_encoder, make_result, ms, quantile, skipped_result

NAME, LIMIT = "fillmask_app_vs_bare_forward", 1.3
# 30 characters of text, one of them the [MASK] (counted as one character): 32 tokens with [CLS]/[SEP].
FILL_MASK_SENTENCE = "今天下午我和朋友一起去公园散步，看见湖边有很多老人在[MASK]鱼呢。"


def measure(cfg: Config) -> list[dict]:
    encoder, reason = load_encoder(cfg.bert_model, "bert")
    if encoder is None:
        return [skipped_result(NAME, LIMIT, reason, unit="x")]
    import torch

    from core.fillmask.prediction import fill_mask

    sentence = FILL_MASK_SENTENCE.replace("[MASK]", encoder.mask_token)
    model, tokenizer = encoder.model, encoder.tokenizer

    def app():
        fill_mask(encoder, sentence)

    def bare():
        with torch.inference_mode():
            inputs = tokenizer(sentence, return_tensors="pt")
            model(**inputs)

    for _ in range(5):  # warm-up: the first calls allocate and run cache-cold
        app(), bare()
    gc.collect()
    times = interleaved({"app": app, "bare": bare}, cfg.fillmask_reps)
    app_med, bare_med = statistics.median(times["app"]), statistics.median(times["bare"])
    paired = statistics.median(a / b for a, b in zip(times["app"], times["bare"]))
    return [make_result(NAME, app_med / bare_med, LIMIT, unit="x", details={
        "sentence": sentence, "sentence_chars": len(FILL_MASK_SENTENCE) - len("[MASK]") + 1,
        "tokens": len(tokenizer(sentence)["input_ids"]), "model": cfg.bert_model, "reps": cfg.fillmask_reps,
        "app_median_ms": ms(app_med), "bare_median_ms": ms(bare_med),
        "app_p90_ms": ms(quantile(times["app"], 0.9)), "bare_p90_ms": ms(quantile(times["bare"], 0.9)),
        "paired_ratio_median": round(paired, 4)})]
