"""Model and data builders shared by the tests: synthetic tagged sentences, a tiny word2vec, the real mini-elmo-zh."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from core.experiments.corpus import TaggedSentence

ROOT = Path(__file__).resolve().parent.parent
REAL_MODELS = ROOT / "assets" / "models"
REAL_ELMO = REAL_MODELS / "mini-elmo-zh"

# words made of characters the tiny BERT vocabulary knows (tests/conftest.py TINY_TEXT)
NOUNS = ["苹果", "手机", "北京", "银行", "水果", "公司", "天气", "包袱"]
VERBS = ["吃", "发布", "去", "走", "背", "抖"]


def synthetic_sentences(n: int = 60, seed: int = 0) -> list[TaggedSentence]:
    """``我 V 了 N 。`` / ``他 V N 。`` style sentences with PKU-like tags."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        noun, verb = NOUNS[rng.integers(len(NOUNS))], VERBS[rng.integers(len(VERBS))]
        if i % 2:
            out.append(TaggedSentence(("我", verb, "了", noun, "。"), ("r", "v", "u", "n", "w")))
        else:
            out.append(TaggedSentence(("他", verb, noun, "的", "天气", "。"), ("r", "v", "nz", "u", "n", "w")))
    return out


TINY_STATIC_WORDS = ["苹果", "水果", "公司", "手机", "吃", "发布", "香蕉", "电脑", "我", "了", "一个", "昨天", "新"]


def build_tiny_static(directory: Path, seed: int = 0) -> Path:
    """A word2vec-zh look-alike (config.json, vectors.safetensors, vocab.txt) with a dozen words."""
    from safetensors.numpy import save_file

    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(TINY_STATIC_WORDS), 16)).astype(np.float32)
    save_file({"vectors": vectors}, str(directory / "vectors.safetensors"))
    (directory / "vocab.txt").write_text("".join(f"{w}\t{100 - i}\n" for i, w in enumerate(TINY_STATIC_WORDS)),
                                         encoding="utf-8")
    (directory / "config.json").write_text(json.dumps({"dim": 16, "kind": "static"}), encoding="utf-8")
    return directory


def link_real_elmo(models_dir: Path) -> None:
    """Add the real mini-elmo-zh to a ``models_dir`` (skips the test when it is not trained yet)."""
    from core.models.catalogue import embedded_files

    if not all((REAL_ELMO / f).exists() for f in embedded_files("elmo")):
        pytest.skip("mini-elmo-zh is not trained yet (assets/models/mini-elmo-zh incomplete)")
    (models_dir / "mini-elmo-zh").symlink_to(REAL_ELMO, target_is_directory=True)
