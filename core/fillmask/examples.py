"""The fill-mask page's ready-made examples with the answers they teach, and the evaluation sets'
sentences with theirs: what a result shown to the class is judged against.

The accepted answers are data, written beside each sentence, never taken from a model: the page says
next to a result whether the model found one of them, puts the true sentence (not the model's guess) into
the corruption demo, and the tests check every example on the shipped weights. Pure data, no model.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..runtime.paths import ASSETS

EVAL_DIR = ASSETS / "eval"
DEMO_FILE = EVAL_DIR / "fill_mask_demo.tsv"  # the project's fill-mask demo set (the lecture has none)
EVALUATION_FILE = ASSETS / "models" / "evaluation.json"  # python -m core.train.evaluate
# Whole-word sentences written after the demo set, as a check on sentences no change was chosen on.
WORDS_CHECK_FILE = EVAL_DIR / "fill_mask_words_check.tsv"
# Everyday whole-word sentences written before the continued pre-training on everyday text, so that no
# choice of that training could be made on them.
EVERYDAY_CHECK_FILE = EVAL_DIR / "fill_mask_everyday_check.tsv"
CHECK_SETS = {"demo_set": DEMO_FILE, "words_check": WORDS_CHECK_FILE, "everyday_check": EVERYDAY_CHECK_FILE}
# Sentences of the fill-mask page's sureness (core.fillmask.confidence), both written before the model was run on
# them: single characters its thresholds are fitted on, and everyday sentences they are only scored on.
CHARS_CHECK_FILE = EVAL_DIR / "fill_mask_chars_check.tsv"
HELDOUT_FILE = EVAL_DIR / "fill_mask_heldout.tsv"
SURENESS_SETS = {"chars_check": CHARS_CHECK_FILE, "heldout": HELDOUT_FILE}
MASK = "[MASK]"


@dataclass(frozen=True)
class Example:
    plain: str  # the true sentence
    word: str  # what the example masks, one [MASK] per character
    accepted: tuple[str, ...]  # answers that teach the example's point (``word`` first)

    @property
    def masked(self) -> str:
        return self.plain.replace(self.word, MASK * len(self.word))


# The example list of the fill-mask page; the first is the page's default sentence. The lecture's own
# two 苹果 sentences first, then sentences on which mini-bert-zh's top candidate is an accepted answer
# (tests/test_fill_examples.py checks that on the shipped weights).
EXAMPLES: tuple[Example, ...] = (
    Example("我吃了一个苹果。", "苹果", ("苹果", "香蕉", "包子", "馒头", "鸡蛋", "橘子", "桃子", "梨子")),
    Example("苹果昨天发布了新手机。", "手", ("手",)),
    Example("水果店里的苹果很新鲜。", "鲜", ("鲜",)),
    Example("他去图书馆借了三本书。", "图书", ("图书",)),
    Example("孩子发烧了，妈妈带他去医院看病。", "医院", ("医院", "诊所")),
    Example("我的手机坏了，不能打电话了。", "手机", ("手机", "电话")),
    Example("下雨了，出门记得带伞。", "伞", ("伞",)),
)

# The page's own candidate words for its default sentence: the context should prefer the fruit.
DEFAULT_CANDIDATES = ("苹果", "水果", "公司")


@dataclass(frozen=True)
class NspExample:
    first: str
    second: str
    is_next: bool  # B was written as A's next sentence (IsNext), or is an unrelated sentence (NotNext)


# Next-sentence prediction: one true next sentence and one unrelated sentence after the same A, so the
# class sees the model tell them apart. The first is the page's default pair.
NSP_EXAMPLES: tuple[NspExample, ...] = (
    NspExample("我吃了一个苹果。", "这个苹果又脆又甜。", True),
    NspExample("我吃了一个苹果。", "新手机的价格比去年贵了一些。", False),
)


def answer_set(path: Path | str) -> list[tuple[str, list[str]]]:
    """(sentence with [MASK]s, accepted answers) of one evaluation set (``sentence<TAB>a|b|c`` lines)."""
    rows = [line.split("\t") for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]
    return [(sentence, answers.split("|")) for sentence, answers in rows]


@dataclass(frozen=True)
class Known:
    """What the app knows about a masked sentence: the answers it accepts and the sentence it was written as."""
    accepted: tuple[str, ...]
    sentence: str  # the true sentence: the masks filled with the first accepted answer
    source: str  # "examples" or the evaluation set's file name


@cache
def _known() -> dict[str, Known]:
    known: dict[str, Known] = {}
    for path in (*CHECK_SETS.values(), *SURENESS_SETS.values()):
        for masked, answers in answer_set(path):
            first = masked.find(MASK)
            width = masked.count(MASK)  # one mask or one run of masks (tests/test_eval_sets.py)
            true = masked[:first] + answers[0] + masked[first + width * len(MASK):]
            known[masked] = Known(tuple(answers), true, Path(path).name)
    for example in EXAMPLES:  # the page's own examples win
        known[example.masked] = Known(example.accepted, example.plain, "examples")
    return known


@dataclass(frozen=True)
class DemoScore:
    """How the embedded mini-bert-zh does on the demo set: ``hits`` of ``sentences`` have an accepted answer in
    its top ``top`` (``core.train.evaluate.evaluate_demo_set``)."""
    top: int
    hits: int
    sentences: int


@cache
def demo_score(path: Path | str = EVALUATION_FILE) -> DemoScore | None:
    """The stored demo-set score of mini-bert-zh; None when the evaluation file or its entry is missing."""
    try:
        entry = json.loads(Path(path).read_text(encoding="utf-8"))["mini-bert-zh"]["demo_set"]
        return DemoScore(int(entry["top"]), int(entry["hits"]), int(entry["sentences"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def lookup(masked: str, mask_token: str = MASK) -> Known | None:
    """The accepted answers and true sentence of a masked sentence the app's data knows, else None."""
    return _known().get(masked.replace(mask_token, MASK))


def answer_rank(proposed: Sequence[str], accepted: Sequence[str]) -> int | None:
    """1-based rank of the first proposal that is an accepted answer; None when none is."""
    return next((rank for rank, word in enumerate(proposed, 1) if word in accepted), None)


def candidates_for(masked: str, mask_token: str = MASK) -> tuple[str, ...]:
    """Words to compare at the masks of ``masked``: the default candidates for the page's default sentence,
    none for any other (a box left on 苹果,水果,公司 under an unrelated sentence compares nothing)."""
    return DEFAULT_CANDIDATES if masked.replace(mask_token, MASK) == EXAMPLES[0].masked else ()


def nsp_label(first: str, second: str) -> bool | None:
    """Whether (first, second) is a true next-sentence pair of ``NSP_EXAMPLES``; None for any other pair."""
    return next((pair.is_next for pair in NSP_EXAMPLES if (pair.first, pair.second) == (first, second)), None)
