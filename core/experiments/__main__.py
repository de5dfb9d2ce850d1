"""Run the layer-wise experiments and cache them as JSON for the evidence and ELMo pages.

    python -m core.experiments                          # full run, all models -> assets/experiments.json
    python -m core.experiments --quick --out /tmp/x.json
    python -m core.experiments --models mini-bert-zh --static none
    python -m core.experiments --only concat context    # rerun two stages, keep the others of --out

Progress and timings go to stderr; the path written and the total time are printed at the end.
Models that are not available (not trained yet) are skipped and listed with the reason.
``--only`` keeps the other stages of the file at ``--out``, which must come from the same models, mode
and weights (otherwise run every stage).
"""
from __future__ import annotations

import argparse
import sys
import time

from ..guard.errors import LabError
from ..models.catalogue import DEFAULT_STATIC
from . import DEFAULT_MODELS, DEFAULT_OUT, STAGES, concat, load_results, run_all, save_results, stale_models


def previous_results(path: str, only: list[str], requested: list[str], quick: bool) -> dict:
    """The results at ``path`` whose other stages ``--only`` keeps; ValueError with the reason when unusable."""
    try:
        previous = load_results(path)
    except LabError as err:
        raise ValueError(err.message("en")) from err
    if previous is None:
        raise ValueError(f"--only keeps the other stages of {path}, which does not exist: run every stage")
    problems = [f"{key} is missing" for key in STAGES if key not in only and key not in previous]
    if previous.get("requested_models") != requested or bool(previous.get("quick")) != quick:
        problems.append(f"it was computed for {previous.get('requested_models')}"
                        f"{' (quick)' if previous.get('quick') else ''}")
    problems += [f"{name} changed since" for name in stale_models(previous)]
    if problems:
        raise ValueError(f"cannot keep the other stages of {path}: {'; '.join(problems)}. Run every stage.")
    return previous


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.experiments", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS),
                        help="contextual models (registry names, directories or hub ids)")
    parser.add_argument("--static", default=DEFAULT_STATIC, help="static baseline model, or 'none'")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--quick", action="store_true", help="small samples, for development")
    parser.add_argument("--corpus", default=None, help="POS-tagged People's Daily file (default: shared corpus)")
    parser.add_argument("--only", nargs="+", choices=STAGES, default=None, metavar="STAGE",
                        help=f"run only these stages ({', '.join(STAGES)}), keep the others of --out")
    args = parser.parse_args(argv)

    static = None if args.static.lower() == "none" else args.static
    previous = None
    if args.only:
        try:
            previous = previous_results(args.out, args.only, args.models + ([static] if static else []), args.quick)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2

    last = [-1.0]
    start = time.time()

    def progress(fraction: float, text: str) -> None:
        if fraction - last[0] >= 0.02 or fraction >= 1.0:
            last[0] = fraction
            print(f"[{time.time() - start:6.1f} s] {fraction:4.0%} {text}", file=sys.stderr, flush=True)

    def log(text: str) -> None:
        print(f"[{time.time() - start:6.1f} s] stage {text}", file=sys.stderr, flush=True)

    try:
        results = run_all(args.models, static=static, quick=args.quick, corpus=args.corpus, progress=progress, log=log,
                          only=args.only, previous=previous)
    except LabError as err:
        print(err.message("en"), file=sys.stderr)
        return 2
    path = save_results(results, args.out)
    skipped = {name: reason["en"] for stage in STAGES
               for name, reason in results[stage].get("skipped", {}).items()}
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}", file=sys.stderr)
    timing = results["timing_seconds"]
    for task, entry in results["learned_mix"]["tasks"].items():
        learned = entry["learned"]
        print(f"learned mix, {task}: s = [{', '.join(f'{v:.2f}' for v in learned['s'])}], "
              f"gamma = {learned['gamma']:.2f}, held-out accuracy {learned['accuracy']:.3f} "
              f"(uniform s {entry['fixed']['uniform']['accuracy']:.3f}, n = {entry['n_test']})")
    if results["concat"]["inputs"]:
        entry = results["concat"]
        print(f"concatenation, POS (n = {entry['n_test_words']} words): " + ", ".join(
            f"{name} {entry['inputs'][name]['accuracy']:.3f}" for name in concat.INPUTS))
    ran = ", ".join(f"{key} {timing[key]:.0f} s" for key in STAGES if not args.only or key in args.only)
    print(f"wrote {path}  ({'ran ' if args.only else ''}{ran}; total of all stages {timing['total']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
