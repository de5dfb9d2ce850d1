"""Pretrain mini-elmo-zh: forward + backward character language models (see core/models/elmo.py).

    python -m core.train.elmo --vocab assets/models/shared-vocab.txt --out assets/models/mini-elmo-zh --max-minutes 90

Continued training of the shipped model on a mix of corpora, with a learning curve:

    python -m core.train.elmo --vocab assets/models/mini-elmo-zh/vocab.txt --init-from assets/models/mini-elmo-zh \
        --corpus ../shared/corpus/zh_mixed_v1.txt ../shared/corpus/zh_everyday_v1.txt:3 --out <dir> \
        --eval-every 20 --curve assets/eval/elmo_everyday_curve.jsonl

Each training sequence is one sentence, [CLS] chars [SEP]; the loss is the mean of the forward
and backward next-token cross-entropies (the biLM objective maximises their sum).
"""
from __future__ import annotations

import math
import random
import time
from pathlib import Path

import numpy as np
import torch

from ..models.elmo import BiLM, BiLMConfig
from .common import (
    LearningCurve,
    Progress,
    TrainingRun,
    add_run_arguments,
    load_checkpoint,
    lr_at,
    start_run,
    trainer_parser,
)
from .corpus import corpus_spec
from .corpus import training_mix as corpus_mix
from .data import encode_sentences, sentence_batches


def training_mix(tokenizer, specs: list[str], max_len: int, limit: int | None = None) -> list[np.ndarray]:
    """The encoded training sentences of every ``PATH[:N]`` corpus (:func:`core.train.corpus.training_mix`)."""
    return corpus_mix(specs, lambda _path, lines: encode_sentences(tokenizer, lines, max_len), len, limit)


def learning_curve(args, out: Path, vocab: list[str], run: TrainingRun) -> LearningCurve:
    """Points of :func:`core.train.evaluate.elmo_snapshot` on the export, every ``--eval-every`` minutes."""
    from ..models.encoders import ElmoEncoder
    from .evaluate import elmo_snapshot

    corpora = [corpus_spec(spec)[0] for spec in args.corpus]

    def snapshot(model) -> dict:
        model.eval().save(out, vocab)
        return elmo_snapshot(ElmoEncoder("snapshot", out), corpora, args.eval_sentences)

    def summary(point: dict) -> str:
        return f"sense probe {point['sense_probe_best']}, 苹果 {point['senses_苹果']}"

    return LearningCurve(Path(args.curve) if args.curve else out / "curve.jsonl", args.eval_every, run, snapshot,
                         summary)


def main(argv=None) -> None:
    parser = trainer_parser(__doc__, "sentences")
    parser.add_argument("--init-from", default=None,
                        help="an exported model directory to start from when there is no checkpoint "
                             "(its config.json sets the model's shape)")
    parser.add_argument("--eval-every", type=float, default=0, help="minutes of training between curve points")
    parser.add_argument("--curve", default=None, help="JSON-lines file of the learning curve (default OUT/curve.jsonl)")
    parser.add_argument("--eval-sentences", type=int, default=2000, help="held-out sentences per corpus and point")
    parser.add_argument("--embed-dim", type=int, default=256)
    parser.add_argument("--hidden-dim", type=int, default=512)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--max-len", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=4096, help="tokens per batch")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--warmup", type=int, default=200)
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    out, ckpt, tokenizer = start_run(args, "mini-elmo-zh")
    vocab = [t for t, _ in sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])]

    if args.init_from:
        model = BiLM.load(args.init_from)
        model.config.dropout = args.dropout
    else:
        model = BiLM(BiLMConfig(vocab_size=len(vocab), embed_dim=args.embed_dim, hidden_dim=args.hidden_dim,
                                num_layers=args.layers, dropout=args.dropout, bos_id=tokenizer.cls_token_id,
                                eos_id=tokenizer.sep_token_id, pad_id=tokenizer.pad_token_id))
    model = model.to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    if args.export_only:
        load_checkpoint(ckpt, model, optimizer)
        model.eval().save(out, vocab)
        return
    t0 = time.time()
    sequences = training_mix(tokenizer, args.corpus, args.max_len, args.limit_lines)
    print(f"encoded {len(sequences)} sentences in {time.time() - t0:.0f}s", flush=True)
    run = TrainingRun(args, ckpt, model, optimizer)
    curve = learning_curve(args, out, vocab, run) if args.eval_every else None
    if curve and not run.resumed:
        curve.record(model)  # the starting point
    model.train()
    progress = Progress()
    for ids, lengths in sentence_batches(sequences, args.max_tokens, random.Random(args.seed + run.step)):
        step, frac = run.step, run.progress()
        if frac is None:
            break
        if curve and curve.due():
            curve.record(model)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(frac, step, args.lr, args.warmup)
        with torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.bf16):
            fwd, bwd, n_tokens = model.lm_losses(ids.to(args.device), lengths.to(args.device))
        loss = (fwd + bwd) / 2
        run.state["tokens"] = run.state.get("tokens", 0) + n_tokens
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        progress.update(step, loss.item(), n_tokens,
                        f"ppl fwd {math.exp(min(fwd.item(), 20)):.0f} bwd {math.exp(min(bwd.item(), 20)):.0f}")
        run.stepped()
    run.save()
    model.eval().save(out, vocab)
    if curve:
        curve.record(model)
    print(f"saved {out} after {run.step} steps, {run.state['elapsed'] / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
