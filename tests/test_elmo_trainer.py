"""The ELMo trainer end to end on a tiny corpus: the run's shared arguments and setup (core.train.common),
a resumable checkpoint beside the output by default, and an export the app loads."""
from __future__ import annotations

from pathlib import Path

import torch

from core.encoders import ElmoEncoder
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
