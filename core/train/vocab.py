"""Character vocabulary in BERT's ``vocab.txt`` format, shared by mini-bert-zh and mini-elmo-zh.

BERT's tokenizer splits every CJK character into its own token and runs WordPiece on other
runs (English words, numbers), so the vocabulary holds the frequent characters plus every
ASCII letter and digit both as a word start and as a ``##`` continuation: any ASCII word can
still be spelled out instead of collapsing to [UNK].
"""
from __future__ import annotations

import argparse
import string
import unicodedata
from pathlib import Path

from .corpus import DEFAULT_CORPUS, char_counts, read_lines

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _normalise(text: str) -> str:
    # Mirrors BertTokenizer(do_lower_case=True): lower-case and strip accents.
    text = unicodedata.normalize("NFD", text.lower())
    return "".join(ch for ch in text if unicodedata.category(ch) != "Mn")


def build_vocab(lines, max_size: int = 7000, min_count: int = 5) -> list[str]:
    counts = char_counts(_normalise(line) for line in lines)
    ascii_pieces = list(string.ascii_lowercase + string.digits)
    vocab = SPECIAL_TOKENS + ascii_pieces + ["##" + c for c in ascii_pieces]
    seen = set(vocab)
    for char, count in counts.most_common():
        if len(vocab) >= max_size or count < min_count:
            break
        if char.isspace() or char in seen or unicodedata.category(char).startswith("C"):
            continue
        vocab.append(char)
        seen.add(char)
    return vocab


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Build the shared character vocab.txt")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-size", type=int, default=7000)
    parser.add_argument("--min-count", type=int, default=5)
    args = parser.parse_args(argv)
    vocab = build_vocab(read_lines(args.corpus, "train"), args.max_size, args.min_count)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(vocab) + "\n", encoding="utf-8")
    print(f"wrote {len(vocab)} tokens to {args.out}")


if __name__ == "__main__":
    main()
