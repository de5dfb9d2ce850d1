"""The BERT trainer's GPU-lease path: a token file instead of the corpus, batches from worker processes,
exports while training."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import BertForPreTraining, BertTokenizerFast

from core.train.bert import export, main
from core.train.corpus import corpus_spec, join_lines, split_sentences
from core.train.curve_report import curve_table, read_curve
from core.train.data import load_tokens, tokenize_corpus

VOCAB = Path(__file__).resolve().parents[1] / "assets" / "models" / "mini-bert-zh" / "vocab.txt"
LINES = ["我吃了一个苹果。苹果昨天发布了新手机。北京是中国的首都。",
         "他每天早上都喝一杯牛奶。今天天气很好。我们去图书馆借书。",
         "老师在黑板上写字。小朋友们高高兴兴地上学。下雨了，出门记得带伞。"]
TINY = ["--layers", "1", "--hidden", "32", "--heads", "2", "--batch-size", "4", "--max-len", "64", "--warmup", "1"]


def _tokenizer():
    return BertTokenizerFast(vocab=str(VOCAB), do_lower_case=True, tokenize_chinese_chars=True)


def test_saved_tokens_are_the_segmented_training_split(tmp_path):
    corpus = tmp_path / "corpus.txt"
    # line 0 is held out (every 100th line), so it must not reach the token file
    corpus.write_text("\n".join(["这一行留作评估。"] + LINES * 3) + "\n", encoding="utf-8")
    tokens = tmp_path / "tokens.xz"
    main(["--vocab", str(VOCAB), "--corpus", str(corpus), "--out", str(tmp_path / "unused"),
          "--checkpoint", str(tmp_path / "ckpt" / "b.pt"), "--whole-word", "0.3", "--save-tokens", str(tokens)])
    assert not (tmp_path / "unused").exists()
    stored = load_tokens(tokens)
    expected = tokenize_corpus(_tokenizer(), LINES, segment=True)  # repeats are dropped by the cleaning
    assert len(stored) == len(expected) == 3
    for got, want in zip(stored, expected):
        assert [s.shape for s in got] == [s.shape for s in want]
        assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_a_token_file_trains_and_exports_without_the_corpus(tmp_path):
    tokens = tmp_path / "tokens.xz"
    from core.train.data import save_tokens

    save_tokens(tokens, tokenize_corpus(_tokenizer(), LINES * 4, segment=True), segment=True)
    out = tmp_path / "model"
    main(["--vocab", str(VOCAB), "--tokens", str(tokens), "--corpus", str(tmp_path / "absent.txt"),
          "--out", str(out), "--checkpoint", str(tmp_path / "ckpt" / "b.pt"), "--whole-word", "0.3",
          "--workers", "1", "--max-steps", "3", "--threads", "1", *TINY])
    model = BertForPreTraining.from_pretrained(out)  # fp16 weights, float32 declared: loads in float32
    assert model.config.num_hidden_layers == 1 and model.dtype == torch.float32
    shipped = VOCAB.read_text(encoding="utf-8").splitlines()
    assert (out / "vocab.txt").read_text(encoding="utf-8").splitlines() == shipped


def test_export_leaves_the_training_weights_in_full_precision(tmp_path):
    model = BertForPreTraining.from_pretrained(VOCAB.parent).float()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        model.bert.embeddings.word_embeddings.weight[5, 0] = 1.0 + 1e-5  # not representable in fp16
    export(model, _tokenizer(), tmp_path / "copy")
    assert model.dtype == torch.float32
    assert model.bert.embeddings.word_embeddings.weight[5, 0].item() == torch.tensor(1.0 + 1e-5).item()
    assert before.keys() == model.state_dict().keys()


def test_corpus_spec_reads_a_repeat_count():
    assert corpus_spec("/data/a.txt") == (Path("/data/a.txt"), 1)
    assert corpus_spec("/data/a.txt:3") == (Path("/data/a.txt"), 3)
    assert corpus_spec("c:/data/a.txt") == (Path("c:/data/a.txt"), 1)  # a colon not followed by digits stays
    with pytest.raises(ValueError, match="at least 1"):
        corpus_spec("/data/a.txt:0")


def test_join_lines_turns_one_sentence_turns_into_next_sentence_pairs():
    turns = ["你吃饭了吗？", "吃了", "吃的什么", "面条。", "好吃吗？"]
    joined = join_lines(turns, per_paragraph=3)
    assert joined == ["你吃饭了吗？吃了。吃的什么。", "面条。好吃吗？"]
    assert [len(split_sentences(p)) for p in joined] == [3, 2]  # each paragraph now gives IsNext pairs


def test_two_corpora_mix_and_the_learning_curve(tmp_path, capsys):
    news = tmp_path / "news.txt"
    talk = tmp_path / "talk.txt"
    news.write_text("\n".join(["这一行留作评估。它有两句。"] + LINES * 3) + "\n", encoding="utf-8")
    talk_lines = ["这两句留作评估。你好吗？", "你好吗？", "我很好。", "今天去哪儿？", "去公园。", "好啊。"]
    talk.write_text("\n".join(talk_lines * 2) + "\n", encoding="utf-8")
    out, curve = tmp_path / "model", tmp_path / "curve.jsonl"
    main(["--vocab", str(VOCAB), "--corpus", str(news), f"{talk}:2", "--join-lines", "talk", "--out", str(out),
          "--checkpoint", str(tmp_path / "ckpt" / "b.pt"), "--whole-word", "0.3", "--max-steps", "2",
          "--threads", "1", "--eval-every", "60", "--eval-pairs", "8", "--curve", str(curve), *TINY])
    printed = capsys.readouterr().out
    assert "mix (tokens per pass): news" in printed and "talk" in printed
    points = [json.loads(line) for line in curve.read_text(encoding="utf-8").splitlines()]
    assert [p["step"] for p in points] == [0, 2]  # the starting point and the end
    assert points[1]["tokens"] > 0
    for point in points:
        assert set(point["heldout"]) == {"news", "talk"}
        assert 0 <= point["heldout"]["news"]["masked_top1"] <= point["heldout"]["news"]["masked_top5"] <= 1
        for name in ("demo_set", "words_check", "everyday_check"):
            assert 0 <= point[name]["hits"] <= point[name]["sentences"]
    assert points[0]["everyday_check"]["sentences"] == 30
    table = curve_table(read_curve(curve)).splitlines()
    assert len(table) == 2 + len(points) and "news top-1 / top-5 / NSP" in table[0]
    assert table[-1].startswith("| 2 |") and table[-1].endswith(f"| {points[1]['everyday_check']['hits']}/30 |")
