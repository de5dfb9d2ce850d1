"""Pretrain mini-bert-zh: a real transformers BERT with the MLM and NSP heads.

    python -m core.train.bert --out assets/models/mini-bert-zh --max-minutes 90

Masking follows the original BERT: 15% of the tokens are chosen; of those 80% become [MASK],
10% a random token and 10% stay unchanged. With ``--whole-word F`` (as Chinese BERT-wwm) a share F of
the examples use a jieba word as the unit: words are chosen until 15% of the tokens are covered, and
the 80/10/10 roll is made once per word, so 苹果 is masked as [MASK][MASK], never as 苹[MASK]. Keep F
below 1: a model that never sees one masked character inside a visible word forgets how to fill it
(session 6: F = 1 took masked-character top-1 from 42% to 23%). Sentence pairs are 50% the true next
segment of the same paragraph and 50% a segment from a random paragraph; with ``--single F`` a share F
of the examples is one corpus sentence alone ([CLS] s [SEP], no NSP label), the shape of the app's
inputs. For speed on CPU the MLM output layer is computed only at the chosen positions, and batches
group examples of similar length.
"""
from __future__ import annotations

import copy
import json
import random
import time
from pathlib import Path

import torch
from transformers import BertConfig, BertForPreTraining

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
from .corpus import corpus_spec, join_lines
from .corpus import training_mix as corpus_mix
from .data import NO_PAIR, PairSampler, cached_tokenize, load_tokens, save_tokens


def pretraining_loss(model: BertForPreTraining, batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """MLM loss on the chosen positions only, plus the NSP loss. Returns (loss, mlm logits, nsp logits)."""
    outputs = model.bert(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                         attention_mask=batch["attention_mask"])
    hidden = outputs.last_hidden_state[batch["mask_rows"], batch["mask_cols"]]
    mlm_logits = model.cls.predictions(hidden).float()
    nsp_logits = model.cls.seq_relationship(outputs.pooler_output).float()
    loss = torch.nn.functional.cross_entropy(mlm_logits, batch["mlm_targets"])
    if (batch["nsp_labels"] != NO_PAIR).any():  # a batch of one-segment examples only has no NSP term
        loss = loss + torch.nn.functional.cross_entropy(nsp_logits, batch["nsp_labels"], ignore_index=NO_PAIR)
    return loss, mlm_logits, nsp_logits


def make_model(tokenizer, args) -> BertForPreTraining:
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=args.hidden, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, intermediate_size=args.hidden * 4,
        max_position_embeddings=args.max_len, type_vocab_size=2,
        pad_token_id=tokenizer.pad_token_id,
        hidden_dropout_prob=args.dropout, attention_probs_dropout_prob=args.dropout,
    )
    return BertForPreTraining(config)


def main(argv=None) -> None:
    parser = trainer_parser(__doc__, "paragraphs")
    parser.add_argument("--tokens", default=None,
                        help="train on a token file (--save-tokens) instead of the corpus: for a GPU machine "
                             "that has neither the corpus nor jieba")
    parser.add_argument("--save-tokens", default=None, metavar="FILE",
                        help="write the cleaned, tokenized training split to FILE and stop")
    parser.add_argument("--init-from", default=None,
                        help="exported model directory to start from when there is no checkpoint (fresh optimizer)")
    parser.add_argument("--whole-word", type=float, default=0.0, metavar="F",
                        help="share of examples that mask jieba words as units (BERT-wwm); keep it below 1")
    parser.add_argument("--single", type=float, default=0.0, metavar="F",
                        help="share of one-sentence examples (no second segment, no NSP label)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--dropout", type=float, default=0.1,
                        help="0 suits short compute-bound runs that see the corpus about once")
    parser.add_argument("--warmup", type=int, default=500)
    add_run_arguments(parser)
    parser.add_argument("--workers", type=int, default=0,
                        help="processes that build batches (a GPU outruns one Python sampler)")
    parser.add_argument("--log-every", type=int, default=1,
                        help="read loss and accuracy every N steps (each read waits for the GPU)")
    parser.add_argument("--export-every", type=float, default=0.0, metavar="MIN",
                        help="also export the model every MIN minutes (a run cut off still leaves weights)")
    parser.add_argument("--eval-every", type=float, default=0.0, metavar="MIN",
                        help="every MIN minutes (and at the start and end) export, evaluate on the corpora's "
                             "held-out splits and the whole-word check sets, and append the point to --curve")
    parser.add_argument("--join-lines", nargs="*", default=[], metavar="STEM",
                        help="corpora (file stems) whose consecutive lines are dialogue turns: join them into "
                             "paragraphs so that NSP sees true next turns")
    parser.add_argument("--curve", default=None, metavar="FILE", help="learning-curve file (JSON lines)")
    parser.add_argument("--eval-pairs", type=int, default=1000, help="held-out sentence pairs per corpus and point")
    args = parser.parse_args(argv)
    out, ckpt, tokenizer = start_run(args, "mini-bert-zh")

    if args.export_only:
        model = make_model(tokenizer, args)
        load_checkpoint(ckpt, model, torch.optim.AdamW(model.parameters()))
        export(model, tokenizer, out)
        return
    t0 = time.time()
    if args.tokens:
        paragraphs = load_tokens(Path(args.tokens))
    else:
        paragraphs = training_mix(tokenizer, args.corpus, args.whole_word > 0, ckpt.parent, args.limit_lines,
                                  tuple(args.join_lines))
    print(f"{len(paragraphs)} tokenized paragraphs in {time.time() - t0:.0f}s", flush=True)
    if args.whole_word and paragraphs[0][0].ndim != 2:
        raise SystemExit(f"--whole-word needs word starts, and {args.tokens} was saved without them")
    if args.save_tokens:
        save_tokens(Path(args.save_tokens), paragraphs, args.whole_word > 0)
        return
    special = {tokenizer.convert_tokens_to_ids(t) for t in tokenizer.all_special_tokens}
    sampler = PairSampler(paragraphs, len(tokenizer), special, tokenizer.cls_token_id, tokenizer.sep_token_id,
                          tokenizer.mask_token_id, args.max_len, random.Random(args.seed), args.whole_word,
                          args.single)

    model = make_model(tokenizer, args).to(args.device)
    if args.init_from and not ckpt.exists():
        init_from_export(model, Path(args.init_from))
        print(f"initialised from {args.init_from}", flush=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    run = TrainingRun(args, ckpt, model, optimizer)
    if run.resumed:
        sampler.rng = random.Random(args.seed + run.step)  # new examples, not a replay of the first ones
    curve = learning_curve(args, tokenizer, out, run) if args.eval_every else None
    if curve and not run.resumed:
        curve.record(model)  # the starting point
    model.train()
    progress = Progress()
    last_export = time.time()
    tokens = 0
    for batch in batch_stream(sampler, args.batch_size, args.workers, args.seed + run.step):
        step, frac = run.step, run.progress()
        if frac is None:
            break
        if curve and curve.due():
            curve.record(model)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(frac, step, args.lr, args.warmup)
        seen = int(batch["attention_mask"].sum())
        tokens += seen
        run.state["tokens"] = run.state.get("tokens", 0) + seen
        batch = {k: v.to(args.device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(args.device, dtype=torch.bfloat16, enabled=args.bf16):
            loss, mlm_logits, _ = pretraining_loss(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % args.log_every == 0:
            acc = (mlm_logits.argmax(-1) == batch["mlm_targets"]).float().mean().item()
            progress.update(step, loss.item(), tokens, f"mlm-acc {acc:.3f}")
            tokens = 0
        if args.export_every and time.time() - last_export > args.export_every * 60:
            export(model, tokenizer, out)
            last_export = time.time()
        run.stepped()
    run.save()
    export(model, tokenizer, out)
    if curve:
        curve.record(model)
    print(f"saved {out} after {run.step} steps, {run.state['elapsed'] / 60:.1f} min", flush=True)


def training_mix(tokenizer, specs: list[str], segment: bool, cache_dir: Path, limit: int | None = None,
                 joined: tuple[str, ...] = ()):
    """The tokenized paragraphs of every ``PATH[:N]`` corpus (:func:`core.train.corpus.training_mix`); the lines
    of the corpora named (by file stem) in ``joined`` are first joined into paragraphs (:func:`join_lines`)."""
    def prepare(path: Path, lines: list[str]) -> list:
        lines = join_lines(lines) if path.stem in joined else lines
        return cached_tokenize(tokenizer, lines, segment, cache_dir / f"corpus-tokens-{path.stem}.xz")

    return corpus_mix(specs, prepare, lambda paragraph: sum(s.shape[-1] for s in paragraph), limit)


def learning_curve(args, tokenizer, out: Path, run: TrainingRun) -> LearningCurve:
    """Points of :func:`core.train.evaluate.evaluate_snapshot` on the export, every ``--eval-every`` minutes."""
    from ..models.transformers_loading import load_bert
    from .evaluate import evaluate_snapshot

    corpora = [corpus_spec(spec)[0] for spec in args.corpus]

    def snapshot(model) -> dict:
        export(model, tokenizer, out)
        return evaluate_snapshot(load_bert(str(out)), corpora, args.eval_pairs)

    def summary(point: dict) -> str:
        return ", ".join(f"{k} {v['hits']}/{v['sentences']}" for k, v in point.items()
                         if isinstance(v, dict) and "hits" in v)

    return LearningCurve(Path(args.curve) if args.curve else out / "curve.jsonl", args.eval_every, run, snapshot,
                         summary)


class _BatchStream(torch.utils.data.IterableDataset):
    """The sampler's batches, each worker process drawing from its own seed."""

    def __init__(self, sampler: PairSampler, batch_size: int, seed: int):
        self.sampler, self.batch_size, self.seed = sampler, batch_size, seed

    def __iter__(self):
        worker = torch.utils.data.get_worker_info()
        self.sampler.rng = random.Random(self.seed * 1009 + (worker.id if worker else 0))
        return self.sampler.batches(self.batch_size)


def batch_stream(sampler: PairSampler, batch_size: int, workers: int, seed: int):
    """Endless batches, built in this process or, with ``workers``, in that many processes."""
    if not workers:
        return sampler.batches(batch_size)
    return iter(torch.utils.data.DataLoader(_BatchStream(sampler, batch_size, seed), batch_size=None,
                                            num_workers=workers, prefetch_factor=8,
                                            pin_memory=torch.cuda.is_available()))


def init_from_export(model: BertForPreTraining, directory: Path) -> None:
    """Start from shipped fp16 weights (the resume path when the training checkpoint is gone)."""
    from safetensors.torch import load_file

    weights = load_file(directory / "model.safetensors")
    missing, unexpected = model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=False)
    # Tied decoder weights are stored once; anything else missing means a different architecture.
    missing = [k for k in missing if not k.startswith("cls.predictions.decoder.")]
    if missing or unexpected:
        raise SystemExit(f"{directory} does not match the model shape: missing {missing}, unexpected {unexpected}")


def export(model: BertForPreTraining, tokenizer, out: Path) -> None:
    """fp16 safetensors via save_pretrained, plus the tokenizer files, loadable with from_pretrained(out)."""
    out.mkdir(parents=True, exist_ok=True)
    # A copy: the model may still be training (--export-every), and fp16 must not touch its weights.
    copy.deepcopy(model).cpu().half().save_pretrained(out, safe_serialization=True)
    declare_float32(out / "config.json")
    tokenizer.save_pretrained(out)
    # transformers 5 writes only tokenizer.json; ship BERT's classic vocab.txt too.
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    (out / "vocab.txt").write_text("".join(token + "\n" for token, _ in vocab), encoding="utf-8")


def declare_float32(config_path: Path) -> None:
    """Make the config ask for float32 although the weights are stored in fp16: ``from_pretrained`` loads a
    model in its config's dtype, and the lab computes in float32, so a researcher's plain
    ``AutoModel.from_pretrained(dir)`` must give the lab's numbers, not fp16 ones."""
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["dtype"] = "float32"
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
