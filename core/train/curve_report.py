"""The learning curve of a continued pre-training run (``core.train.bert --curve``) as a Markdown table.

    python -m core.train.curve_report assets/eval/everyday_pretraining_curve.jsonl
    python -m core.train.curve_report --elmo assets/eval/elmo_everyday_curve.jsonl    # core.train.elmo --curve

One row per curve point: tokens seen, minutes, learning rate, masked-character top-1 / top-5 and NSP
accuracy on each corpus's held-out split, and the hits on each whole-word check set.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

CHECK_SETS = ("demo_set", "words_check", "everyday_check")
# The experiment's rules (issue #31): stop after this much training unless a check set moved this far...
STOP_AFTER_MINUTES = 360
MIN_MOVE = 3
# ...and ship only a point that meets every threshold.
SHIP_RULES = {"everyday check sets ≥ 50%": lambda p: all(_rate(p[k]) >= 0.5 for k in ("words_check", "everyday_check")),
              "demo set ≥ 80%": lambda p: _rate(p["demo_set"]) >= 0.8,
              "zh_mixed_v1 top-1 ≥ 52%": lambda p: p["heldout"]["zh_mixed_v1"]["masked_top1"] >= 0.52,
              "NSP ≥ 90%": lambda p: p["heldout"]["zh_mixed_v1"]["nsp_accuracy"] >= 0.9}


def _rate(check: dict) -> float:
    return check["hits"] / check["sentences"]


def verdict(points: list[dict]) -> dict:
    """What the rules say of a curve: each check set's move from the first point to the last, whether the
    run has reached its stopping time without a move of ``MIN_MOVE``, and the points that meet every
    shipping rule (with the rules each point misses)."""
    first, last = points[0], points[-1]
    moves = {name: last[name]["hits"] - first[name]["hits"] for name in CHECK_SETS}
    missed = {p["step"]: [rule for rule, holds in SHIP_RULES.items() if not holds(p)] for p in points[1:]}
    return {"minutes": last["minutes"], "moves": moves, "moved": max(moves.values()) >= MIN_MOVE,
            "stop": last["minutes"] >= STOP_AFTER_MINUTES and max(moves.values()) < MIN_MOVE,
            "shippable": [step for step, rules in missed.items() if not rules],
            "missed_at_end": missed.get(last["step"], [])}


def curve_table(points: list[dict]) -> str:
    corpora = list(points[0]["heldout"]) if points else []
    head = (["step", "tokens (M)", "minutes", "lr"]
            + [f"{c} top-1 / top-5 / NSP" for c in corpora] + list(CHECK_SETS))
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in points:
        cells = [str(p["step"]), f"{p['tokens'] / 1e6:.1f}", f"{p['minutes']:.0f}", f"{p['lr']:.1e}"]
        cells += [f"{h['masked_top1']:.1%} / {h['masked_top5']:.1%} / {h['nsp_accuracy']:.1%}"
                  for h in (p["heldout"][c] for c in corpora)]
        cells += [f"{p[name]['hits']}/{p[name]['sentences']}" for name in CHECK_SETS]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


# mini-elmo-zh's continued training (issue #31 item 6): ship a point whose best layer separates the senses of
# 苹果 this well on both of the project's 苹果 sets, without a higher held-out perplexity on zh_mixed_v1.
ELMO_SENSE_TARGET = 0.90


def elmo_curve_table(points: list[dict]) -> str:
    """The biLM's curve: tokens, minutes, learning rate, forward / backward perplexity per held-out split,
    the best layer's sense accuracy on 苹果 (authored set, held-out corpus sentences) and per probe word."""
    corpora = list(points[0]["heldout"]) if points else []
    words = list(points[0]["sense_probe_best"]) if points else []
    head = (["step", "tokens (M)", "minutes", "lr"] + [f"{c} ppl fwd / bwd" for c in corpora]
            + ["苹果 authored / held-out"] + [f"probe {w}" for w in words])
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in points:
        cells = [str(p["step"]), f"{p['tokens'] / 1e6:.1f}", f"{p['minutes']:.0f}", f"{p['lr']:.1e}"]
        cells += [f"{p['heldout'][c]['forward_ppl']:.1f} / {p['heldout'][c]['backward_ppl']:.1f}" for c in corpora]
        cells.append(f"{p['senses_苹果']['authored']:.1%} / {p['senses_苹果']['heldout_corpus']:.1%}")
        cells += [f"{p['sense_probe_best'][w]:.1%}" for w in words]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def elmo_verdict(points: list[dict], reference: str = "zh_mixed_v1") -> dict:
    """The steps whose 苹果 sense accuracy reaches ``ELMO_SENSE_TARGET`` on both sets and whose held-out
    perplexity on ``reference`` (both directions) is not above the first point's, and per step what it misses."""
    first = points[0]["heldout"][reference]

    def misses(p: dict) -> list[str]:
        out = [f"苹果 {name} ≥ {ELMO_SENSE_TARGET:.0%}"
               for name, v in p["senses_苹果"].items() if v < ELMO_SENSE_TARGET]
        if any(p["heldout"][reference][d] > first[d] for d in ("forward_ppl", "backward_ppl")):
            out.append(f"{reference} perplexity not above the start")
        return out

    missed = {p["step"]: misses(p) for p in points[1:]}
    return {"shippable": [step for step, rules in missed.items() if not rules], "missed": missed,
            "minutes": points[-1]["minutes"]}


def read_curve(path: Path | str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("curve")
    parser.add_argument("--elmo", action="store_true", help="a curve of core.train.elmo (default: core.train.bert)")
    args = parser.parse_args(argv)
    print((elmo_curve_table if args.elmo else curve_table)(read_curve(args.curve)))


if __name__ == "__main__":
    main()
