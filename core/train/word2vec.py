"""Train word2vec-zh: gensim skip-gram on jieba-segmented text, saved without pickle.

    python -m core.train.word2vec --out assets/models/word2vec-zh

The shipped files are ``vectors.safetensors`` (one fp16 matrix), ``vocab.txt`` (word TAB count,
row order), ``segmenter-freq.txt`` (the jieba frequencies that keep each word whole, see
core/models/segmenter.py) and ``config.json``: gensim's own ``.model`` format is a pickle and is never shipped.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import jieba
import numpy as np
from gensim.models import Word2Vec
from safetensors.numpy import save_file

from ..models.segmenter import write_frequencies
from .corpus import DEFAULT_CORPUS, read_lines

PEOPLES_DAILY = DEFAULT_CORPUS.parent / "peoples_daily_1998_01.txt"


def segment_to_file(sources: list[str], out: Path) -> int:
    """Write one jieba-segmented line per corpus line (space separated); returns the word count."""
    jieba.setLogLevel(logging.WARNING)
    words = 0
    with open(out, "w", encoding="utf-8") as handle:
        for source in sources:
            for line in read_lines(source, "train"):
                tokens = [t for t in jieba.lcut(line.lower()) if t.strip()]
                words += len(tokens)
                handle.write(" ".join(tokens) + "\n")
    return words


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=[str(DEFAULT_CORPUS), str(PEOPLES_DAILY)])
    parser.add_argument("--out", required=True)
    parser.add_argument("--work-dir", default="/tmp/word2vec-work", help="segmented text goes here (not shipped)")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--negative", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--max-vocab", type=int, default=60000, help="keep the most frequent words only")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)

    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    segmented = work / "segmented.txt"
    t0 = time.time()
    if not segmented.exists():
        words = segment_to_file(args.corpus, segmented)
        print(f"segmented {words} words in {time.time() - t0:.0f}s", flush=True)
    logging.basicConfig(format="%(asctime)s %(message)s", level=logging.INFO)
    model = Word2Vec(corpus_file=str(segmented), vector_size=args.dim, window=args.window, sg=1,
                     negative=args.negative, min_count=args.min_count, epochs=args.epochs,
                     workers=args.workers, seed=args.seed, max_final_vocab=args.max_vocab)
    keyed = model.wv
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_file({"vectors": keyed.vectors.astype(np.float16)}, str(out / "vectors.safetensors"))
    (out / "vocab.txt").write_text(
        "".join(f"{w}\t{keyed.get_vecattr(w, 'count')}\n" for w in keyed.index_to_key), encoding="utf-8")
    write_frequencies(out, list(keyed.index_to_key))
    config = {"model_type": "word2vec", "algorithm": "skip-gram", "segmenter": "jieba", "dim": args.dim,
              "window": args.window, "negative": args.negative, "epochs": args.epochs,
              "min_count": args.min_count, "vocab_size": len(keyed.index_to_key), "lowercase": True}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"saved {out}: {len(keyed.index_to_key)} words x {args.dim} in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
