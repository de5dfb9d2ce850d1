"""Command-line interface: JSON on stdout, messages on stderr, exit 2 with a clear message on bad input.

    python -m core models
    python -m core embed --model mini-bert-zh --word 苹果 我吃了一个苹果 苹果昨天发布了新手机
    python -m core fill-mask --model mini-bert-zh 我吃了一个[MASK][MASK]
    python -m core mix --layers '[[1,0,0],[0,1,0],[0,0,1]]' --weights '[0.2,0.3,0.5]' --gamma 2
    python -m core attention --model mini-bert-zh 我吃了一个苹果 --layer 1 --head 0
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict

from .errors import LabError

LANG = os.environ.get("LAB_LANG", "en")


def _emit(payload) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")


def _read_sentences(args) -> list[str]:
    sentences = list(args.sentences)
    if args.input:
        try:
            with open(args.input, "rb") as handle:
                raw = handle.read()
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LabError("not_text") from exc
        except OSError as exc:
            raise LabError("bad_value", detail=f"cannot read {args.input}: {exc.strerror}") from exc
        if "\x00" in text:
            raise LabError("not_text")
        sentences.extend(line.strip() for line in text.splitlines())
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        raise LabError("empty_input")
    return sentences


def cmd_models(args) -> None:
    from .registry import list_models

    _emit([{**{k: v for k, v in asdict(info).items() if k != "problem"}, "reason": info.reason}
           for info in list_models()])


def cmd_embed(args) -> None:
    import numpy as np

    from .occurrences import MAX_SENTENCES, word_vectors
    from .registry import load_encoder

    sentences = _read_sentences(args)
    encoder = load_encoder(args.model)
    chunk = MAX_SENTENCES
    show_progress = len(sentences) > chunk and sys.stderr.isatty()
    total_found = 0
    for start in range(0, len(sentences), chunk):
        part = sentences[start:start + chunk]
        result = word_vectors(encoder, part, args.word)
        if result.oov:
            raise LabError("bad_value", detail=f"“{args.word}” is not in {encoder.name}'s vocabulary (OOV)")
        for occ in result.occurrences:
            total_found += 1
            _emit({"sentence_index": start + occ.sentence_index, "sentence": occ.sentence, "start": occ.start,
                   "end": occ.end, "layers": np.round(occ.layers.astype(np.float64), 6).tolist()})
        for missing in result.missing:
            print(f"sentence {start + missing}: “{args.word}” not found", file=sys.stderr)
        if show_progress:
            done = min(start + chunk, len(sentences))
            print(f"\rembedded {done}/{len(sentences)} sentences", end="", file=sys.stderr, flush=True)
    if show_progress:
        print(file=sys.stderr)
    if not total_found:
        raise LabError("bad_value", detail=f"“{args.word}” occurs in none of the sentences")


def cmd_fill_mask(args) -> None:
    from .encoders import BertEncoder
    from .fillmask import fill_mask, word_candidates
    from .registry import load_encoder

    encoder = load_encoder(args.model)
    if not isinstance(encoder, BertEncoder):
        raise LabError("bad_value", detail=f"{args.model} is not a masked language model")
    hide = not args.show_all
    result = fill_mask(encoder, " ".join(args.sentence), top_k=args.top_k, hide_vulgar=hide)
    runs = word_candidates(encoder, result.sentence, top_n=args.top_k, hide_vulgar=hide)
    _emit({"sentence": result.sentence, "masks": [
        {"index": slot.index, "candidates": [{"token": c.token, "score": round(c.score, 6)} for c in slot.candidates],
         "hidden": slot.hidden}
        for slot in result.masks], "words": [
        {"first": run.first, "length": run.length, "hidden": run.hidden,
         "candidates": [{"word": w.word, "score": round(w.score, 6)} for w in run.words]}
        for run in runs]})


def _json_arg(text: str, what: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LabError("bad_value", detail=f"{what} is not valid JSON ({exc.msg})") from exc


def cmd_mix(args) -> None:
    from .mixing import scalar_mix

    layers = _json_arg(args.layers, "--layers")
    weights = _json_arg(args.weights, "--weights")
    try:
        mixed = scalar_mix(layers, weights, args.gamma, pre_softmax=args.softmax)
    except (ValueError, TypeError) as exc:
        raise LabError("bad_value", detail=str(exc)) from exc
    _emit([round(float(x), 10) for x in mixed.ravel()] if mixed.ndim == 1 else mixed.round(10).tolist())


def cmd_attention(args) -> None:
    from .encoders import BertEncoder
    from .registry import load_encoder

    encoder = load_encoder(args.model)
    if not isinstance(encoder, BertEncoder):
        raise LabError("bad_value", detail=f"{args.model} has no attention (not a transformer)")
    sentence = " ".join(args.sentence).strip()
    encoding = encoder.encode([sentence], attentions=True)[0]
    att = encoding.attentions
    layers = range(att.shape[0]) if args.layer is None else [args.layer]
    heads = range(att.shape[1]) if args.head is None else [args.head]
    for name, value, limit in (("--layer", args.layer, att.shape[0]), ("--head", args.head, att.shape[1])):
        if value is not None and not 0 <= value < limit:
            raise LabError("bad_value", detail=f"{name} must be between 0 and {limit - 1}")
    _emit({"sentence": sentence, "tokens": encoding.tokens, "matrices": [
        {"layer": l, "head": h, "attention": att[l, h].round(6).tolist()} for l in layers for h in heads]})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="ELMo→BERT Lab engine")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("models", help="list models").set_defaults(func=cmd_models)
    embed = sub.add_parser("embed", help="per-layer vectors of every occurrence of a word (JSON Lines)")
    embed.add_argument("--model", default="mini-bert-zh")
    embed.add_argument("--word", required=True)
    embed.add_argument("--input", help="UTF-8 text file, one sentence per line")
    embed.add_argument("sentences", nargs="*")
    embed.set_defaults(func=cmd_embed)
    fill = sub.add_parser("fill-mask", help="top-k candidates for every [MASK]")
    fill.add_argument("--model", default="mini-bert-zh")
    fill.add_argument("--top-k", type=int, default=5)
    fill.add_argument("--show-all", action="store_true",
                      help="also list candidates that complete a vulgar word (hidden by default)")
    fill.add_argument("sentence", nargs="+")
    fill.set_defaults(func=cmd_fill_mask)
    mix = sub.add_parser("mix", help="ELMo scalar mix: gamma * sum_j s_j h_j")
    mix.add_argument("--layers", required=True, help="JSON list of layer vectors")
    mix.add_argument("--weights", required=True, help="JSON list of layer weights s_j")
    mix.add_argument("--gamma", type=float, default=1.0)
    mix.add_argument("--softmax", action="store_true", help="weights are pre-softmax")
    mix.set_defaults(func=cmd_mix)
    att = sub.add_parser("attention", help="attention matrices of a sentence")
    att.add_argument("--model", default="mini-bert-zh")
    att.add_argument("--layer", type=int)
    att.add_argument("--head", type=int)
    att.add_argument("sentence", nargs="+")
    att.set_defaults(func=cmd_attention)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except LabError as err:
        print(f"error: {err.message(LANG)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
