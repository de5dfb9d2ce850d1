"""The sentence BERT sees on the fill-mask page: typed with [MASK]s, a word masked, or characters masked;
its checks, and the runs of adjacent masks a whole word fills."""
from __future__ import annotations

import re
from collections.abc import Sequence

from ..compute.occurrences import find_spans
from ..guard.errors import LabError
from ..guard.validation import check_length
from ..models.encoders import BertEncoder

MAX_MASKS = 16
MAX_CHARS = 500
INPUT_MODES = ("masked", "word", "chars")  # masked_input: typed [MASK]s, a word to mask, characters to mask
_MASK_VARIANTS = re.compile(r"[\[［]\s*mask\s*[\]］]", re.IGNORECASE)


def normalise_masks(sentence: str, mask_token: str = "[MASK]") -> str:
    """Accept [mask], ［MASK］ and similar spellings a user types."""
    return _MASK_VARIANTS.sub(mask_token, sentence)


def check_masked_sentence(sentence: str, mask_token: str = "[MASK]") -> str:
    sentence = normalise_masks((sentence or "").strip(), mask_token)
    if not sentence:
        raise LabError("empty_input")
    check_length(sentence, MAX_CHARS)
    count = sentence.count(mask_token)
    if count == 0:
        raise LabError("no_mask")
    if count > MAX_MASKS:
        raise LabError("too_many_masks", count=count, limit=MAX_MASKS)
    if not re.sub(r"[\s\W_]", "", sentence.replace(mask_token, "")):
        raise LabError("only_masks")
    return sentence


def around(sentence: str, mask_token: str, first: int, length: int = 1) -> tuple[str, str]:
    """Text before the ``first``-th mask and after the run of ``length`` masks starting there."""
    parts = sentence.split(mask_token)
    return mask_token.join(parts[:first + 1]), mask_token.join(parts[first + length:])


def mask_runs(sentence: str, mask_token: str = "[MASK]") -> list[tuple[int, int]]:
    """(first mask index, length) of every run of two or more directly adjacent masks."""
    runs, index, cursor = [], 0, 0
    while (found := sentence.find(mask_token, cursor)) != -1:
        length = 1
        while sentence.startswith(mask_token, found + length * len(mask_token)):
            length += 1
        if length > 1:
            runs.append((index, length))
        index += length
        cursor = found + length * len(mask_token)
    return runs


def masked_input(encoder: BertEncoder, mode: str, *, sentence: str = "", plain: str = "", word: str = "",
                 chars: Sequence[int] = ()) -> str:
    """The sentence BERT sees, made one of the fill-mask page's three ways (``INPUT_MODES``): typed with
    [MASK]s; a plain sentence with every occurrence of ``word`` masked, one [MASK] per token; or a plain
    sentence with the characters at the positions ``chars`` masked. Bad input raises LabError."""
    if mode not in INPUT_MODES:  # the page offers these only: a wrong mode is a caller's bug
        raise ValueError(f"mode must be one of {INPUT_MODES}, not {mode!r}")
    if mode == "masked":
        return check_masked_sentence(sentence, encoder.mask_token)
    text = (plain or "").strip() if mode == "word" else (plain or "")
    if not text.strip():
        raise LabError("empty_input")
    check_length(text, MAX_CHARS)  # before masking: the message gives the length the user typed
    if mode == "word":
        if not (word or "").strip():
            raise LabError("empty_word")
        raw = whole_word_mask(text, word.strip(), encoder)
    else:
        chosen = set(chars)
        raw = "".join(encoder.mask_token if i in chosen else c for i, c in enumerate(text))
    return check_masked_sentence(raw, encoder.mask_token)


def whole_word_mask(sentence: str, word: str, encoder: BertEncoder | None = None) -> str:
    """Replace every occurrence of ``word`` by one [MASK] per token (per character without an encoder)."""
    spans = find_spans(sentence, word)
    if not spans:
        raise LabError("word_not_in_sentence", word=word)
    mask = encoder.mask_token if encoder else "[MASK]"
    out, cursor = [], 0
    for start, end in spans:
        piece = sentence[start:end]
        count = len(encoder.tokens(piece)) if encoder else len(piece)
        out.extend([sentence[cursor:start], mask * count])
        cursor = end
    out.append(sentence[cursor:])
    return "".join(out)
