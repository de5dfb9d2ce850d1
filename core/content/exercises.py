"""The lecture's two exercises (📝 动手练一练), checkable: answers in, verdicts out. Pure, no Streamlit.

1. 概念辨析 — feature-based vs fine-tuning: sort statements and models into the two strategies.
2. 公式理解 — ELMo_k = γ Σ_j s_j h_{k,j} with h_0=[1,0,0], h_1=[0,1,0], h_2=[0,0,1],
   s=[0.2,0.3,0.5], γ=2. The expected vector is computed by ``core.compute.mixing.scalar_mix`` itself
   (the lecture's answer: [0.4, 0.6, 1.0]), never typed in by hand.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..compute.mixing import PRESETS, scalar_mix
from ..guard.errors import LabError

STRATEGIES = ("feature", "finetune")

# statement id (i18n key ex.concept.stmt.<id>) -> the strategy it describes (lecture: 两种迁移策略的界定
# and the reference answer of exercise 1)
CONCEPT_STATEMENTS: dict[str, str] = {
    "frozen": "feature",  # 预训练模型的参数在应用于下游任务时被冻结，不参与更新
    "as_input": "feature",  # 模型输出的表示被用作下游任务模型的输入特征
    "own_model": "feature",  # 下游任务模型拥有独立的、需要从头训练的架构和参数
    "updated": "finetune",  # 预训练模型的参数在应用于下游任务时是可更新的
    "small_head": "finetune",  # 在顶部添加一个简单的任务层（如分类头）
    "end_to_end": "finetune",  # 整个模型一起在下游任务数据上进行端到端训练
}
# model -> strategy (lecture: 基于特征的迁移：如 ELMo；微调式迁移：如 GPT、BERT)
CONCEPT_MODELS: dict[str, str] = {"elmo": "feature", "bert": "finetune", "gpt": "finetune"}

# The lecture's formula exercise: three basis vectors stand for h_0, h_1, h_2.
FORMULA_LAYERS = np.identity(3)
# variant -> (normalised s, γ); "lecture" is the exercise, the others are the lecture's two task presets
FORMULA_VARIANTS: dict[str, tuple[tuple[float, ...], float]] = {
    "lecture": (tuple(PRESETS["worked_example"][0]), float(PRESETS["worked_example"][1])),
    "syntax": (tuple(PRESETS["syntax"][0]), float(PRESETS["syntax"][1])),
    "semantics": (tuple(PRESETS["semantics"][0]), float(PRESETS["semantics"][1])),
}
TOLERANCE = 0.011  # "0.4, 0.6, 1" and "0.40, 0.60, 1.00" are right; rounding to one decimal is fine here
EXAMPLE_INPUT = "0.1, 0.2, 0.3"  # not the answer of any variant
MAX_INPUT_CHARS = 200


def check_concept(answers: Mapping[str, str | None], truth: Mapping[str, str]) -> dict[str, bool | None]:
    """Per item: True (right), False (wrong) or None (not answered)."""
    return {item: (None if answers.get(item) is None else answers.get(item) == right) for item, right in truth.items()}


def formula_expected(variant: str = "lecture", *, scaled: bool = True) -> np.ndarray:
    """γ · Σ_j s_j h_j for the variant (``scaled=False``: Σ_j s_j h_j), computed by core.compute.mixing.scalar_mix."""
    s, gamma = FORMULA_VARIANTS[variant]
    return scalar_mix(FORMULA_LAYERS, list(s), gamma if scaled else 1.0)


_SEPARATORS = re.compile(r"[,;、\s]+")
_BRACKETS = "[]()<>{}【】「」"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?")


def _number(item: str) -> float:
    if _NUMBER.fullmatch(item):
        return float(item)
    if item.count("/") == 1:  # a simple fraction such as 2/5
        top, bottom = item.split("/")
        if _NUMBER.fullmatch(top) and _NUMBER.fullmatch(bottom) and float(bottom) != 0:
            return float(top) / float(bottom)
    raise ValueError(item)


def parse_vector(text: str, n: int = 3) -> list[float]:
    """Numbers typed by a student: "0.4,0.6,1", "[0.4, 0.6, 1.0]", "(0.4 0.6 1)", "０.４，０.６，１", "2/5, 3/5, 1".

    Raises ``LabError("bad_vector")`` naming the first item that is not a number, and
    ``LabError("vector_length")`` when there are not exactly ``n`` numbers.
    """
    text = unicodedata.normalize("NFKC", str(text or ""))[:MAX_INPUT_CHARS]  # full-width → ASCII
    text = text.replace("−", "-").lower()
    for bracket in _BRACKETS:
        text = text.replace(bracket, " ")
    items = [item for item in _SEPARATORS.split(text.strip()) if item]
    values = []
    for item in items:
        try:
            value = _number(item)
        except ValueError:
            raise LabError("bad_vector", item=item[:20], n=n, example=EXAMPLE_INPUT) from None
        if not math.isfinite(value):
            raise LabError("bad_vector", item=item[:20], n=n, example=EXAMPLE_INPUT)
        values.append(value)
    if len(values) != n:
        raise LabError("vector_length", n=n, count=len(values))
    return values


@dataclass(frozen=True)
class FormulaVerdict:
    correct: bool
    hint: str  # "correct" | "forgot_gamma" | "reversed" | "sum_not_scaled" | "wrong": i18n ex.formula.hint.<hint>
    expected: list[float]
    answer: list[float]


def check_formula(answer: Sequence[float], variant: str = "lecture", tol: float = TOLERANCE) -> FormulaVerdict:
    """Compare with scalar_mix's result; name the most likely slip when it is wrong."""
    expected = formula_expected(variant)
    got = np.asarray(answer, dtype=float)
    s, gamma = FORMULA_VARIANTS[variant]

    def close(a, b) -> bool:
        return a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol))

    if close(got, expected):
        hint = "correct"
    elif close(got, np.asarray(s)):
        hint = "forgot_gamma"  # Σ s_j h_j without the scale γ
    elif close(got, expected[::-1]):
        hint = "reversed"
    elif close(got, np.asarray(s) / gamma):
        hint = "sum_not_scaled"  # divided instead of multiplied
    else:
        hint = "wrong"
    return FormulaVerdict(hint == "correct", hint, [float(x) for x in expected], [float(x) for x in got])

