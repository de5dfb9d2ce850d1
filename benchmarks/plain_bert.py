"""``plain_bert_vs_transformers_forward``: the embedded BERT's forward pass on ``core.models.plain_bert`` against
transformers' ``BertForPreTraining`` (eager attention, float32) on the same checkpoint and batch, interleaved.

The batch is what the vector pages and ``embed`` run: 64 sentences of the benchmark corpus, padded, every layer's
hidden states, no MLM head (``base_model``); a second pair adds the MLM head and attentions, as the fill-mask and
attention pages run. Value = median(plain) / median(transformers) of the encoder-only pair; target ≤ 1.05× (the
lab's own forward must not be slower than the one it replaced).
"""
from __future__ import annotations

import gc
import statistics

from benchmarks.common import Config, interleaved, load_encoder, make_result, make_sentences, ms, skipped_result

NAME, LIMIT = "plain_bert_vs_transformers_forward", 1.05
BATCH = 64


def measure(cfg: Config) -> list[dict]:
    encoder, reason = load_encoder(cfg.bert_model, "bert")
    if encoder is None:
        return [skipped_result(NAME, LIMIT, reason, unit="x")]
    import torch
    from transformers import BertForPreTraining

    from core.models import catalogue, plain_bert

    directory = catalogue.MODELS_DIR / cfg.bert_model
    if not (directory.is_dir() and plain_bert.supported(directory)):
        return [skipped_result(NAME, LIMIT, f"{cfg.bert_model} does not run on core.models.plain_bert", unit="x")]
    plain, _ = plain_bert.read_checkpoint(directory)
    reference = BertForPreTraining.from_pretrained(str(directory), attn_implementation="eager",
                                                   dtype=torch.float32).eval()
    inputs = dict(encoder.tokenizer(make_sentences(BATCH), padding=True, return_tensors="pt"))

    def run(model, *, heads: bool):
        def forward():
            with torch.inference_mode():
                (model if heads else model.base_model)(**inputs, output_hidden_states=True, output_attentions=heads)
        return forward

    paths = {"plain": run(plain, heads=False), "transformers": run(reference, heads=False),
             "plain_heads": run(plain, heads=True), "transformers_heads": run(reference, heads=True)}
    for forward in paths.values():  # warm-up
        forward()
    gc.collect()
    times = interleaved(paths, max(10, cfg.fillmask_reps // 10))
    medians = {name: statistics.median(values) for name, values in times.items()}
    return [make_result(NAME, medians["plain"] / medians["transformers"], LIMIT, unit="x", details={
        "model": cfg.bert_model, "batch": BATCH, "tokens_per_row": int(inputs["input_ids"].shape[1]),
        "reps": len(times["plain"]), **{f"{name}_median_ms": ms(value) for name, value in medians.items()},
        "with_heads_ratio": round(medians["plain_heads"] / medians["transformers_heads"], 4)})]
