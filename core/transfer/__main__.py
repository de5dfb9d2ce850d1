"""``python -m core.transfer``: runs the whole experiment on the named models, prints the progress on
stderr and a summary on stdout, and writes ``assets/transfer_results.json``, which the page shows
instantly in class.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from .. import transfer  # its docstring's first line is the CLI's description
from ..guard.errors import LabError
from .data import DEFAULT_CONFIG, TransferConfig
from .results import RESULTS_PATH, save_results, summary_lines
from .run import BERT_MODEL, ELMO_MODEL, run_transfer
from .tuning import FINETUNE_LRS, LORA_LRS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.transfer", description=transfer.__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(RESULTS_PATH), help="where to write the JSON (default: %(default)s)")
    parser.add_argument("--bert", default=BERT_MODEL, help="BERT-family model (default: %(default)s)")
    parser.add_argument("--elmo", default=ELMO_MODEL or "none", help="ELMo model, or 'none' (default: %(default)s)")
    parser.add_argument("--train", type=int, default=DEFAULT_CONFIG.n_train)
    parser.add_argument("--test", type=int, default=DEFAULT_CONFIG.n_test)
    parser.add_argument("--steps", type=int, default=DEFAULT_CONFIG.steps)
    parser.add_argument("--finetune-lrs", type=float, nargs="+", default=list(FINETUNE_LRS),
                        help="full fine-tuning's learning rates, one chosen on the validation split "
                        "(default: %(default)s)")
    parser.add_argument("--lora-lrs", type=float, nargs="+", default=list(LORA_LRS),
                        help="LoRA's learning rates, one chosen on the validation split (default: %(default)s)")
    parser.add_argument("--no-tune", action="store_true",
                        help="no learning-rate choice: --lr for full fine-tuning, core.transfer.lora's default "
                        "for LoRA")
    parser.add_argument("--lr", type=float, default=DEFAULT_CONFIG.lr, help="with --no-tune (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_CONFIG.batch_size)
    parser.add_argument("--seed", type=int, default=DEFAULT_CONFIG.seed)
    parser.add_argument("--threads", type=int, default=DEFAULT_CONFIG.threads,
                        help="torch threads (default: %(default)s)")
    args = parser.parse_args(argv)

    from ..models.cache import load_encoder

    config = TransferConfig(n_train=args.train, n_test=args.test, steps=args.steps, lr=args.lr,
                            batch_size=args.batch_size, seed=args.seed, threads=args.threads)
    started = time.perf_counter()
    last: dict[str, Any] = {"stage": None, "pct": -10}

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
                               log=lambda m: print(f"  done {m}", file=sys.stderr, flush=True),
                               finetune_lrs=() if args.no_tune else args.finetune_lrs,
                               lora_lrs=() if args.no_tune else args.lora_lrs)
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
