"""Fine-tuning: a fresh copy of a BERT encoder plus a new linear head (transformers'
*ForSequenceClassification), every parameter updated end to end for a few hundred steps on the CPU.
``fine_tune(prepare=...)`` lets LoRA (``lora``) train only some parameters in this same loop. The cached
encoder is never modified: the model trained here holds a copy of its weights.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence

from ..guard.errors import LabError
from .data import Dataset, TransferConfig


def count_params(module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


def _make_classifier(encoder, n_labels: int = 2):
    """transformers' *ForSequenceClassification (a new linear head on the pooled [CLS] state) holding a COPY
    of the encoder's weights: the cached, shared model is never trained."""
    import torch
    from transformers import AutoModelForSequenceClassification

    pretrained = encoder.model.base_model
    config = copy.deepcopy(pretrained.config)
    config.num_labels = n_labels
    # fp32 whatever dtype the config was saved with, eager attention as the lab's encoders compute (the embedded
    # BERT's config, read without a model, names none); from_config never runs code from a model repository
    model = AutoModelForSequenceClassification.from_config(config, dtype=torch.float32, attn_implementation="eager")
    missing, unexpected = model.base_model.load_state_dict(pretrained.state_dict(), strict=False)
    # a masked LM without the NSP head has no pooler: it starts random, as with from_pretrained
    if unexpected or any(not key.startswith("pooler.") for key in missing):
        raise LabError("load_failed", name=encoder.name, detail=", ".join([*unexpected, *missing])[:300])
    return model


def _batches(tokenizer, texts: Sequence[str], max_tokens: int):
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_tokens, return_tensors="pt")
    return {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


def _outcomes(model, tokenizer, texts, labels, max_tokens: int, batch_size: int = 64) -> str:
    """"1" / "0" per review: classified right or wrong."""
    import torch

    model.eval()
    right: list[bool] = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            logits = model(**_batches(tokenizer, texts[start:start + batch_size], max_tokens)).logits
            right += (logits.argmax(-1) == torch.tensor(labels[start:start + batch_size])).tolist()
    return "".join("1" if r else "0" for r in right)


def _accuracy(outcomes: str) -> float:
    return outcomes.count("1") / max(len(outcomes), 1)


def _length_bucketed_batches(lengths: Sequence[int], batch_size: int, generator) -> list[list[int]]:
    """One epoch of batches: a random order, then reviews of similar length batched together inside
    pools of 8 batches (much less padding, so ~2x faster on a CPU), then the batches shuffled."""
    import torch

    perm = torch.randperm(len(lengths), generator=generator).tolist()
    pool = batch_size * 8
    batches = []
    for start in range(0, len(perm), pool):
        chunk = sorted(perm[start:start + pool], key=lambda i: lengths[i])
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def fine_tune(encoder, data: Dataset, config: TransferConfig,
              progress: Callable[[int, int], None] | None = None, *, prepare: Callable | None = None) -> dict:
    """Train a copy of ``encoder`` + a linear head; held-out accuracy over the steps. By default every
    parameter is trained; ``prepare(model)`` may return the model to train instead, with only some
    parameters requiring gradients (LoRA: ``lora``), so that both go through this one loop."""
    import torch

    if getattr(encoder, "kind", None) != "bert":
        raise LabError("not_masked_lm", name=getattr(encoder, "name", "?"), model_type=getattr(encoder, "kind", "?"))
    torch.manual_seed(config.seed)
    model = _make_classifier(encoder)
    pretrained = list(model.base_model.parameters())
    encoder_params, total_params = count_params(model.base_model), count_params(model)
    if prepare is not None:
        model = prepare(model)
    trainable = int(sum(p.numel() for p in model.parameters() if p.requires_grad))
    frozen = int(sum(p.numel() for p in pretrained if not p.requires_grad))
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in named if not n.endswith("bias") and "LayerNorm" not in n]
    no_decay = [p for n, p in named if n.endswith("bias") or "LayerNorm" in n]
    optimiser = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=config.lr)
    warmup = max(1, int(config.warmup * config.steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min((step + 1) / warmup, max(0.0, (config.steps - step) / max(1, config.steps - warmup))))
    tokenizer, max_tokens = encoder.tokenizer, encoder.max_tokens
    texts, labels = data.train_texts, data.train_labels
    generator = torch.Generator().manual_seed(config.seed)
    order: list[list[int]] = []
    eval_at = sorted({max(1, round(config.steps * (i + 1) / config.eval_points)) for i in range(config.eval_points)})
    outcomes = _outcomes(model, tokenizer, data.test_texts, data.test_labels, max_tokens)
    losses, curve = [], [{"step": 0, "accuracy": _accuracy(outcomes)}]
    started, cpu_started = time.perf_counter(), time.process_time()
    for step in range(1, config.steps + 1):
        if not order:
            order = _length_bucketed_batches([len(s) for s in texts], config.batch_size, generator)
        index = order.pop(0)
        model.train()
        logits = model(**_batches(tokenizer, [texts[i] for i in index], max_tokens)).logits
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([labels[i] for i in index]))
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        losses.append(loss.item())
        if step in eval_at:
            outcomes = _outcomes(model, tokenizer, data.test_texts, data.test_labels, max_tokens)
            curve.append({"step": step, "accuracy": _accuracy(outcomes)})
        if progress:
            progress(step, config.steps)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return {
        "accuracy": curve[-1]["accuracy"],
        "correct": outcomes,  # each held-out review after the last step, for paired comparisons
        "train_accuracy": _accuracy(_outcomes(model, tokenizer, texts, labels, max_tokens)),
        "curve": curve,
        "losses": [round(x, 5) for x in losses],
        "encoder_params": encoder_params,
        "head_params": total_params - encoder_params,
        "trained_params": trainable,
        "frozen_params": frozen,  # pre-trained encoder parameters left as they were
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
    }
