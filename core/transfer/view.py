"""The saved results read as typed values for display: the page shows a ``TransferView``, the JSON file
(``results``) stays the stored format. Files written before LoRA or before the approaches were timed
read with ``None`` in those places.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .features import POOLINGS


@dataclass(frozen=True, kw_only=True)
class Approach:
    """One way of using the pretrained model on the task, as measured on the held-out reviews."""
    model: str
    accuracy: float
    trained_params: int
    frozen_params: int
    seconds: float | None = None  # wall clock; None in files written before the approaches were timed
    cpu_seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class BertFeatures(Approach):
    """Frozen BERT features + logistic regression, one per (pooling, layer); ``accuracy`` is the top
    layer's [CLS] (what the fine-tuned models classify)."""
    layers: list[str]
    dim: int
    per_layer: dict[str, list[float]]  # pooling -> accuracy per layer (0 = embeddings)

    def at(self, pooling: str, layer: int) -> float:
        return self.per_layer[pooling][layer]


@dataclass(frozen=True, kw_only=True)
class Trained(Approach):
    """Fine-tuning (every parameter) or LoRA (adapters and head): the training curve and what was trained."""
    encoder_params: int
    head_params: int
    curve_steps: list[int]
    curve_accuracy: list[float]
    losses: list[float] = field(default_factory=list)
    adapter_params: int | None = None  # LoRA only
    settings: dict | None = None  # LoRA only: r, alpha, targets, lr


@dataclass(frozen=True, kw_only=True)
class TransferView:
    raw: dict  # the results as stored (the JSON download)
    created: str
    elmo: Approach | None  # None: the ELMo model was not available
    bert: BertFeatures
    finetune: Trained
    lora: Trained | None  # None in files written before LoRA was added
    config: dict  # core.transfer.TransferConfig as saved: n_train, n_test, steps, batch_size, lr, …
    examples: list[dict]
    majority_baseline: float | None
    threads: int
    minutes: float  # the whole run, wall clock
    cpu_minutes: float

    @property
    def n_test(self) -> int:
        return int(self.config["n_test"])

    def lora_share(self) -> float | None:
        """LoRA's trained parameters as a share of full fine-tuning's."""
        return self.lora.trained_params / max(self.finetune.trained_params, 1) if self.lora else None


def _approach(entry: dict) -> dict:
    return {"model": entry["model"], "accuracy": float(entry["accuracy"]), "trained_params": int(entry["trained_params"]),
            "frozen_params": int(entry["frozen_params"]), "seconds": entry.get("seconds"),
            "cpu_seconds": entry.get("cpu_seconds")}


def _trained(entry: dict) -> Trained:
    return Trained(**_approach(entry), encoder_params=int(entry.get("encoder_params", 0)),
                   head_params=int(entry.get("head_params", 0)),
                   curve_steps=[p["step"] for p in entry["curve"]], curve_accuracy=[p["accuracy"] for p in entry["curve"]],
                   losses=list(entry.get("losses", [])), adapter_params=entry.get("adapter_params"),
                   settings=entry.get("settings"))


def read_view(results: dict) -> TransferView:
    """``results`` (``load_results`` or ``run_transfer``) as the page shows them."""
    bert = results["feature_bert"]
    per_layer = {p: [float(a) for a in bert["accuracy"][p]] for p in POOLINGS}
    top = len(bert["layers"]) - 1
    elmo = results.get("feature_elmo")
    return TransferView(
        raw=results, created=results.get("created", "?"),
        elmo=Approach(**_approach(elmo)) if elmo else None,
        bert=BertFeatures(**{**_approach({**bert, "accuracy": per_layer["cls"][top]})}, layers=list(bert["layers"]),
                          dim=int(bert.get("dim", 256)), per_layer=per_layer),
        finetune=_trained(results["fine_tune"]),
        lora=_trained(results["lora"]) if results.get("lora") else None,
        config=dict(results["config"]), examples=list((results.get("data") or {}).get("examples") or []),
        majority_baseline=results.get("majority_baseline"), threads=int(results.get("torch_threads", 1)),
        minutes=results.get("timings", {}).get("total", 0) / 60, cpu_minutes=results.get("cpu_timings", {}).get("total", 0) / 60,
    )
