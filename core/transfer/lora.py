"""LoRA on the sentiment task of ``core.transfer``: the lecture's 参数高效微调 (今天怎么做), measured.

LoRA (Hu et al. 2021, arXiv:2106.09685) keeps a pre-trained weight matrix W frozen and learns a low-rank
update beside it: h = W x + (α / r) · B A x, with A (r × d) and B (d × r) and B starting at zero, so
training starts exactly from the pre-trained model. As in most of the paper's experiments, the adapted
matrices are the attention's query and value projections; the new classification layer is trained whole.

Built with the ``peft`` library the way its documentation does (``LoraConfig(task_type=SEQ_CLS)``,
``get_peft_model``) and trained by ``core.transfer.fine_tune``, the loop of full fine-tuning: the same
copy of mini-bert-zh, the same seeded head, batches and number of steps. Only what is trained and the
learning rate differ. ``python -m core.transfer`` chooses each one's learning rate on the same validation
split of the training reviews (the test reviews stay unseen); ``python -m core.transfer.lora`` makes that
choice alone, e.g. for another rank.

Pure module: no Streamlit; nothing is written to disk (the adapters live only in memory).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from ..guard.errors import LabError
from ..models.catalogue import DEFAULT_BERT
from .data import DEFAULT_CONFIG, Dataset, TransferConfig, sample_dataset
from .finetune import fine_tune
from .tuning import LORA_LRS, tune_lr


@dataclass(frozen=True)
class LoraSettings:
    r: int = 8  # rank of the update B A
    alpha: int = 16  # the update is scaled by alpha / r
    dropout: float = 0.1  # on the adapters' input
    lr: float = 5e-3  # chosen on the validation split by `python -m core.transfer` (test: the shipped results)
    targets: tuple[str, ...] = ("query", "value")  # BERT's attention projections (module names)

    def peft_config(self):
        from peft import LoraConfig, TaskType

        return LoraConfig(task_type=TaskType.SEQ_CLS, r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout,
                          target_modules=list(self.targets))


DEFAULT_LORA = LoraSettings()


class AddLora:
    """``fine_tune``'s ``prepare`` hook: wraps the classifier with peft (the pre-trained weights frozen, the
    head trained: SEQ_CLS puts ``classifier`` in ``modules_to_save``) and keeps the adapters' size."""

    def __init__(self, settings: LoraSettings):
        self.settings = settings
        self.adapter_params = 0
        self.model = None

    def __call__(self, model):
        from peft import get_peft_model

        self.model = adapted = get_peft_model(model, self.settings.peft_config())
        self.adapter_params = int(sum(p.numel() for n, p in adapted.named_parameters() if "lora_" in n))
        return adapted


def lora_fine_tune(encoder, data: Dataset, config: TransferConfig, settings: LoraSettings = DEFAULT_LORA,
                   progress: Callable[[int, int], None] | None = None, *, hook: AddLora | None = None) -> dict:
    """``fine_tune`` with LoRA adapters: held-out accuracy, the curve, trained (adapters + head) and frozen
    parameter counts, seconds. ``hook`` (its settings replace ``settings``): pass one to inspect the trained
    model afterwards (tests)."""
    hook = hook or AddLora(settings)
    result = fine_tune(encoder, data, config.replace(lr=hook.settings.lr), progress, prepare=hook)
    return {**result, "adapter_params": hook.adapter_params, "settings": asdict(hook.settings)}


# ---- choosing the learning rate -------------------------------------------------------------------------
def sweep(encoder, lrs: Sequence[float], config: TransferConfig = DEFAULT_CONFIG,
          settings: LoraSettings = DEFAULT_LORA, log: Callable[[str], None] = print) -> dict:
    """LoRA with ``settings`` at each learning rate on the validation split, one line each; the choice
    (``core.transfer.tune_lr``, the same as ``python -m core.transfer`` makes for the default settings)."""
    import torch

    old_threads = torch.get_num_threads()
    if config.threads:
        torch.set_num_threads(int(config.threads))
    try:
        return tune_lr(lambda split, lr, progress: lora_fine_tune(encoder, split, config, replace(settings, lr=lr),
                                                                  progress),
                       sample_dataset(config), lrs, config.val_share, log=log)
    finally:
        if config.threads:
            torch.set_num_threads(old_threads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.transfer.lora", description=(
        "Choose LoRA's learning rate on a validation split of the training reviews (the test reviews "
        "stay unseen), e.g. for another rank; python -m core.transfer makes this choice for the default."))
    parser.add_argument("--bert", default=DEFAULT_BERT, help="BERT-family model (default: %(default)s)")
    parser.add_argument("--lr", type=float, nargs="+", default=list(LORA_LRS),
                        help="LoRA learning rates to try (default: %(default)s)")
    parser.add_argument("--r", type=int, default=DEFAULT_LORA.r, help="rank (default: %(default)s)")
    parser.add_argument("--alpha", type=int, default=DEFAULT_LORA.alpha, help="alpha (default: %(default)s)")
    args = parser.parse_args(argv)

    from ..models.cache import load_encoder

    started = time.perf_counter()
    try:
        encoder = load_encoder(args.bert)
        choice = sweep(encoder, args.lr, settings=replace(DEFAULT_LORA, r=args.r, alpha=args.alpha))
    except LabError as err:
        print(f"error: {err.message('en', markdown=False)}", file=sys.stderr)
        return 2
    print(f"chosen lr {choice['chosen']:g}; done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
