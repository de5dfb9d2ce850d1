"""The ELMo trainer end to end on a tiny corpus: the run's shared arguments and setup (core.train.common),
a resumable checkpoint beside the output by default, and an export the app loads."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from core.models.encoders import ElmoEncoder
from core.train.elmo import main

VOCAB = Path(__file__).resolve().parents[1] / "assets" / "models" / "mini-bert-zh" / "vocab.txt"
LINES = ["我吃了一个苹果。苹果昨天发布了新手机。", "他每天早上都喝一杯牛奶。今天天气很好。",
         "老师在黑板上写字。下雨了，出门记得带伞。"]
TINY = ["--embed-dim", "16", "--hidden-dim", "16", "--max-tokens", "64", "--warmup", "1", "--threads", "1"]


def test_trains_exports_and_resumes_from_the_default_checkpoint(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(LINES * 20) + "\n", encoding="utf-8")
    out = tmp_path / "models" / "mini-elmo-zh"
    main(["--vocab", str(VOCAB), "--corpus", str(corpus), "--out", str(out), "--max-steps", "2", *TINY])
    checkpoint = tmp_path / "models" / ".ckpt" / "mini-elmo-zh.pt"
    assert checkpoint.is_file()  # OUT/../.ckpt/<model>.pt unless --checkpoint says otherwise
    encoder = ElmoEncoder("tiny-elmo", out)
    # h_0 and the two biLSTM layers, forward and backward halves side by side: the lecture's 2L + 1 vectors
    assert len(encoder.layer_names) == 3
    assert encoder.encode(["我吃了一个苹果"])[0].layers.shape[0] == 3

    main(["--vocab", str(VOCAB), "--corpus", str(corpus), "--out", str(out), "--max-steps", "3", *TINY])
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["state"]
    assert state["step"] == 3  # resumed at step 2, one more step


def test_continues_an_export_on_a_corpus_mix_and_records_a_learning_curve(tmp_path):
    from transformers import BertTokenizerFast

    from core.train.elmo import training_mix
    from core.train.evaluate import elmo_perplexity, heldout_sentences

    news, everyday = tmp_path / "news.txt", tmp_path / "everyday.txt"
    news.write_text("\n".join(LINES * 20) + "\n", encoding="utf-8")
    everyday.write_text("\n".join(["你吃饭了吗？我刚吃完。", "明天见！记得带钥匙。"] * 30) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(VOCAB), do_lower_case=True)
    alone = [len(training_mix(tokenizer, [str(path)], 64)) for path in (news, everyday)]
    # PATH:N puts that file's sentences N times into the mix
    assert len(training_mix(tokenizer, [str(news), f"{everyday}:3"], 64)) == alone[0] + 3 * alone[1]

    start = tmp_path / "start"
    main(["--vocab", str(VOCAB), "--corpus", str(news), "--out", str(start), "--max-steps", "2",
          "--checkpoint", str(tmp_path / "start.pt"), *TINY])
    out, curve = tmp_path / "continued", tmp_path / "curve.jsonl"
    main(["--vocab", str(VOCAB), "--corpus", str(news), f"{everyday}:3", "--init-from", str(start),
          "--out", str(out), "--max-steps", "2", "--eval-every", "600", "--curve", str(curve),
          "--eval-sentences", "5", "--lr", "0.05", *TINY])
    points = [json.loads(line) for line in curve.read_text(encoding="utf-8").splitlines()]
    assert [p["step"] for p in points] == [0, 2]  # the starting point, then the end of the run
    assert points[1]["tokens"] > 0
    assert set(points[0]["heldout"]) == {"news", "everyday"}
    # the starting point measures the model it was initialised from, loaded as the app loads it
    source = ElmoEncoder("start", start)
    expected = elmo_perplexity(source.model, heldout_sentences(source.tokenizer, news, 5))["forward_ppl"]
    assert points[0]["heldout"]["news"]["forward_ppl"] == pytest.approx(expected, rel=1e-4)
    assert points[1]["heldout"]["news"]["forward_ppl"] != pytest.approx(expected, rel=1e-4)
    assert set(points[0]["sense_probe_best"]) == {"苹果", "包袱", "行", "花"}
    assert all(0 <= v <= 1 for v in points[0]["senses_苹果"].values())
