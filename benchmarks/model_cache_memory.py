"""A class that tries many model directories: does the model cache bound the server's memory?

    python -m benchmarks.model_cache_memory                  # 20 directories
    python -m benchmarks.model_cache_memory --models 8 --json out.json

Each directory is a randomly initialised BERT built from mini-bert-zh's config (4 layers, hidden 256, its
6,765-character vocabulary and tokenizer; about 20 MB of float32 weights): one is built, the others are
copies, so every directory is a different model to the model cache. For each directory one session (a
Streamlit ``AppTest`` of the fill-mask page, kept open like a student's tab) runs the page with that
directory as its model; sessions are never closed. After every page run the resident memory of this
process (``VmRSS``) is read, and at the end the live encoder objects are counted (``gc``).

The model cache keeps ``core.models.cache.MAX_OTHER_MODELS`` directory models; the embedded models stay. A
session that keeps the encoder of its last run (the page's globals, reachable from its widget callbacks)
keeps evicted models alive: live encoders then grow with the sessions, and RSS with them.
Figures: ``model_cache_live_encoders`` (target ≤ MAX_OTHER_MODELS) and ``model_cache_rss_growth_mb``
(RSS after the last directory minus RSS after the first, target ≤ 3 models' float32 weights: the cached
two and one for everything else). JSON to stdout (and ``--json``), progress to stderr.
"""
from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, log, make_result

TEMPLATE = ROOT / "assets" / "models" / "mini-bert-zh"
PAGE = ROOT / "app_pages" / "fill_mask" / "page.py"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def build_models(root: Path, count: int) -> list[Path]:
    """``count`` directories holding one random BERT made from mini-bert-zh's config and tokenizer."""
    import torch
    from transformers import BertConfig, BertForPreTraining

    first = root / "model-00"
    first.mkdir(parents=True)
    for name in ("config.json", "vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(TEMPLATE / name, first / name)
    torch.manual_seed(0)
    BertForPreTraining(BertConfig.from_pretrained(str(first))).save_pretrained(first, safe_serialization=True)
    return [first] + [Path(shutil.copytree(first, root / f"model-{i:02d}")) for i in range(1, count)]


def measure(count: int) -> list[dict]:
    from streamlit.testing.v1 import AppTest
    from transformers import AutoConfig

    from core.models import cache, catalogue, checks
    from core.models.encoders import Encoder

    with tempfile.TemporaryDirectory(prefix="lab-cache-bench-") as tmp:
        directories = build_models(Path(tmp), count)
        sessions, rss = [], []
        for i, directory in enumerate(directories):
            at = AppTest.from_file(str(PAGE), default_timeout=300)
            at.session_state["lang"], at.session_state["bert_model"] = "en", str(directory)
            at.run()
            if at.exception:
                raise RuntimeError(f"{directory.name}: {[e.value for e in at.exception]}")
            sessions.append(at)  # the tab stays open
            gc.collect()
            rss.append(round(rss_mb(), 1))
            log(f"{i + 1}/{count} {directory.name}: RSS {rss[-1]:.0f} MB")
        gc.collect()
        live = [o.name for o in gc.get_objects() if issubclass(type(o), Encoder) and o.name not in catalogue.EMBEDDED]
        model_mb = 4 * checks.estimated_parameters(AutoConfig.from_pretrained(str(directories[0]))) / 2**20
        details = {"directories": count, "sessions_open": len(sessions), "rss_mb_after_each": rss,
                   "cached_directory_models": len([k for k in cache._cache if k not in catalogue.EMBEDDED]),
                   "max_other_models": cache.MAX_OTHER_MODELS, "float32_weights_mb_per_model": round(model_mb, 1)}
        return [make_result("model_cache_live_encoders", len(live), cache.MAX_OTHER_MODELS, unit="encoders",
                            details=details),
                make_result("model_cache_rss_growth_mb", round(rss[-1] - rss[0], 1), round(3 * model_mb, 1), unit="MB",
                            details=details)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20, help="distinct model directories (default 20)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    results = measure(args.models)
    text = json.dumps(results, ensure_ascii=False, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    for r in results:
        log(f"{r['name']}: {r['value']} {r['unit']} (limit {r['limit']}, pass {r['pass']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
