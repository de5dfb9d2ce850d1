"""Command-line interface: JSON on stdout, messages on stderr, exit 2 with a clear message on bad input.

    python -m core models
    python -m core embed --model mini-bert-zh --word 苹果 我吃了一个苹果 苹果昨天发布了新手机
    python -m core embed --word 苹果 --input corpus.txt --format projector --out projector/   # or csv, parquet
    python -m core attention --format bertviz-json --out attention.json 我吃了一个苹果
    python -m core fill-mask --model mini-bert-zh 我吃了一个[MASK][MASK]
    python -m core mix --layers '[[1,0,0],[0,1,0],[0,0,1]]' --weights '[0.2,0.3,0.5]' --gamma 2
    python -m core attention --model mini-bert-zh 我吃了一个苹果 --layer 1 --head 0
    python -m core bilm --bert mini-bert-zh 我吃了一个苹果
    python -m core right-context --bert mini-bert-zh 苹果昨天发布了新手机 苹果昨天掉在了地上
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import asdict

from .guard import safe_json
from .guard.errors import LabError
from .guard.validation import BAD_SENTENCE_POLICIES
from .interface.cli_io import (
    EMBED_FORMATS,
    MAX_INPUT_SENTENCES,
    VectorSink,
    count_sentences,
    input_sentences,
    progress_bar,
    where,
    write_stdout,
)
from .models.catalogue import DEFAULT_BERT

LANG = os.environ.get("LAB_LANG", "en")
MAX_JSON_CHARS = 1_000_000  # --layers / --weights (one argv string is at most 128 KiB on Linux anyway)


def _emit(payload) -> None:
    write_stdout(json.dumps(payload, ensure_ascii=False) + "\n")


def cmd_models(args) -> None:
    from .models.catalogue import list_models

    _emit([{**{k: v for k, v in asdict(info).items() if k != "problem"}, "reason": info.reason}
           for info in list_models()])


MISSING_SHOWN = 10  # "sentence i: word not found" lines on stderr; the rest are counted in one line


def _checked_total(args) -> int:
    """The sentences ``embed`` will read, counted before the model loads or anything is written: too many, or
    (``--bad-lines stop``) a line of the --input file no model could take, is refused here."""
    in_file, first_bad = (count_sentences(args) if args.input else None) or (0, None)
    total = sum(1 for s in args.sentences if s.strip()) + in_file
    if total > args.max_sentences:
        raise LabError("input_too_many_sentences", count=f"{total:,}", limit=f"{args.max_sentences:,}")
    if first_bad is not None and args.bad_lines == "stop":
        raise _bad_line(args, *first_bad)
    return total


def cmd_embed(args) -> None:
    from .interface.api import load, stream_word_vectors

    total = _checked_total(args)
    encoder = load(args.model)
    sink = VectorSink(args)
    seen = missing_count = total_found = windowed = 0
    skipped: list[int] = []
    bar = progress_bar(total)

    def read():
        nonlocal seen
        for item in input_sentences(args):
            seen += 1
            bar.update()
            yield item

    def skip(index: int, err: LabError) -> None:
        skipped.append(index)
        bar.write(f"{where(args, index)}: skipped, {err.message(LANG, markdown=False)}", file=sys.stderr)

    try:
        for part in stream_word_vectors(encoder, read(), args.word, bad_sentences=args.bad_lines, skipped=skip):
            total_found += len(part.occurrences)
            windowed += len(part.windowed)
            sink.write(part)
            for missing in part.missing:
                missing_count += 1
                if missing_count <= MISSING_SHOWN:
                    bar.write(f"{where(args, missing)}: “{args.word}” not found", file=sys.stderr)
        if not seen - len(skipped):
            raise LabError("empty_input")
        if not total_found:
            raise LabError("word_in_no_sentence", word=args.word)
        sink.commit()
    except LabError as err:
        if err.code != "bad_sentence":
            raise
        cause = err.__cause__
        assert isinstance(cause, LabError)  # stream_word_vectors raises bad_sentence from the line's own LabError
        raise _bad_line(args, err.params["index"], cause) from err
    finally:
        bar.close()
        sink.close()
    if skipped:
        print(f"{len(skipped)} lines skipped (--bad-lines skip)", file=sys.stderr)
    if windowed:  # encoders.LONG_TEXT_POLICY: every occurrence kept, and said how
        print(f"{windowed} sentences longer than {encoder.name} takes ({encoder.max_tokens} tokens) were read in "
              f"overlapping windows of {encoder.max_tokens - 2} tokens, stride {(encoder.max_tokens - 2) // 2}; "
              f"every occurrence kept", file=sys.stderr)
    if missing_count > MISSING_SHOWN:
        print(f"… “{args.word}” not found in {missing_count - MISSING_SHOWN} more sentences "
              f"({missing_count} of {seen - len(skipped)} in all)", file=sys.stderr)
    if sink.summary():
        _emit(sink.summary())


def _bad_line(args, index: int, cause: LabError) -> LabError:
    """``bad_line``: where the line is, and why it cannot be taken, in the CLI's language."""
    return LabError("bad_line", where=where(args, index), reason=cause.message(LANG))


def _masked_lm(name: str):
    """The encoder of ``name``, which must be a BERT-family masked LM."""
    from .interface.api import load_masked_lm

    return load_masked_lm(name)


def cmd_fill_mask(args) -> None:
    from .fillmask.prediction import fill_mask
    from .fillmask.words import word_candidates

    encoder = _masked_lm(args.model)
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


def _numbers(text: str, what: str):
    """A JSON array of numbers (nested arrays allowed), bounded in size and depth; true/false, strings,
    NaN, Infinity and numbers beyond float range are refused."""
    try:
        value = safe_json.loads(text, max_chars=MAX_JSON_CHARS)
    except ValueError as exc:
        raise LabError("bad_json_numbers", what=what) from exc
    pending = [value]
    while pending:  # flat walk: the depth is bounded already, but no recursion is needed either
        item = pending.pop()
        if isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, bool) or not isinstance(item, (int, float)):
            raise LabError("bad_json_numbers", what=what)
    if not isinstance(value, list):
        raise LabError("bad_json_numbers", what=what)
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def cmd_mix(args) -> None:
    import numpy as np

    from .compute.mixing import scalar_mix

    layers = _numbers(args.layers, "--layers")
    weights = _numbers(args.weights, "--weights")
    if isinstance(layers[0] if layers else None, list) and len(weights) != len(layers):
        raise LabError("weights_count", given=len(weights), layers=len(layers))
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, not warned about
            mixed = scalar_mix(layers, weights, args.gamma, pre_softmax=args.softmax)
    except (ValueError, TypeError, OverflowError) as exc:
        raise LabError("bad_mix", detail=str(exc)) from exc
    if not np.all(np.isfinite(mixed)):
        raise LabError("mix_overflow")
    _emit([round(float(x), 10) for x in mixed.ravel()] if mixed.ndim == 1 else mixed.round(10).tolist())


def cmd_attention(args) -> None:
    from .models.cache import load_encoder
    from .models.encoders import BertEncoder

    encoder = load_encoder(args.model)
    if not isinstance(encoder, BertEncoder):
        raise LabError("no_attention", name=args.model)
    if args.format != "json" and not args.out:
        raise LabError("export_needs_out", format=args.format, what="a file")
    sentence = " ".join(args.sentence).strip()
    encoding = encoder.encode([sentence], attentions=True)[0]
    att = encoding.attentions
    if args.format == "html":  # every layer and head as the app's heatmaps, plotly.js inside: opens offline
        from .interface.export import write_attention_html

        path = write_attention_html(att, encoding.tokens, args.out, model=encoder.name)
        _emit({"format": args.format, "files": [str(path)], "shape": list(att.shape)})
        return
    if args.format != "json":  # every layer and head, in bertviz's layout
        from .interface.export import write_bertviz

        path = write_bertviz(att, encoding.tokens, args.out, args.format.removeprefix("bertviz-"), model=encoder.name)
        _emit({"format": args.format, "files": [str(path)], "shape": [att.shape[0], 1, *att.shape[1:]]})
        return
    layers = range(att.shape[0]) if args.layer is None else [args.layer]
    heads = range(att.shape[1]) if args.head is None else [args.head]
    for name, value, limit in (("--layer", args.layer, att.shape[0]), ("--head", args.head, att.shape[1])):
        if value is not None and not 0 <= value < limit:
            raise LabError("out_of_range", name=name, low=0, high=limit - 1)
    _emit({"sentence": sentence, "tokens": encoding.tokens, "matrices": [
        {"layer": l, "head": h, "attention": att[l, h].round(6).tolist()} for l in layers for h in heads]})


def _prediction(prediction) -> dict:
    return {"actual": None if prediction.actual is None else round(prediction.actual, 6), "rank": prediction.rank,
            "candidates": [{"token": c.token, "score": round(c.score, 6)} for c in prediction.candidates],
            "hidden": prediction.hidden}


def cmd_bilm(args) -> None:
    from .models.cache import load_typed
    from .models.catalogue import DEFAULT_ELMO
    from .models.encoders import ElmoEncoder
    from .views.objectives import bilm_reading, masked_reading

    if not 1 <= args.top_k <= 50:
        raise LabError("out_of_range", name="--top-k", low=1, high=50)
    bert = _masked_lm(args.bert) if args.bert else None
    reading = bilm_reading(load_typed(DEFAULT_ELMO, ElmoEncoder), " ".join(args.sentence), top_k=args.top_k)
    positions = []
    for k, token in enumerate(reading.tokens):
        row = {"position": k, "token": token, "span": list(reading.offsets[k]),
               "forward": _prediction(reading.forward[k]), "backward": _prediction(reading.backward[k])}
        if bert is not None:
            row["masked"] = _prediction(masked_reading(bert, reading.text, reading.offsets[k], token, args.top_k))
        positions.append(row)
    _emit({"sentence": reading.text, "model": DEFAULT_ELMO, "masked_model": args.bert,
           "log_likelihood": {"forward": round(reading.log_likelihood("forward"), 6),
                              "backward": round(reading.log_likelihood("backward"), 6)},
           "positions": positions})


def cmd_right_context(args) -> None:
    from .models.cache import load_typed
    from .models.catalogue import DEFAULT_ELMO
    from .models.encoders import ElmoEncoder
    from .views.objectives import METRICS, measure_right_context

    moved = measure_right_context(load_typed(DEFAULT_ELMO, ElmoEncoder), _masked_lm(args.bert), args.first, args.second)
    parts = ("elmo_forward", "elmo_backward", "bert")
    _emit({"first": moved.text_a, "second": moved.text_b, "shared": moved.shared, "tokens": moved.tokens,
           "models": {"elmo": DEFAULT_ELMO, "bert": args.bert},
           "summary": {"elmo_forward_max": moved.largest("elmo_forward", first_layer=0),
                       "elmo_backward_min": moved.smallest("elmo_backward"), "bert_min": moved.smallest("bert")},
           "movement": {metric: {part: getattr(moved, part)[metric].round(8).tolist() for part in parts}
                        for metric in METRICS}})


INSTALLED_SCRIPT = "elmo-bert-lab"  # pyproject.toml's [project.scripts]


def program_name() -> str:
    """The command as the user typed it: the installed script, or ``python -m`` with this package's own name
    (``core`` in a clone, ``elmo_bert_lab`` when installed), so the usage line names a command that exists."""
    if os.path.basename(sys.argv[0]) == INSTALLED_SCRIPT:
        return INSTALLED_SCRIPT
    return f"python -m {__package__ or 'core'}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=program_name(), description="ELMo→BERT Lab engine")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("models", help="list models").set_defaults(func=cmd_models)
    embed = sub.add_parser("embed", help="per-layer vectors of every occurrence of a word (JSON Lines)")
    embed.add_argument("--model", default=DEFAULT_BERT)
    embed.add_argument("--word", required=True)
    embed.add_argument("--input", help="UTF-8 text file, one sentence per line, read as a stream; an "
                       "occurrence's sentence_index is its line number - 1 (after any command-line sentences)")
    embed.add_argument("--max-sentences", type=_positive_int, default=MAX_INPUT_SENTENCES, metavar="N",
                       help=f"refuse input with more than N sentences, counted before any work "
                       f"(default {MAX_INPUT_SENTENCES:,})")
    embed.add_argument("--bad-lines", choices=BAD_SENTENCE_POLICIES, default="stop",
                       help="a line the model cannot take (too long, too many tokens, not UTF-8): stop at it with "
                       "its line number (default), or skip it and list it on stderr")
    embed.add_argument("--layer", type=int, action="append", metavar="J",
                       help="write only layer J (0 = the input layer); repeat for several; default: every layer")
    embed.add_argument("--format", choices=EMBED_FORMATS, default="jsonl",
                       help="jsonl: one JSON line per occurrence (stdout, the default); projector: vectors.tsv + "
                       "metadata.tsv for the TensorBoard Embedding Projector (--out DIR); csv / parquet: one row per "
                       "occurrence and layer, the vector as columns d0, d1, … (csv: --out FILE or stdout)")
    embed.add_argument("--out", metavar="PATH", help="the directory (projector) or file (jsonl, csv, parquet) to "
                       "write; stdout then gets one JSON line saying what was written")
    embed.add_argument("sentences", nargs="*")
    embed.set_defaults(func=cmd_embed)
    fill = sub.add_parser("fill-mask", help="top-k candidates for every [MASK]")
    fill.add_argument("--model", default=DEFAULT_BERT)
    fill.add_argument("--top-k", type=int, default=5)
    fill.add_argument("--show-all", action="store_true",
                      help="also list candidates that complete a vulgar word (hidden by default)")
    fill.add_argument("sentence", nargs="+")
    fill.set_defaults(func=cmd_fill_mask)
    mix = sub.add_parser("mix", help="ELMo scalar mix: gamma * sum_j s_j h_j")
    mix.add_argument("--layers", required=True, help="JSON list of layer vectors")
    mix.add_argument("--weights", required=True, help="JSON list of layer weights s_j")
    mix.add_argument("--gamma", type=_finite_float, default=1.0)
    mix.add_argument("--softmax", action="store_true", help="weights are pre-softmax")
    mix.set_defaults(func=cmd_mix)
    att = sub.add_parser("attention", help="attention matrices of a sentence")
    att.add_argument("--model", default=DEFAULT_BERT)
    att.add_argument("--layer", type=int)
    att.add_argument("--head", type=int)
    att.add_argument("--format", choices=("json", "bertviz-json", "bertviz-npz", "html"), default="json",
                     help="json: the chosen matrices on stdout; bertviz-json / bertviz-npz: every layer and head as "
                     "bertviz's head_view takes them, (layers, 1, heads, n, n) and the tokens, to --out FILE; "
                     "html: every layer and head as heatmaps in one page that opens offline, to --out FILE")
    att.add_argument("--out", metavar="FILE")
    att.add_argument("sentence", nargs="+")
    att.set_defaults(func=cmd_attention)
    bilm = sub.add_parser("bilm", help="ELMo's forward and backward LM predictions of every token (mini-elmo-zh); "
                          "with --bert also the masked LM's prediction of each token")
    bilm.add_argument("--bert", help="also predict each token with this masked LM, the token replaced by [MASK]")
    bilm.add_argument("--top-k", type=int, default=5)
    bilm.add_argument("sentence", nargs="+")
    bilm.set_defaults(func=cmd_bilm)
    right = sub.add_parser("right-context", help="how far the vectors of two sentences' shared beginning move, per "
                           "layer: ELMo's forward half, ELMo's backward half, every BERT layer")
    right.add_argument("--bert", default=DEFAULT_BERT)
    right.add_argument("first")
    right.add_argument("second")
    right.set_defaults(func=cmd_right_context)
    return parser


def _not_utf8(argv: list[str]) -> int | None:
    """Index of the first argument that is not valid UTF-8 (Python keeps such bytes as lone
    surrogates, which the tokenizers and the JSON output cannot take), or None."""
    for i, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return i
    return None


def main(argv=None) -> int:
    """Run one command; the process's exit code is returned (0, or 2 after a one-line error or a usage message)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    bad = _not_utf8(argv)
    if bad is not None:
        err = LabError("argv_not_utf8", index=bad + 1)
        print(f"error: {err.message(LANG, markdown=False)}", file=sys.stderr)
        return 2
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse has printed its usage message (or --help)
        return int(stop.code or 0)  # argparse exits with 0 (--help) or 2
    try:
        args.func(args)
        write_stdout()
    except Exception as exc:  # a LabError's message, else one generic line: never a traceback
        err = exc if isinstance(exc, LabError) else LabError("unexpected", kind=type(exc).__name__)
        print(f"error: {err.message(LANG, markdown=False)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
