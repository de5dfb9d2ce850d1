"""The whole experiment on one data sample: both feature-based approaches (every BERT layer and pooling),
full fine-tuning and LoRA, each with its one hyper-parameter chosen on the same validation split
(``tuning``), each timed, with one progress bar over all stages, returned as the JSON-ready dict the page
shows and ``results`` saves.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime

import numpy as np

from ..guard.errors import LabError
from ..models.catalogue import DEFAULT_BERT, DEFAULT_ELMO
from ..runtime.concurrency import heavy
from .data import DEFAULT_CONFIG, Dataset, TransferConfig, sample_dataset
from .features import POOLINGS, bert_features, fit_probe, standardised_mix
from .finetune import count_params, fine_tune
from .results import RESULTS_VERSION, model_fingerprint
from .tuning import split_point, tune_lr

Progress = Callable[[float, str], None]
BERT_MODEL = DEFAULT_BERT  # the models of the experiment (the page and the CLI default)
ELMO_MODEL: str | None = DEFAULT_ELMO
# rough CPU seconds of each stage on the default sample, for one progress bar over all stages
STAGE_COST = {"data": 0.5, "elmo": 8.0, "bert": 10.0, "probe": 15.0, "finetune": 75.0, "lora": 60.0}


def _no_progress(fraction: float, stage: str) -> None:
    pass


def run_transfer(bert_encoder, elmo_encoder=None, config: TransferConfig = DEFAULT_CONFIG, *,
                 data: Dataset | None = None, progress: Progress | None = None,
                 log: Callable[[str], None] | None = None, finetune_lrs: Sequence[float] = (),
                 lora_lrs: Sequence[float] = ()) -> dict:
    """Everything the page shows, as a JSON-ready dict (see RESULTS_VERSION).

    ``elmo_encoder`` may be None (model not available): the ELMo row is then reported as skipped. The
    probes' C is always chosen on the validation split (``config.C_grid``); the learning rates of full
    fine-tuning and LoRA are chosen there from ``finetune_lrs`` / ``lora_lrs`` (``python -m
    core.transfer``: ``tuning.FINETUNE_LRS`` / ``LORA_LRS``), or, left empty, are ``config.lr`` and
    ``DEFAULT_LORA.lr`` as given (the page's quicker recompute).
    ``progress(fraction, stage)``: stage in {"data", "elmo", "bert", "probe", "tune_finetune", "finetune",
    "tune_lora", "lora", "done"}.
    """
    import torch

    # here, not above: the package imports this module, and `python -m core.transfer.lora` runs lora as
    # __main__, which the package must not have imported first
    from .lora import DEFAULT_LORA, lora_fine_tune

    config.check()
    progress = progress or _no_progress
    log = log or (lambda message: None)
    old_threads = torch.get_num_threads()
    if config.threads:
        torch.set_num_threads(int(config.threads))
    timings: dict[str, float] = {}
    cpu_timings: dict[str, float] = {}
    cost = {**STAGE_COST, "elmo": STAGE_COST["elmo"] if elmo_encoder is not None else 0.0,
            "tune_finetune": STAGE_COST["finetune"] * len(finetune_lrs),
            "tune_lora": STAGE_COST["lora"] * len(lora_lrs)}
    share = {stage: c / sum(cost.values()) for stage, c in cost.items()}
    base = {"value": 0.0}

    def stage_progress(stage):
        offset = base["value"]

        def report(done, total):
            progress(min(1.0, offset + share[stage] * done / max(total, 1)), stage)
        return report

    def start(stage):
        progress(base["value"], stage)
        return time.perf_counter(), time.process_time()

    def finish(stage, started):
        timings[stage] = round(time.perf_counter() - started[0], 1)
        cpu_timings[stage] = round(time.process_time() - started[1], 1)
        base["value"] += share[stage]
        log(f"{stage}: {timings[stage]:.1f} s wall, {cpu_timings[stage]:.1f} s CPU")

    def probe(train_x, test_x) -> dict:
        assert data is not None  # sampled in the "data" stage, before any probe
        return fit_probe(train_x, data.train_labels, test_x, data.test_labels, C_grid=config.C_grid,
                         val_share=config.val_share, seed=config.seed)

    def tuned(stage, lrs, train) -> dict | None:
        if not lrs:
            return None
        t0 = start(stage)
        assert data is not None  # sampled in the "data" stage, before any tuning
        choice = tune_lr(train, data, lrs, config.val_share, progress=stage_progress(stage),
                         log=lambda m: log(f"{stage} {m}"))
        finish(stage, t0)
        return choice

    try:
        t0 = start("data")
        data = data or sample_dataset(config)
        n_train = len(data.train_texts)
        finish("data", t0)

        elmo_result = None
        if elmo_encoder is not None:
            t0 = start("elmo")
            layers = bert_features(elmo_encoder, data.train_texts + data.test_texts,
                                   progress=stage_progress("elmo"))["mean"]
            train_x, test_x = standardised_mix(layers[:, :n_train], layers[:, n_train:])
            elmo_result = {"model": elmo_encoder.name, "mix": "uniform", "pooling": "mean", "standardised": True,
                           "layers": list(elmo_encoder.layer_names), "dim": int(train_x.shape[1]),
                           "frozen_params": count_params(elmo_encoder.model),
                           "fingerprint": model_fingerprint(elmo_encoder), **probe(train_x, test_x)}
            finish("elmo", t0)
            elmo_result.update(seconds=timings["elmo"], cpu_seconds=cpu_timings["elmo"])  # features + the regression

        t0 = start("bert")
        train_f = bert_features(bert_encoder, data.train_texts, progress=stage_progress("bert"))
        test_f = bert_features(bert_encoder, data.test_texts)
        finish("bert", t0)

        t0 = start("probe")
        per_layer: dict[str, list[dict]] = {}
        report = stage_progress("probe")
        n_fits, done = len(POOLINGS) * train_f["cls"].shape[0], 0
        for pooling in POOLINGS:
            per_layer[pooling] = []
            for layer in range(train_f[pooling].shape[0]):
                per_layer[pooling].append(probe(train_f[pooling][layer], test_f[pooling][layer]))
                done += 1
                report(done, n_fits)
        bert_result = {"model": bert_encoder.name, "layers": list(bert_encoder.layer_names),
                       "dim": int(train_f["cls"].shape[-1]),
                       "frozen_params": count_params(bert_encoder.model.base_model),
                       "fingerprint": model_fingerprint(bert_encoder),
                       **{key: {p: [r[key] for r in per_layer[p]] for p in POOLINGS}
                          for key in ("accuracy", "train_accuracy", "correct", "choice")},
                       "trained_params": per_layer["cls"][0]["trained_params"]}
        finish("probe", t0)
        # the features of every layer come from one forward pass; one layer's approach adds one regression
        bert_result.update(seconds=round(timings["bert"] + timings["probe"] / n_fits, 1),
                           cpu_seconds=round(cpu_timings["bert"] + cpu_timings["probe"] / n_fits, 1))

        ft_choice = tuned("tune_finetune", finetune_lrs,
                          lambda split, lr, report: fine_tune(bert_encoder, split, config.replace(lr=lr), report))
        if ft_choice:
            config = config.replace(lr=ft_choice["chosen"])
        t0 = start("finetune")
        ft = fine_tune(bert_encoder, data, config, progress=stage_progress("finetune"))
        ft.update(model=bert_encoder.name, choice=ft_choice)
        finish("finetune", t0)

        lora_choice = tuned("tune_lora", lora_lrs, lambda split, lr, report: lora_fine_tune(
            bert_encoder, split, config, replace(DEFAULT_LORA, lr=lr), report))
        settings = replace(DEFAULT_LORA, lr=lora_choice["chosen"]) if lora_choice else DEFAULT_LORA
        t0 = start("lora")
        lora = lora_fine_tune(bert_encoder, data, config, settings, progress=stage_progress("lora"))
        lora.update(model=bert_encoder.name, choice=lora_choice)
        finish("lora", t0)
        progress(1.0, "done")
    finally:
        if config.threads:
            torch.set_num_threads(old_threads)

    return {
        "version": RESULTS_VERSION,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config": asdict(config),
        "data": {**data.source, "n_train": len(data.train_texts), "n_test": len(data.test_texts),
                 "max_chars": config.max_chars, "seed": config.seed, "examples": data.examples(3)},
        "majority_baseline": max(np.mean(data.test_labels), 1 - np.mean(data.test_labels)).item(),
        # the split every hyper-parameter was chosen on: the last val_share of the training reviews
        "validation": {"n_fit": split_point(n_train, config.val_share),
                       "n_val": n_train - split_point(n_train, config.val_share)},
        "feature_elmo": elmo_result,
        "feature_bert": bert_result,
        "fine_tune": ft,
        "lora": lora,  # absent from files written before LoRA was added: the page says how to recompute
        "timings": {**timings, "total": round(sum(timings.values()), 1)},
        "cpu_timings": {**cpu_timings, "total": round(sum(cpu_timings.values()), 1)},
        "torch_threads": int(config.threads or old_threads),
    }


@heavy
def recompute(bert_name: str, elmo_name: str | None, config: TransferConfig = DEFAULT_CONFIG, *,
              progress: Progress | None = None) -> dict:
    """The page's "Recompute": the experiment on these models, loaded afresh for this run (the shared ones serve
    every other session meanwhile), with the learning rates ``config`` gives. A BERT that cannot be loaded raises
    its LabError; an ELMo that cannot is a skipped row, as the registry's listing already tells the page."""
    from ..models.cache import load_private  # here: the registry imports torch and transformers

    elmo = None
    if elmo_name:
        with contextlib.suppress(LabError):  # reported as a skipped row
            elmo = load_private(elmo_name)
    return run_transfer(load_private(bert_name), elmo, config, progress=progress)
