"""The learning curve of a continued pre-training run (``core.train.bert --curve``) as a Markdown table.

    python -m core.train.curve_report assets/eval/everyday_pretraining_curve.jsonl

One row per curve point: tokens seen, minutes, learning rate, masked-character top-1 / top-5 and NSP
accuracy on each corpus's held-out split, and the hits on each whole-word check set.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

CHECK_SETS = ("demo_set", "words_check", "everyday_check")


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


def read_curve(path: Path | str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("curve")
    print(curve_table(read_curve(parser.parse_args(argv).curve)))


if __name__ == "__main__":
    main()
