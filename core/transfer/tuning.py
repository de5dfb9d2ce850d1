"""Every approach gets the same tuning budget on the same validation split: the last ``val_share`` of the
(shuffled) training reviews (150 of 600). Each tries the five candidates of its one hyper-parameter there
(the probes' C from ``TransferConfig.C_grid``, the learning rate of full fine-tuning and of LoRA), trained
on the other training reviews; the best is then trained on all the training reviews and scored once on the
test reviews, which never take part in a choice.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from .data import Dataset

FINETUNE_LRS = (3e-5, 1e-4, 3e-4, 5e-4, 1e-3)  # full fine-tuning: LoRA's grid one decade lower
LORA_LRS = (3e-4, 1e-3, 3e-3, 5e-3, 1e-2)


def split_point(n_train: int, share: float) -> int:
    """How many training reviews the candidates are trained on; the rest, the last ``share``, validate."""
    return n_train - int(n_train * share)


def validation_split(data: Dataset, share: float = 0.25) -> Dataset:
    """Train on the first reviews of the training part, "test" on its last ``share``: tuning on this
    split leaves the test reviews unseen."""
    cut = split_point(len(data.train_texts), share)
    return Dataset(data.train_texts[:cut], data.train_labels[:cut], data.train_texts[cut:], data.train_labels[cut:],
                   data.source)


def choose(name: str, candidates: Sequence[float], score: Callable[[float], float], *, n_fit: int,
           n_val: int) -> dict:
    """``score(value)`` (validation accuracy) for every candidate; the best is chosen, a tie going to the
    first candidate (the grids run from the smallest C, the strongest regularisation, and the smallest
    learning rate). JSON-ready: ``{"name", "chosen", "val_accuracy": {str(value): accuracy}, "n_fit", "n_val"}``."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    scores = [float(score(value)) for value in candidates]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return {"name": name, "chosen": float(candidates[best]),
            "val_accuracy": {f"{float(v):g}": s for v, s in zip(candidates, scores)}, "n_fit": int(n_fit),
            "n_val": int(n_val)}


def tune_lr(train: Callable[..., dict], data: Dataset, lrs: Sequence[float], share: float, *,
            progress: Callable[[int, int], None] | None = None, log: Callable[[str], None] | None = None) -> dict:
    """The learning rate of ``train(split, lr, progress)`` (a fine-tuning run returning its held-out
    ``accuracy``) chosen on ``validation_split(data, share)``; ``choose``'s record of it."""
    split = validation_split(data, share)
    runs = iter(range(len(lrs)))

    def score(lr: float) -> float:
        k = next(runs)
        report = None if progress is None else (lambda done, total: progress(k * total + done, len(lrs) * total))
        accuracy = train(split, lr, report)["accuracy"]
        if log:
            log(f"lr {lr:g}: validation accuracy {accuracy:.3f} on {len(split.test_texts)}")
        return accuracy

    return choose("lr", lrs, score, n_fit=len(split.train_texts), n_val=len(split.test_texts))
