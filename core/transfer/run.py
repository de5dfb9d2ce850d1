"""The whole experiment on one data sample: both feature-based approaches (every BERT layer and pooling),
full fine-tuning and LoRA, each timed, with one progress bar over all stages, returned as the JSON-ready
dict the page shows and ``results`` saves.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timezone

import numpy as np

from ..model_names import DEFAULT_BERT, DEFAULT_ELMO
from .data import DEFAULT_CONFIG, Dataset, TransferConfig, sample_dataset
from .features import POOLINGS, bert_features, elmo_features, fit_logistic
from .finetune import count_params, fine_tune
from .results import RESULTS_VERSION, model_fingerprint

Progress = Callable[[float, str], None]
BERT_MODEL = DEFAULT_BERT  # the models of the experiment (the page and the CLI default)
ELMO_MODEL: str | None = DEFAULT_ELMO


def _no_progress(fraction: float, stage: str) -> None:
    pass


def run_transfer(bert_encoder, elmo_encoder=None, config: TransferConfig = DEFAULT_CONFIG, *,
                 data: Dataset | None = None, progress: Progress | None = None,
                 log: Callable[[str], None] | None = None) -> dict:
    """Everything the page shows, as a JSON-ready dict (see RESULTS_VERSION).

    ``elmo_encoder`` may be None (model not available): the ELMo row is then reported as skipped.
    ``progress(fraction, stage)``: stage in {"data", "elmo", "bert", "probe", "finetune", "lora", "done"}.
    """
    import torch

    from ..lora import DEFAULT_LORA, lora_fine_tune  # core.lora builds on this package: imported here, not above

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
