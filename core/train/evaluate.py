"""Evaluate the embedded models on the held-out split and print the model cards' figures.

    python -m core.train.evaluate            # all three models, writes assets/models/evaluation.json

- mini-bert-zh: masked-character top-1/top-5 accuracy (BERT's 15% / 80-10-10 corruption, fixed seed)
  and next-sentence accuracy on held-out sentence pairs.
- mini-elmo-zh: forward and backward character perplexity against a unigram model's perplexity
  (unigram counts from the training split, add-one smoothed) on the same held-out tokens.
- word2vec-zh: nearest neighbours of a few words.
- mini-bert-zh on the project's fill-mask demo set (assets/eval/fill_mask_demo.tsv): is an accepted
  answer among the top 3 characters (one [MASK]) or top 3 whole words (a run of [MASK]s)? The same on
  a second set of whole-word sentences (assets/eval/fill_mask_words_check.tsv), written later.
- Word senses of 苹果 (fruit vs Apple Inc.): leave-one-out nearest-neighbour sense accuracy per
  layer, on the project's hand-written set (assets/eval/apple_senses.txt) and on held-out corpus
  sentences labelled by keyword rules (the rules' keywords stay in the sentences, which makes that
  set easier; it is reported separately).
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..compute.geometry import loo_nn_accuracy
from ..compute.occurrences import parse_labelled, word_vectors
from ..fillmask.examples import CHECK_SETS, DEMO_FILE, EVERYDAY_CHECK_FILE, WORDS_CHECK_FILE, answer_set
from ..models.cache import load_encoder, load_typed
from ..models.catalogue import MODELS_DIR
from ..models.encoders import BertEncoder, ElmoEncoder, Encoder, StaticEncoder
from .cards import write_cards
from .corpus import DEFAULT_CORPUS, read_lines, split_sentences
from .data import PairSampler, collate_sentences, encode_sentences, tokenize_corpus

SENSES_FILE = Path(__file__).resolve().parents[2] / "assets" / "eval" / "apple_senses.txt"
DEMO_TOP = 3
NEIGHBOUR_WORDS = ["苹果", "手机", "银行", "老师"]
_APPLE_INC = re.compile(r"手机|iphone|ipad|公司|发布|系统|ios|mac|电脑|平板|笔记本|乔布斯|库克|华为|三星|小米"
                        r"|版本|芯片|果粉|官网|专卖店|安卓|市值")
_FRUIT = re.compile(r"吃|水果|果品|新鲜|甜|香蕉|斤|果园|削|汁|梨|橙|桃|葡萄|果树|口感|好吃|熟|脆|苹果树|一箱|蔬菜|营养")


def authored_sense_set() -> tuple[list[str], list[str | None]]:
    lines = [l for l in SENSES_FILE.read_text(encoding="utf-8").splitlines() if l.strip() and not l.startswith("#")]
    return parse_labelled(lines)


def apple_sense(sentence: str) -> str | None:
    """Sense of 苹果 from cue words; None when the cues are absent or point both ways (e.g. 果品总公司)."""
    apple, fruit = bool(_APPLE_INC.search(sentence.lower())), bool(_FRUIT.search(sentence))
    if apple == fruit:
        return None
    return "公司" if apple else "水果"


def heldout_sense_set(corpus: str) -> tuple[list[str], list[str]]:
    sentences, labels = [], []
    for line in read_lines(corpus, "heldout"):
        if "苹果" not in line:
            continue
        for sentence in split_sentences(line):
            if "苹果" not in sentence:
                continue
            sense = apple_sense(sentence)
            if sense:
                sentences.append(sentence)
                labels.append(sense)
    return sentences, labels


def sense_accuracy(model: str | Encoder, sentences: list[str], labels: Sequence[str | None]) -> dict:
    encoder = load_encoder(model) if isinstance(model, str) else model
    result = word_vectors(encoder, sentences, "苹果", labels)
    stacked = result.stacked()
    occurrence_labels = [o.label for o in result.occurrences]
    per_layer = {name: loo_nn_accuracy(stacked[i], occurrence_labels) for i, name in enumerate(result.layer_names)}
    counts = collections.Counter(occurrence_labels)
    return {"per_layer": per_layer, "n": dict(counts), "best": max(v for v in per_layer.values() if v is not None)}


@torch.inference_mode()
def evaluate_bert(corpus: str, examples: int, seed: int, encoder: BertEncoder | None = None) -> dict:
    encoder = encoder or load_typed("mini-bert-zh", BertEncoder)
    model, tokenizer = encoder.model, encoder.tokenizer
    paragraphs = tokenize_corpus(tokenizer, list(read_lines(corpus, "heldout")))
    special = {tokenizer.convert_tokens_to_ids(t) for t in tokenizer.all_special_tokens}
    sampler = PairSampler(paragraphs, len(tokenizer), special, tokenizer.cls_token_id, tokenizer.sep_token_id,
                          tokenizer.mask_token_id, model.config.max_position_embeddings, random.Random(seed))
    top1 = top5 = masked = nsp_right = pairs = 0
    stream = sampler.batches(64)
    while pairs < examples:
        batch = next(stream)
        outputs = model.bert(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                             attention_mask=batch["attention_mask"])
        hidden = outputs.last_hidden_state[batch["mask_rows"], batch["mask_cols"]]
        logits = model.cls.predictions(hidden)
        best5 = logits.topk(5, dim=-1).indices
        targets = batch["mlm_targets"]
        top1 += int((best5[:, 0] == targets).sum())
        top5 += int((best5 == targets[:, None]).any(-1).sum())
        masked += len(targets)
        nsp = model.cls.seq_relationship(outputs.pooler_output).argmax(-1)
        nsp_right += int((nsp == batch["nsp_labels"]).sum())
        pairs += len(nsp)
    return {"masked_top1": top1 / masked, "masked_top5": top5 / masked, "masked_tokens": masked,
            "nsp_accuracy": nsp_right / pairs, "pairs": pairs}


def demo_set(path: Path = DEMO_FILE) -> list[tuple[str, list[str]]]:
    return answer_set(path)


def evaluate_demo_set(model: str | BertEncoder = "mini-bert-zh", top: int = DEMO_TOP, path: Path = DEMO_FILE) -> dict:
    """Top-``top`` hits on the demo set (or another set in its format), with what the model proposed."""
    from ..fillmask.prediction import fill_mask
    from ..fillmask.words import proposals, word_candidates

    encoder = load_typed(model, BertEncoder) if isinstance(model, str) else model
    rows: list[dict[str, Any]] = []
    for sentence, answers in demo_set(path):
        proposed = proposals(fill_mask(encoder, sentence, top_k=top), word_candidates(encoder, sentence, top_n=top))
        rows.append({"sentence": sentence, "answers": answers, "top": proposed,
                     "hit": any(p in answers for p in proposed)})
    hits = sum(r["hit"] for r in rows)
    return {"top": top, "hits": hits, "sentences": len(rows), "hit_rate": hits / len(rows), "rows": rows}


def evaluate_snapshot(encoder: BertEncoder, corpora: list[Path], pairs: int, seed: int = 0) -> dict:
    """One point of a training run's learning curve: masked-character and NSP accuracy on each corpus's
    held-out split, and the hits (sentences, not rows) on every whole-word check set."""
    torch.manual_seed(seed)
    point = {"heldout": {Path(c).stem: evaluate_bert(str(c), pairs, seed, encoder) for c in corpora}}
    for name, path in CHECK_SETS.items():
        result = evaluate_demo_set(encoder, path=path)
        point[name] = {"hits": result["hits"], "sentences": result["sentences"]}
    return point


@torch.inference_mode()
def elmo_perplexity(model, sequences: list[np.ndarray]) -> dict:
    """Forward and backward per-token perplexity of the biLM ``model`` on encoded ``sequences``."""
    fwd_nll = bwd_nll = 0.0
    tokens = 0
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    for start in range(0, len(order), 64):
        ids, lengths = collate_sentences([sequences[i] for i in order[start:start + 64]])
        fwd, bwd, n = model.lm_losses(ids, lengths)
        fwd_nll += float(fwd) * n
        bwd_nll += float(bwd) * n
        tokens += n
    return {"forward_ppl": math.exp(fwd_nll / tokens), "backward_ppl": math.exp(bwd_nll / tokens),
            "tokens": tokens, "sentences": len(sequences)}


def heldout_sentences(tokenizer, corpus: str | Path, max_sentences: int) -> list[np.ndarray]:
    """The first ``max_sentences`` encoded sentences of ``corpus``'s held-out split, as the biLM reads them."""
    return encode_sentences(tokenizer, list(read_lines(corpus, "heldout")), 64)[:max_sentences]


def evaluate_elmo(corpus: str, max_sentences: int, encoder: ElmoEncoder | None = None) -> dict:
    encoder = encoder or load_typed("mini-elmo-zh", ElmoEncoder)
    tokenizer = encoder.tokenizer
    heldout = heldout_sentences(tokenizer, corpus, max_sentences)
    report = elmo_perplexity(encoder.model, heldout)
    # Unigram model from every 10th training line: add-one smoothing over the whole vocabulary.
    train_sample = [line for i, line in enumerate(read_lines(corpus, "train")) if i % 10 == 0]
    counts = np.ones(len(tokenizer), dtype=np.float64)
    for seq in encode_sentences(tokenizer, train_sample, 64):
        np.add.at(counts, seq[1:], 1)  # the tokens a forward LM predicts (characters and [SEP])
    log_unigram = np.log(counts / counts.sum())
    forward = -sum(log_unigram[seq[1:]].sum() for seq in heldout)
    backward = -sum(log_unigram[seq[:-1]].sum() for seq in heldout)
    return {**report, "unigram_ppl_forward_targets": math.exp(forward / report["tokens"]),
            "unigram_ppl_backward_targets": math.exp(backward / report["tokens"])}


def elmo_snapshot(encoder: ElmoEncoder, corpora: list[Path], max_sentences: int) -> dict:
    """One point of the biLM's learning curve: perplexity on each corpus's held-out split, and the best
    layer's leave-one-out sense accuracy on every project sense set and on 苹果 in held-out corpus text."""
    from ..experiments.sense_probe import load_sense_sets, probe_word

    point = {"heldout": {Path(c).stem: elmo_perplexity(encoder.model, heldout_sentences(encoder.tokenizer, c,
                                                                                        max_sentences))
                         for c in corpora}}
    senses = {}
    for sense_set in load_sense_sets():
        accuracy = probe_word(encoder, sense_set["word"], sense_set["sentences"], sense_set["labels"])["accuracy"]
        senses[sense_set["word"]] = max(a for a in accuracy if a is not None)
    point["sense_probe_best"] = senses
    point["senses_苹果"] = {"authored": sense_accuracy(encoder, *authored_sense_set())["best"],
                           "heldout_corpus": sense_accuracy(encoder, *heldout_sense_set(str(corpora[0])))["best"]}
    return point


def evaluate_word2vec() -> dict:
    encoder = load_typed("word2vec-zh", StaticEncoder)
    return {"vocab_size": len(encoder.words),
            "neighbours": {w: [[n, round(s, 3)] for n, s in encoder.most_similar(w, 8)] for w in NEIGHBOUR_WORDS}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--models", nargs="+", default=["mini-bert-zh", "mini-elmo-zh", "word2vec-zh"])
    parser.add_argument("--bert-pairs", type=int, default=3000)
    parser.add_argument("--elmo-sentences", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=str(MODELS_DIR / "evaluation.json"))
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)

    report: dict = {"corpus": Path(args.corpus).name, "heldout": "every 100th line (1%)"}
    t0 = time.time()
    if "mini-bert-zh" in args.models:
        report["mini-bert-zh"] = evaluate_bert(args.corpus, args.bert_pairs, args.seed)
        report["mini-bert-zh"]["demo_set"] = evaluate_demo_set()
        report["mini-bert-zh"]["words_check"] = evaluate_demo_set(path=WORDS_CHECK_FILE)
        report["mini-bert-zh"]["everyday_check"] = evaluate_demo_set(path=EVERYDAY_CHECK_FILE)
    if "mini-elmo-zh" in args.models:
        report["mini-elmo-zh"] = evaluate_elmo(args.corpus, args.elmo_sentences)
    if "word2vec-zh" in args.models:
        report["word2vec-zh"] = evaluate_word2vec()
    senses: dict[str, tuple[list[str], Sequence[str | None]]] = {
        "authored": authored_sense_set(), "heldout_corpus": heldout_sense_set(args.corpus)}
    report["senses_苹果"] = {name: {m: sense_accuracy(m, *data) for m in args.models} for name, data in senses.items()}
    report["seconds"] = round(time.time() - t0, 1)
    Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    training_file = MODELS_DIR / "training.json"
    training = json.loads(training_file.read_text(encoding="utf-8")) if training_file.exists() else {}
    write_cards(report, MODELS_DIR, training)
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
