"""Streaming a corpus through ``embed --input``, in process, against a bare batched forward of the same model.

- ``embed_stream_vs_batched_throughput``: the file is a corpus in which the word is rare: the N sentences with
  苹果 (``make_sentences``) each followed by ``FILLER_PER_SENTENCE`` lines without it. The stream is
  ``core.__main__.main(["embed", "--model", M, "--word", 苹果, "--input", FILE, "--out", OUT])`` (the file read
  line by line through ``core.interface.api.stream_word_vectors``, every occurrence written as a JSON line); the bare
  forward runs the same model's encoder over the sentences the stream must read, the N with the word (batch
  ``BARE_BATCH``, the encoder's own, ``padding=True``, ``output_hidden_states=True``, tokenizer included; the
  encoder only, as the embedding path runs no MLM head). Value = t(bare) / t(stream); target ≥ 0.95×.

Both run in this process, interleaved (``common.interleaved``), so there is no process start to subtract:
unlike the CLI figures of ``embed.py`` this ratio needs no net time. The stream's output is checked to
hold one line per sentence.
"""
from __future__ import annotations

import contextlib
import io
import statistics
import tempfile
from pathlib import Path

from benchmarks.common import (
    WORD,
    Config,
    error_result,
    interleaved,
    load_encoder,
    log,
    make_result,
    make_sentences,
    skipped_result,
)

NAME, LIMIT = "embed_stream_vs_batched_throughput", 0.95
FILLER_PER_SENTENCE = 4
BARE_BATCH = 64  # BertEncoder.encode's batch
FILLER = ("今天天气很好，我们去公园散步吧。", "他把书放在桌子上就出去了。", "这家饭店的菜又便宜又好吃。",
          "明天早上八点在学校门口见面。")


def measure(cfg: Config) -> list[dict]:
    encoder, reason = load_encoder(cfg.bert_model, "bert")
    if encoder is None:
        return [skipped_result(NAME, LIMIT, reason, higher_is_better=True, unit="x")]
    import torch

    from core.__main__ import main

    sentences = make_sentences(cfg.embed_sentences)
    work = Path(tempfile.mkdtemp(prefix="lab-bench-stream-"))
    source, out = work / "sentences.txt", work / "out.jsonl"
    source.write_text("".join(sentence + "\n" + "".join(FILLER[(i + k) % len(FILLER)] + "\n"
                                                         for k in range(FILLER_PER_SENTENCE))
                              for i, sentence in enumerate(sentences)), encoding="utf-8")
    encoder_only, tokenizer, bs = encoder.model.base_model, encoder.tokenizer, BARE_BATCH
    failures: list[str] = []

    def stream():
        messages = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(messages):
            code = main(["embed", "--model", cfg.bert_model, "--word", WORD, "--input", str(source), "--out", str(out)])
        if code != 0:
            failures.append(messages.getvalue().strip()[-500:])

    def bare():
        with torch.inference_mode():
            for i in range(0, len(sentences), bs):
                encoder_only(**tokenizer(sentences[i:i + bs], padding=True, return_tensors="pt"),
                             output_hidden_states=True)

    log(f"embed stream: {len(sentences)} sentences, {cfg.embed_reps} repetitions")
    stream()  # untimed warm-up of both paths (torch's first calls, the page cache)
    bare()
    times = interleaved({"stream": stream, "bare": bare}, cfg.embed_reps, label="embed stream")
    lines = sum(1 for _ in open(out, "rb"))
    med = {name: statistics.median(values) for name, values in times.items()}
    details = {"sentences": len(sentences), "lines": len(sentences) * (1 + FILLER_PER_SENTENCE),
               "reps": cfg.embed_reps, "batch_size": bs,
               "stream_sentences_per_s": round(len(sentences) / med["stream"], 1),
               "bare_sentences_per_s": round(len(sentences) / med["bare"], 1),
               "stream_output_lines": lines, "times_s": {k: [round(x, 3) for x in v] for k, v in times.items()}}
    if failures or lines != len(sentences):
        reason = failures[0] if failures else f"the stream wrote {lines} vectors for {len(sentences)} sentences"
        return [error_result(NAME, LIMIT, reason, higher_is_better=True, unit="x") | {"details": details}]
    return [make_result(NAME, med["bare"] / med["stream"], LIMIT, higher_is_better=True, unit="x", details=details)]
