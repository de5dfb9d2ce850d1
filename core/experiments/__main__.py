"""Run the layer-wise experiments and cache them as JSON for the evidence and ELMo pages.

    python -m core.experiments                          # full run, all models -> assets/experiments.json
    python -m core.experiments --quick --out /tmp/x.json
    python -m core.experiments --models mini-bert-zh --static none

Progress and timings go to stderr; the path written and the total time are printed at the end.
Models that are not available (not trained yet) are skipped and listed with the reason.
"""
from __future__ import annotations

import argparse
import sys
import time

from . import DEFAULT_MODELS, DEFAULT_OUT, run_all, save_results
from ..errors import LabError
from ..registry import DEFAULT_STATIC


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.experiments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                        help="contextual models (registry names, directories or hub ids)")
    parser.add_argument("--static", default=DEFAULT_STATIC, help="static baseline model, or 'none'")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--quick", action="store_true", help="small samples, for development")
    parser.add_argument("--corpus", default=None, help="POS-tagged People's Daily file (default: shared corpus)")
    args = parser.parse_args(argv)

    last = [-1.0]
    start = time.time()

    def progress(fraction: float, text: str) -> None:
        if fraction - last[0] >= 0.02 or fraction >= 1.0:
            last[0] = fraction
            print(f"[{time.time() - start:6.1f} s] {fraction:4.0%} {text}", file=sys.stderr, flush=True)

    def log(text: str) -> None:
        print(f"[{time.time() - start:6.1f} s] stage {text}", file=sys.stderr, flush=True)

    static = None if args.static.lower() == "none" else args.static
    try:
        results = run_all(args.models, static=static, quick=args.quick, corpus=args.corpus, progress=progress, log=log)
    except LabError as err:
        print(err.message("en"), file=sys.stderr)
        return 2
    path = save_results(results, args.out)
    skipped = {name: reason["en"] for stage in ("pos", "senses", "context", "learned_mix")
               for name, reason in results[stage].get("skipped", {}).items()}
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}", file=sys.stderr)
    timing = results["timing_seconds"]
    for task, entry in results["learned_mix"]["tasks"].items():
        learned = entry["learned"]
        print(f"learned mix, {task}: s = [{', '.join(f'{v:.2f}' for v in learned['s'])}], "
              f"gamma = {learned['gamma']:.2f}, held-out accuracy {learned['accuracy']:.3f} "
              f"(uniform s {entry['fixed']['uniform']['accuracy']:.3f}, n = {entry['n_test']})")
    print(f"wrote {path}  (POS {timing['pos']:.0f} s, senses {timing['senses']:.0f} s, "
          f"context {timing['context']:.0f} s, learned mix {timing['learned_mix']:.0f} s, "
          f"total {timing['total']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
