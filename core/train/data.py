"""What the trainers and their evaluation read, shared by ``core.train.bert``, ``core.train.elmo`` and
``core.train.evaluate`` (so that the evaluation imports no trainer and no trainer is imported back):

- BERT: a corpus tokenized into paragraphs of sentences, its token file (``--tokens``, ``--save-tokens``), and
  :class:`PairSampler`, the NSP sentence pairs with BERT-style MLM corruption, in batches.
- The biLM: sentences encoded as [CLS] chars [SEP], in batches of similar length.
"""
from __future__ import annotations

import hashlib
import io
import lzma
import random
from pathlib import Path

import numpy as np
import torch

from .corpus import split_sentences

# ---- BERT ---------------------------------------------------------------------------------------------
IS_NEXT, NOT_NEXT = 0, 1  # transformers' convention for next_sentence_label
NO_PAIR = -100  # next_sentence_label of a one-segment example: cross_entropy's ignore_index, no NSP loss


def tokenize_corpus(tokenizer, lines: list[str], segment: bool = False) -> list[list[np.ndarray]]:
    """Each paragraph becomes a list of sentences, each an int32 array of token ids.

    With ``segment`` each sentence is a (2, n) array: token ids and a 1 where a jieba word starts.
    """
    if segment:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
    paragraphs = []
    batch_size = 2000
    for start in range(0, len(lines), batch_size):
        chunk = [split_sentences(line) for line in lines[start:start + batch_size]]
        flat = [s for sentences in chunk for s in sentences]
        if segment and flat:
            encodings = tokenizer([jieba.lcut(s) for s in flat], is_split_into_words=True,
                                  add_special_tokens=False).encodings
            rows = [np.asarray([e.ids, _word_starts(e.word_ids)], dtype=np.int32) for e in encodings]
        else:
            ids = tokenizer(flat, add_special_tokens=False)["input_ids"] if flat else []
            rows = [np.asarray(i, dtype=np.int32) for i in ids]
        cursor = 0
        for sentences in chunk:
            paragraph = [rows[cursor + k] for k in range(len(sentences))]
            cursor += len(sentences)
            paragraph = [p for p in paragraph if p.shape[-1]]
            if paragraph:
                paragraphs.append(paragraph)
    return paragraphs


def cached_tokenize(tokenizer, lines: list[str], segment: bool, cache: Path) -> list[list[np.ndarray]]:
    """:func:`tokenize_corpus`, kept in ``cache`` (a token file, see :func:`save_tokens`) for the next run.

    Segmenting the corpus with jieba takes ~5 minutes on the lab machine, at the start of every
    resumed session. The cache is keyed by the vocabulary, the lines and ``segment``; any change
    tokenizes again.
    """
    key = hashlib.sha256()
    key.update(repr(sorted(tokenizer.get_vocab().items())).encode())
    key.update(b"segment" if segment else b"plain")
    for line in lines:
        key.update(line.encode())
        key.update(b"\n")
    digest = key.hexdigest()
    if cache.exists():
        stored = _read_token_arrays(cache)
        if str(stored["key"]) == digest:
            return _unflatten(stored)
    paragraphs = tokenize_corpus(tokenizer, lines, segment)
    if len(tokenizer) > np.iinfo(np.uint16).max:
        return paragraphs  # ids would not fit uint16: no cache
    save_tokens(cache, paragraphs, segment, digest)
    return paragraphs


def save_tokens(path: Path, paragraphs: list[list[np.ndarray]], segment: bool, key: str = "") -> None:
    """Write a tokenized corpus as one xz-compressed file of uint16 ids (and uint8 word starts).

    xz keeps the whole training split under ~25 MB, small enough to travel to a GPU machine that has
    neither the corpus nor jieba (``--tokens``).
    """
    rows = [row for paragraph in paragraphs for row in paragraph]
    ids = np.concatenate([row[0] if segment else row for row in rows]).astype(np.uint16)
    starts = np.concatenate([row[1] for row in rows]).astype(np.uint8) if segment else np.zeros(0, np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, key=key, ids=ids, starts=starts,
             lengths=np.asarray([row.shape[-1] for row in rows], dtype=np.int32),
             sentences=np.asarray([len(p) for p in paragraphs], dtype=np.int32))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(lzma.compress(buffer.getvalue(), preset=6))
    partial.replace(path)  # an interrupted save never leaves a half-written file


def load_tokens(path: Path) -> list[list[np.ndarray]]:
    """The paragraphs stored by :func:`save_tokens`, as :func:`tokenize_corpus` returns them."""
    return _unflatten(_read_token_arrays(path))


def _read_token_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(lzma.decompress(path.read_bytes()))) as stored:
        return {name: stored[name] for name in stored.files}


def _unflatten(stored: dict[str, np.ndarray]) -> list[list[np.ndarray]]:
    """The inverse of :func:`save_tokens`' flattening: int32 rows as :func:`tokenize_corpus` returns them."""
    ids, starts, lengths, sentences = (stored[k] for k in ("ids", "starts", "lengths", "sentences"))
    ids = ids.astype(np.int32)
    segmented = starts.size > 0
    rows = np.split(np.stack([ids, starts.astype(np.int32)]) if segmented else ids,
                    np.cumsum(lengths)[:-1], axis=-1)
    bounds = np.concatenate([[0], np.cumsum(sentences)])
    return [rows[bounds[i]:bounds[i + 1]] for i in range(len(sentences))]


def _word_starts(word_ids: list[int | None]) -> list[int]:
    return [int(i == 0 or word_ids[i] != word_ids[i - 1]) for i in range(len(word_ids))]


class PairSampler:
    """Builds NSP sentence pairs and BERT-style MLM corruption."""

    def __init__(self, paragraphs, vocab_size: int, special_ids: set[int], cls_id: int, sep_id: int,
                 mask_id: int, max_len: int, rng: random.Random, whole_word: float = 0.0, single: float = 0.0):
        self.paragraphs = paragraphs
        self.whole_word = whole_word  # share of examples masked by words; > 0 needs segment=True paragraphs
        self.single = single  # share of one-sentence examples [CLS] s [SEP], the shape the app's inputs have
        self.multi = [i for i, p in enumerate(paragraphs) if len(p) >= 2]
        self.vocab_size = vocab_size
        self.special_ids = special_ids
        self.cls_id, self.sep_id, self.mask_id = cls_id, sep_id, mask_id
        self.max_len = max_len
        self.rng = rng
        self.first_normal_id = max(special_ids) + 1

    def nsp_pair(self):
        """BERT's next-sentence pair ``(a, b, label)``: A is a paragraph's first sentences (cut at a random
        sentence), B its rest (IS_NEXT) or, half the time, a random paragraph's tail (NOT_NEXT); longer than
        ``max_len`` with [CLS] and two [SEP]s, the longer side is cut (A at its front)."""
        rng = self.rng
        paragraph = self.paragraphs[rng.choice(self.multi)]
        split = rng.randint(1, len(paragraph) - 1)
        a = np.concatenate(paragraph[:split], axis=-1)
        if rng.random() < 0.5:
            b, label = np.concatenate(paragraph[split:], axis=-1), IS_NEXT
        else:
            other = self.paragraphs[rng.randrange(len(self.paragraphs))]
            start = rng.randrange(len(other))
            b, label = np.concatenate(other[start:], axis=-1), NOT_NEXT
        budget = self.max_len - 3
        while a.shape[-1] + b.shape[-1] > budget:
            if a.shape[-1] > b.shape[-1]:
                a = a[..., 1:]  # keep the end of A: it is what borders B
            else:
                b = b[..., :-1]
        return a, b, label

    def _sentence(self):
        """One sentence of the corpus (its start if longer than fits), for a one-segment example."""
        paragraph = self.paragraphs[self.rng.randrange(len(self.paragraphs))]
        return paragraph[self.rng.randrange(len(paragraph))][..., :self.max_len - 2]

    def example(self):
        if self.single and self.rng.random() < self.single:
            a = self._sentence()
            b, label = a[..., :0], NO_PAIR  # an empty second segment: no B, no second [SEP]
        else:
            a, b, label = self.nsp_pair()
        starts = None
        if self.whole_word:
            (a, a_starts), (b, b_starts) = a, b
            if self.rng.random() < self.whole_word:
                # [CLS] and [SEP] are words of their own; a word cut at the front of A starts there.
                starts = np.concatenate([[1, 1], a_starts[1:], [1], b_starts, [1] if len(b) else []])
        second = [b, [self.sep_id]] if len(b) else []
        ids = np.concatenate([[self.cls_id], a, [self.sep_id], *second]).astype(np.int64)
        types = np.concatenate([np.zeros(len(a) + 2), np.ones(len(ids) - len(a) - 2)]).astype(np.int64)
        candidates = [i for i in range(len(ids)) if ids[i] not in self.special_ids]
        n_mask = max(1, round(0.15 * len(candidates)))
        corrupted = ids.copy()
        if starts is None:
            chosen = sorted(self.rng.sample(candidates, min(n_mask, len(candidates))))
            for pos in chosen:
                self._corrupt(corrupted, [pos])
        else:
            chosen = self._choose_words(candidates, starts, n_mask, corrupted)
        return corrupted, types, np.asarray(chosen), ids[chosen].copy(), label

    def _choose_words(self, candidates: list[int], starts: np.ndarray, n_mask: int, corrupted: np.ndarray):
        """Whole-word masking: shuffle the words, take each that still fits in the 15% budget."""
        words: list[list[int]] = []
        for pos in candidates:
            if starts[pos] or not words or words[-1][-1] != pos - 1:
                words.append([pos])
            else:
                words[-1].append(pos)
        self.rng.shuffle(words)
        chosen: list[int] = []
        for word in words:
            if len(chosen) >= n_mask:
                break
            if len(chosen) + len(word) > n_mask and chosen:
                continue
            chosen.extend(word)
            self._corrupt(corrupted, word)
        return sorted(chosen)

    def _corrupt(self, corrupted: np.ndarray, positions: list[int]) -> None:
        """One 80/10/10 roll for the positions of one unit (a token, or a whole word)."""
        roll = self.rng.random()
        for pos in positions:
            if roll < 0.8:
                corrupted[pos] = self.mask_id
            elif roll < 0.9:
                corrupted[pos] = self.rng.randrange(self.first_normal_id, self.vocab_size)

    def batches(self, batch_size: int, pool: int = 50):
        """Endless stream of padded batches; examples grouped by length to waste little padding."""
        while True:
            examples = [self.example() for _ in range(batch_size * pool)]
            examples.sort(key=lambda e: len(e[0]))
            groups = [examples[i:i + batch_size] for i in range(0, len(examples), batch_size)]
            self.rng.shuffle(groups)
            for group in groups:
                yield collate_pairs(group)


def collate_pairs(group):
    width = max(len(e[0]) for e in group)
    n = len(group)
    input_ids = torch.zeros(n, width, dtype=torch.long)
    token_type = torch.zeros(n, width, dtype=torch.long)
    attention = torch.zeros(n, width, dtype=torch.long)
    rows, cols, targets, labels = [], [], [], []
    for i, (ids, types, positions, tgt, label) in enumerate(group):
        input_ids[i, :len(ids)] = torch.from_numpy(ids)
        token_type[i, :len(ids)] = torch.from_numpy(types)
        attention[i, :len(ids)] = 1
        rows.extend([i] * len(positions))
        cols.extend(positions.tolist())
        targets.extend(tgt.tolist())
        labels.append(label)
    return {
        "input_ids": input_ids, "token_type_ids": token_type, "attention_mask": attention,
        "mask_rows": torch.tensor(rows, dtype=torch.long), "mask_cols": torch.tensor(cols, dtype=torch.long),
        "mlm_targets": torch.tensor(targets, dtype=torch.long), "nsp_labels": torch.tensor(labels, dtype=torch.long),
    }


# ---- the biLM -----------------------------------------------------------------------------------------
def encode_sentences(tokenizer, lines, max_len: int) -> list[np.ndarray]:
    sentences = [s for line in lines for s in split_sentences(line, max_chars=max_len - 2)]
    out = []
    for start in range(0, len(sentences), 5000):
        for ids in tokenizer(sentences[start:start + 5000], add_special_tokens=True,
                             truncation=True, max_length=max_len)["input_ids"]:
            if len(ids) > 3:
                out.append(np.asarray(ids, dtype=np.int32))
    return out


def sentence_batches(sequences: list[np.ndarray], max_tokens: int, rng: random.Random):
    """Endless stream of (ids, lengths) batches of similar-length sentences, about max_tokens each."""
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    groups: list[list[int]] = []
    current: list[int] = []
    width = 0
    for index in order:
        width = max(width, len(sequences[index]))
        if current and width * (len(current) + 1) > max_tokens:
            groups.append(current)
            current, width = [], len(sequences[index])
        current.append(index)
    if current:
        groups.append(current)
    while True:
        rng.shuffle(groups)
        for group in groups:
            yield collate_sentences([sequences[i] for i in group])


def collate_sentences(seqs: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    ids = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.from_numpy(s.astype(np.int64))
    return ids, lengths
