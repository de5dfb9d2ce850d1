"""What the fill-mask page shows, one call per result (the view models of ``core.fillmask``):

- :func:`fill_view`: the page's input (a sentence with [MASK]s, a word to mask or characters to mask) →
  :class:`FillView`: the sentence BERT sees, the top-k candidates of every mask, whole-word candidates of every
  run of masks, BERT filling the masks one at a time, and what the app's data knows about the sentence;
- :func:`corruption_source`: the true sentence the corruption section starts from (never the model's guess);
- :func:`corruption_view`: one sentence's pre-training corruption and its shares over many draws;
- :func:`next_sentence_view`: P(IsNext) of a pair, its label when it is an example pair, and what the model
  cannot see in it.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..attention.view import TextNotes, inspect_text
from ..models.encoders import BertEncoder
from . import confidence as fill_confidence
from . import examples as fx
from . import words
from .corruption import CorruptedToken, corruption_stats, mlm_corruption
from .iterative import FillStep, iterative_fill
from .masks import masked_input
from .nsp import next_sentence
from .prediction import FillMaskResult, fill_mask
from .words import MaskRun, word_candidates


@dataclass(frozen=True)
class FillView:
    masked: str  # the sentence BERT sees
    mask_token: str  # the model's mask token in ``masked``
    result: FillMaskResult
    runs: list[MaskRun]  # whole-word candidates of every run of two or more masks
    steps: list[FillStep]  # filling the most confident mask, one at a time
    known: fx.Known | None  # accepted answers and true sentence, when the app's data knows the sentence
    signals: list[fill_confidence.Signal]  # how sure the model is at each gap, from its distribution

    @property
    def proposals(self) -> list[str]:
        return words.proposals(self.result, self.runs)


def fill_view(encoder: BertEncoder, mode: str, *, sentence: str = "", plain: str = "", word: str = "",
              chars: Sequence[int] = (), top_k: int = 5, hide_vulgar: bool = True) -> FillView:
    """Everything the page shows for one input (``masked_input``'s three modes). Bad input raises LabError."""
    masked = masked_input(encoder, mode, sentence=sentence, plain=plain, word=word, chars=chars)
    result = fill_mask(encoder, masked, top_k=top_k, hide_vulgar=hide_vulgar, characters_only=True)
    runs = word_candidates(encoder, masked, top_n=top_k, hide_vulgar=hide_vulgar)
    return FillView(masked=masked, mask_token=encoder.mask_token, result=result, runs=runs,
                    steps=iterative_fill(encoder, masked, top_k=top_k, hide_vulgar=hide_vulgar,
                                         characters_only=True, first=result),
                    known=fx.lookup(masked, encoder.mask_token), signals=fill_confidence.signals(result, runs))


def masks_plain(masked: str, mask_token: str, plain: str) -> bool:
    """Whether ``masked`` is ``plain`` with some single characters replaced by ``mask_token``."""
    parts = masked.split(mask_token)
    if len(parts) < 2 or len(masked) - (len(parts) - 1) * len(mask_token) + (len(parts) - 1) != len(plain):
        return False
    pattern = ".".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, plain, flags=re.DOTALL) is not None


def corruption_source(mode: str, plain: str, view: FillView | None) -> tuple[str | None, str | None]:
    """The true sentence the corruption section starts from, and where it comes from: the ``plain`` sentence
    (``"plain"``) in the modes that mask it, or in ``"masked"`` mode when ``view``'s sentence is ``plain`` masked (an
    example's); else the data's answer to the masked sentence (``"answer"``); never the model's guess: a masked
    sentence the data does not know gives ``(None, "unknown")``, and no masked sentence at all ``(None, None)``."""
    plain = plain.strip()
    if mode != "masked" or (view is not None and masks_plain(view.masked, view.mask_token, plain)):
        return plain, "plain"
    if view is not None and view.known:
        return view.known.sentence, "answer"
    return None, "unknown" if view is not None else None


@dataclass(frozen=True)
class CorruptionView:
    tokens: list[CorruptedToken]  # this draw (its seed)
    stats: dict[str, float]  # shares over many draws: chosen, and of those mask / random / unchanged

    @property
    def chosen(self) -> int:
        return sum(token.chosen for token in self.tokens)

    def count(self, action: str) -> int:
        return sum(token.action == action for token in self.tokens)


def corruption_view(encoder: BertEncoder, sentence: str, seed: int = 0) -> CorruptionView:
    return CorruptionView(mlm_corruption(encoder, sentence, seed=seed), corruption_stats(encoder, sentence))


@dataclass(frozen=True)
class NextSentenceView:
    p_next: float  # P(IsNext)
    label: bool | None  # an example pair's label (data); None for any other pair
    notes: TextNotes  # what the model cannot see in the two sentences

    @property
    def judged_next(self) -> bool:
        return self.p_next > 0.5


def next_sentence_view(encoder: BertEncoder, first: str, second: str) -> NextSentenceView:
    return NextSentenceView(next_sentence(encoder, first, second), fx.nsp_label(first, second),
                            inspect_text(encoder, first + second))
