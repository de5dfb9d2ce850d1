"""The saved results read as typed values for display: the page shows a ``TransferView``, the JSON file
(``results``) stays the stored format. Files written before LoRA, before the approaches were timed or
before the hyper-parameters were chosen on a validation split read with ``None`` in those places.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..compute.stats import wilson_interval
from .features import POOLINGS
from .results import load_results, stale_models


@dataclass(frozen=True)
class Choice:
    """One hyper-parameter chosen on the validation split (``tuning.choose``)."""
    name: str  # "C" or "lr"
    chosen: float
    val_accuracy: dict[str, float]  # candidate (as written, e.g. "0.001") -> validation accuracy
    n_fit: int  # training reviews the candidates were trained on
    n_val: int  # validation reviews they were scored on


def _choice(entry: dict | None) -> Choice | None:
    return Choice(entry["name"], float(entry["chosen"]), dict(entry["val_accuracy"]), int(entry["n_fit"]),
                  int(entry["n_val"])) if entry else None


@dataclass(frozen=True, kw_only=True)
class Approach:
    """One way of using the pretrained model on the task, as measured on the held-out reviews."""
    model: str
    accuracy: float
    n_test: int
    trained_params: int
    frozen_params: int
    seconds: float | None = None  # wall clock; None in files written before the approaches were timed
    cpu_seconds: float | None = None
    correct: str | None = None  # "1"/"0" per test review (paired comparisons); None in older files
    choice: Choice | None = None  # its hyper-parameter, chosen on the validation split; None: given, not chosen

    @property
    def interval(self) -> tuple[float, float]:
        """95% Wilson interval of the accuracy on the n_test reviews."""
        return wilson_interval(self.accuracy, self.n_test)


@dataclass(frozen=True, kw_only=True)
class ElmoFeatures(Approach):
    """Frozen ELMo features + logistic regression: the uniform mix of the layers, mean over the review."""
    standardised: bool  # each layer standardised before the mix (the ELMo page's features); False in older files


@dataclass(frozen=True, kw_only=True)
class BertFeatures(Approach):
    """Frozen BERT features + logistic regression, one per (pooling, layer); ``accuracy`` is the top
    layer's [CLS] (what the fine-tuned models classify)."""
    layers: list[str]
    dim: int
    per_layer: dict[str, list[float]]  # pooling -> accuracy per layer (0 = embeddings)
    per_layer_correct: dict[str, list[str]] | None = None  # pooling -> per layer, each test review's outcome
    per_layer_choice: dict[str, list[Choice]] | None = None  # pooling -> per layer, the chosen C

    def at(self, pooling: str, layer: int) -> float:
        return self.per_layer[pooling][layer]

    def probe(self, pooling: str, layer: int) -> Approach:
        """The frozen features of one layer and pooling + logistic regression, as an approach of its own."""
        def pick(table: dict | None):
            return table[pooling][layer] if table else None

        return Approach(**{**{k: getattr(self, k) for k in ("model", "n_test", "trained_params", "frozen_params",
                                                              "seconds", "cpu_seconds")},
                           "accuracy": self.at(pooling, layer), "correct": pick(self.per_layer_correct),
                           "choice": pick(self.per_layer_choice)})


@dataclass(frozen=True, kw_only=True)
class Trained(Approach):
    """Fine-tuning (every parameter) or LoRA (adapters and head): the training curve and what was trained."""
    encoder_params: int
    head_params: int
    curve_steps: list[int]
    curve_accuracy: list[float]
    losses: list[float] = field(default_factory=list)
    lr: float  # the learning rate it was trained with
    adapter_params: int | None = None  # LoRA only
    settings: dict = field(default_factory=dict)  # LoRA only: r, alpha, targets, lr (empty for fine-tuning)
    train_accuracy: float | None = None  # on its own training reviews; None in files written before it was stored


@dataclass(frozen=True, kw_only=True)
class TransferView:
    raw: dict  # the results as stored (the JSON download)
    created: str
    elmo: ElmoFeatures | None  # None: the ELMo model was not available
    bert: BertFeatures
    finetune: Trained
    lora: Trained | None  # None in files written before LoRA was added
    config: dict  # core.transfer.TransferConfig as saved: n_train, n_test, steps, batch_size, lr, …
    examples: list[dict]
    majority_baseline: float | None
    threads: int
    minutes: float  # the whole run, wall clock
    cpu_minutes: float
    validation: dict | None  # {"n_fit", "n_val"}: the split every hyper-parameter was chosen on; None in older files
    tuning_cpu_seconds: dict[str, float]  # "finetune" / "lora": CPU time of their learning-rate choice (if made)

    @property
    def n_test(self) -> int:
        return int(self.config["n_test"])

    def lora_share(self) -> float | None:
        """LoRA's trained parameters as a share of full fine-tuning's."""
        return self.lora.trained_params / max(self.finetune.trained_params, 1) if self.lora else None


def _approach(entry: dict, n_test: int) -> dict:
    return {"model": entry["model"], "accuracy": float(entry["accuracy"]), "n_test": n_test,
            "trained_params": int(entry["trained_params"]), "frozen_params": int(entry["frozen_params"]),
            "seconds": entry.get("seconds"), "cpu_seconds": entry.get("cpu_seconds"), "correct": entry.get("correct"),
            "choice": _choice(entry.get("choice"))}


def _trained(entry: dict, n_test: int, lr: float) -> Trained:
    return Trained(**_approach(entry, n_test), lr=float(lr), encoder_params=int(entry.get("encoder_params", 0)),
                   head_params=int(entry.get("head_params", 0)),
                   curve_steps=[p["step"] for p in entry["curve"]],
                   curve_accuracy=[p["accuracy"] for p in entry["curve"]],
                   losses=list(entry.get("losses", [])), adapter_params=entry.get("adapter_params"),
                   settings=entry.get("settings") or {}, train_accuracy=entry.get("train_accuracy"))


def _per_pooling(table: dict | None, read=lambda x: x) -> dict | None:
    return {p: [read(x) for x in table[p]] for p in POOLINGS} if table else None


def read_view(results: dict) -> TransferView:
    """``results`` (``load_results`` or ``run_transfer``) as the page shows them."""
    n_test = int(results["config"]["n_test"])
    bert = results["feature_bert"]
    per_layer = _per_pooling(bert["accuracy"], float)
    assert per_layer is not None  # every results file has the probes' accuracies
    top = len(bert["layers"]) - 1

    def top_cls(table: dict | None):  # the approach itself is the top layer's [CLS]: what fine-tuning classifies
        return table["cls"][top] if table else None

    features = BertFeatures(**_approach({**bert, "accuracy": per_layer["cls"][top],
                                         "correct": top_cls(bert.get("correct")),
                                         "choice": top_cls(bert.get("choice"))}, n_test),
                            layers=list(bert["layers"]), dim=int(bert.get("dim", 256)), per_layer=per_layer,
                            per_layer_correct=_per_pooling(bert.get("correct")),
                            per_layer_choice=_per_pooling(bert.get("choice"), _choice))
    elmo = results.get("feature_elmo")
    return TransferView(
        raw=results, created=results.get("created", "?"),
        elmo=ElmoFeatures(**_approach(elmo, n_test), standardised=bool(elmo.get("standardised"))) if elmo else None,
        bert=features, finetune=_trained(results["fine_tune"], n_test, results["config"]["lr"]),
        lora=_trained(results["lora"], n_test, results["lora"]["settings"]["lr"]) if results.get("lora") else None,
        config=dict(results["config"]), examples=list((results.get("data") or {}).get("examples") or []),
        majority_baseline=results.get("majority_baseline"), threads=int(results.get("torch_threads", 1)),
        minutes=results.get("timings", {}).get("total", 0) / 60,
        cpu_minutes=results.get("cpu_timings", {}).get("total", 0) / 60,
        validation=results.get("validation"),
        tuning_cpu_seconds={stage: seconds for stage in ("finetune", "lora")
                            if (seconds := results.get("cpu_timings", {}).get(f"tune_{stage}")) is not None},
    )


@dataclass(frozen=True)
class Shown:
    """What the transfer page shows."""
    view: TransferView | None  # None: no results yet
    origin: str  # "session": this session's recomputation; "file": the results file; "none"
    stale: list[str]  # the experiment's models whose weights changed since the results were computed


NOTHING_SHOWN = Shown(None, "none", [])


def shown_results(session: dict | None, path: Path | str, *, bert: str, elmo: str | None,
                  load: Callable[[Path | str], dict | None] = load_results) -> Shown:
    """This session's recomputation (``session``), else the results file at ``path`` (read by ``load``: the page
    passes its cached reader), else nothing; with the models among ``bert``/``elmo`` (the experiment's) whose
    weights differ from the ones the results were computed on. Raises LabError for a file it cannot read."""
    if isinstance(session, dict):
        results, origin = session, "session"
    else:
        loaded = load(path)  # None: no file yet
        if loaded is None:
            return NOTHING_SHOWN
        results, origin = loaded, "file"
    return Shown(read_view(results), origin, stale_models(results, {"feature_bert": bert, "feature_elmo": elmo}))
