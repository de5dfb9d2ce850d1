"""`python -m core …`: JSON on stdout, a one-line message on stderr and exit 2 on bad input.

The cases run in this process through ``main(argv)``; one smoke test runs the real ``python -m core``."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from core.__main__ import main
from core.guard.errors import LabError


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.subprocess
def test_models_subprocess():
    done = subprocess.run([sys.executable, "-m", "core", "models"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    models = {m["name"]: m for m in json.loads(done.stdout)}
    assert {"mini-bert-zh", "mini-elmo-zh", "word2vec-zh"} <= set(models)
    assert all({"name", "kind", "available", "reason", "num_layers"} <= set(m) for m in models.values())


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time")}


@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [["models"], ["--help"], ["embed", "--help"]])
def test_commands_that_need_no_model_import_no_torch(argv):
    """Start-up: torch and transformers take seconds to import; a listing or a usage text needs neither."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "core", *argv], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0
    imported = _imported(done.stderr)
    assert "core.__main__" in imported or "argparse" in imported
    assert not {"torch", "transformers"} & imported


@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [["fill-mask", "我吃了一个[MASK]果"], ["embed", "--word", "苹果", "我吃了一个苹果"]])
def test_model_commands_import_neither_scikit_learn_nor_transformers_models(argv):
    """Start-up: a fill-mask or an embedding of the embedded BERT needs torch and a tokenizer, not scikit-learn's
    PCA (a second of start-up), pandas (``to_frame`` only) nor transformers' modelling modules (2.5 s: they pull in
    ``torch.distributed.tensor`` and ``torch._dynamo``; core.models.plain_bert runs the model)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "core", *argv], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[0])  # the answer came
    imported = _imported(done.stderr)
    assert "torch" in imported
    assert not {"sklearn", "pandas", "transformers.modeling_utils", "transformers.models.bert.modeling_bert",
                "torch.distributed.tensor", "torch._dynamo"} & imported


def test_embed_jsonl(capsys, tiny_bert_dir, tmp_path):
    source = tmp_path / "s.txt"
    source.write_text("苹果昨天发布了新手机\n\n没有那个词\n", encoding="utf-8")
    code, out, err = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source),
                         "我吃了一个苹果")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["sentence_index"], r["start"], r["end"]) for r in rows] == [(0, 5, 7), (1, 0, 2)]
    assert len(rows[0]["layers"]) == 3 and len(rows[0]["layers"][0]) == 32
    assert f"{source}, line 3: “苹果” not found" in err  # the file's own line number, the blank line counted


def test_fill_mask_json(capsys, tiny_bert_dir):
    code, out, _ = run(capsys, "fill-mask", "--model", str(tiny_bert_dir), "--top-k", "3", "我吃了一个[MASK][MASK]")
    payload = json.loads(out)
    assert code == 0 and [m["index"] for m in payload["masks"]] == [0, 1]
    scores = [c["score"] for c in payload["masks"][0]["candidates"]]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)


def test_mix_lecture_numbers(capsys):
    identity = "[[1,0,0],[0,1,0],[0,0,1]]"
    for weights, expected in (("[0.2,0.3,0.5]", [0.4, 0.6, 1.0]), ("[0.5,0.4,0.1]", [1.0, 0.8, 0.2]),
                              ("[0.1,0.3,0.6]", [0.2, 0.6, 1.2])):
        code, out, _ = run(capsys, "mix", "--layers", identity, "--weights", weights, "--gamma", "2")
        assert code == 0 and json.loads(out) == pytest.approx(expected, abs=1e-9)
    code, out, _ = run(capsys, "mix", "--layers", identity, "--weights", "[0,0,0]", "--softmax")
    assert json.loads(out) == pytest.approx([1 / 3] * 3)


def test_attention(capsys, tiny_bert_dir):
    code, out, _ = run(capsys, "attention", "--model", str(tiny_bert_dir), "--layer", "1", "--head", "0",
                       "我吃了一个苹果")
    payload = json.loads(out)
    assert code == 0 and payload["tokens"][0] == "[CLS]" and len(payload["matrices"]) == 1
    for row in payload["matrices"][0]["attention"]:
        assert sum(row) == pytest.approx(1.0, abs=1e-4)



def test_attention_html_opens_offline(capsys, tiny_bert_dir, tmp_path):
    out = tmp_path / "attention.html"
    code, stdout, _ = run(capsys, "attention", "--model", str(tiny_bert_dir), "--format", "html", "--out", str(out),
                          "我吃了一个苹果")
    payload = json.loads(stdout)
    assert code == 0 and payload["files"] == [str(out)]
    layers, heads = payload["shape"][:2]
    page = out.read_text(encoding="utf-8")
    assert re.search(r"plotly\.js v\d", page)  # the library is inside the page
    assert not re.search(r"<script[^>]+src=", page)  # and nothing is loaded from elsewhere
    assert page.count('"coloraxis":"coloraxis"') == layers * heads  # one shared colour scale (#55 item 7)
    assert "layer 1" in page and "head 0" in page


def test_embed_exports_one_layer(capsys, tiny_bert_dir, tmp_path):
    out = tmp_path / "one.csv"
    code, stdout, _ = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--layer", "2",
                          "--format", "csv", "--out", str(out), "我吃了一个苹果", "苹果昨天发布了新手机")
    assert code == 0 and json.loads(stdout)["rows"] == 2
    rows = out.read_text(encoding="utf-8").splitlines()[1:]
    assert [row.split(",")[1] for row in rows] == ["2", "2"]  # layer_index
    code, stdout, _ = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--layer", "0",
                          "--layer", "2", "我吃了一个苹果")
    line = json.loads(stdout)
    assert code == 0 and line["layer_indices"] == [0, 2] and len(line["layers"]) == 2
    code, _, err = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--layer", "9",
                       "我吃了一个苹果")
    assert code == 2 and "layer" in err and "Traceback" not in err

BAD = [
    ("fill-mask no mask", ["fill-mask", "--model", "{tiny}", "我吃了一个苹果"], "[MASK]"),
    ("fill-mask only masks", ["fill-mask", "--model", "{tiny}", "[MASK][MASK]"], "[MASK]"),
    ("fill-mask 20 masks", ["fill-mask", "--model", "{tiny}", "我" + "[MASK]" * 20], "20"),
    ("fill-mask too long", ["fill-mask", "--model", "{tiny}", "我" * 5000 + "[MASK]"], "5006"),
    ("fill-mask html", ["fill-mask", "--model", "{tiny}", "<script>alert(1)</script>"], "[MASK]"),
    ("fill-mask whitespace", ["fill-mask", "--model", "{tiny}", "   "], "sentence"),
    ("embed word absent", ["embed", "--model", "{tiny}", "--word", "香蕉", "我吃了一个苹果"], "none of the sentences"),
    ("embed empty", ["embed", "--model", "{tiny}", "--word", "苹果", ""], "at least one sentence"),
    ("embed empty word", ["embed", "--model", "{tiny}", "--word", " ", "我吃了一个苹果"], "target word"),
    ("attention too many tokens", ["attention", "--model", "{tiny}", "苹果" * 100], "tokens"),
    ("embed 5000 chars", ["embed", "--model", "{tiny}", "--word", "苹果", "苹" * 5000], "5,000 characters"),
    ("embed binary file", ["embed", "--model", "{tiny}", "--word", "苹果", "--input", "{binary}"], "UTF-8"),
    ("embed missing file", ["embed", "--model", "{tiny}", "--word", "苹果", "--input", "/nonexistent/x.txt"],
     "Cannot read"),
    ("unknown model", ["fill-mask", "--model", "./no/such/model", "我[MASK]"], "Unknown model"),
    ("mix bad json", ["mix", "--layers", "[[1,0", "--weights", "[1]"], "JSON"),
    ("mix wrong length", ["mix", "--layers", "[[1,0],[0,1]]", "--weights", "[0.2,0.3,0.5]"],
     "3 layer weights were given for 2"),
    ("mix not normalised", ["mix", "--layers", "[[1,0],[0,1]]", "--weights", "[0.9,0.9]"], "Cannot compute the mix"),
    ("attention bad layer", ["attention", "--model", "{tiny}", "--layer", "9", "我吃了"], "--layer"),
    ("attention empty", ["attention", "--model", "{tiny}", " "], "at least one sentence"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_one_line_error(case, capsys, tiny_bert_dir, tmp_path):
    binary = tmp_path / "x.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    _, argv, fragment = case
    argv = [a.replace("{tiny}", str(tiny_bert_dir)).replace("{binary}", str(binary)) for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and fragment in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("text", ["😀我吃了一个[MASK]", "我喫了一個[MASK]果", "I ate an [MASK]", "我\x07吃[MASK]"])
def test_unusual_but_valid_input_works(text, capsys, tiny_bert_dir):
    code, out, _ = run(capsys, "fill-mask", "--model", str(tiny_bert_dir), text)
    assert code == 0 and len(json.loads(out)["masks"]) == 1


# ---- hardening: no traceback, bounded memory and output, fast offline ----------------------------------
def one_error_line(capsys, *argv) -> str:
    """The single line ``main(argv)`` prints on stderr, after checking it exits 2 with nothing on stdout."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (code, out[:200], err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), err[-2000:]
    return lines[0]


def test_invalid_utf8_argument_is_a_clear_error(capsys, tiny_bert_dir):
    # b"\xff\xfe" as Python hands undecodable argv bytes over: lone surrogates
    invalid = b"\xff\xfe[MASK]".decode("utf-8", "surrogateescape")
    line = one_error_line(capsys, "fill-mask", "--model", str(tiny_bert_dir), invalid)
    assert "Argument 4 is not valid UTF-8" in line


@pytest.mark.parametrize("model", ["a" * 300, "/" + "目" * 120, "x/" * 120, "![i](http://evil.example/md.png)"])
def test_unusable_model_names_are_unknown_models(capsys, model):
    assert "Unknown model" in one_error_line(capsys, "fill-mask", "--model", model, "我[MASK]")


def test_layers_nested_60000_deep_is_refused(capsys):
    deep = "[" * 60_000 + "1" + "]" * 60_000
    line = one_error_line(capsys, "mix", "--layers", deep, "--weights", "[1]")
    assert "--layers must be a JSON array of finite numbers only" in line


@pytest.mark.parametrize("layers, weights, gamma, fragment", [
    ("[[NaN,0],[0,1]]", "[0.5,0.5]", "1", "no true/false, strings, NaN"),
    ("[[1e999,0],[0,1]]", "[0.5,0.5]", "1", "out-of-range numbers"),
    ("[[1e308,0],[0,1]]", "[0.5,0.5]", "1e10", "overflows"),
    ("[[1e308,0],[1e308,1]]", "[0.5,0.5]", "10", "overflows"),
    ("[[1,0],[0,1]]", "[true,false]", "1", "finite numbers only"),
    ("[[1,0],[0,\"1\"]]", "[0.5,0.5]", "1", "finite numbers only"),
    ("{\"a\":1}", "[0.5,0.5]", "1", "finite numbers only"),
    ("[[1,0],[0,1]]", "[0.5,0.5]", "nan", "--gamma"),
    ("[[1,0],[0,1]]", "[0.5,0.5]", "inf", "--gamma"),
])
def test_mix_refuses_non_numbers_and_never_prints_non_json(capsys, layers, weights, gamma, fragment):
    code, out, err = run(capsys, "mix", "--layers", layers, "--weights", weights, "--gamma", gamma)
    assert code == 2 and out == "" and "Traceback" not in err  # (--gamma: argparse's usage text, two lines)
    assert fragment in err, err


def test_input_without_newlines_is_refused_in_bounded_memory(capsys, tiny_bert, tmp_path):
    """A file that never ends a line (/dev/zero is one): the reader stops at the line cap instead of holding
    the line."""
    import tracemalloc

    from core.models.encoders import MAX_SENTENCE_CHARS

    endless = tmp_path / "one-line.txt"
    endless.write_bytes(b"a" * (8 << 20))
    tracemalloc.start()  # the model is loaded already (tiny_bert): what is traced is the reading
    try:
        line = one_error_line(capsys, "embed", "--model", tiny_bert.name, "--word", "苹果", "--input", str(endless))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"{endless}, line 1: > {MAX_SENTENCE_CHARS:,} characters" in line
    assert peak < 1 << 20, f"{peak:,} bytes"  # the capped line (8 kB), not the 8 MB file


def test_sentence_cap_is_documented_and_overridable(capsys, tiny_bert_dir, tmp_path):
    source = tmp_path / "many.txt"
    source.write_text("我吃了一个苹果\n" * 30, encoding="utf-8")
    argv = ["embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source)]
    code, out, err = run(capsys, *argv, "--max-sentences", "20")
    assert code == 2 and out == "" and "30 sentences: more than the limit of 20" in err and "--max-sentences" in err
    assert "stream_word_vectors" in err  # the alternative with no limit, named (#55 item 7)
    code, out, _ = run(capsys, *argv, "--max-sentences", "30")
    assert code == 0 and len(out.splitlines()) == 30
    code, out, _ = run(capsys, "embed", "--help")
    assert code == 0 and "--max-sentences" in out


def test_many_sentences_without_the_word_are_summarised(capsys, tiny_bert_dir, tmp_path):
    source = tmp_path / "absent.txt"
    source.write_text("今天天气很好\n" * 450 + "我吃了一个苹果\n", encoding="utf-8")
    code, out, err = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source))
    assert code == 0 and len(out.splitlines()) == 1 and json.loads(out)["sentence_index"] == 450
    lines = err.splitlines()
    assert len(lines) == 11 and lines[0] == f"{source}, line 1: “苹果” not found"
    assert "440 more sentences" in lines[-1] and "450 of 451" in lines[-1]


def test_unreachable_hub_is_one_line_after_the_probe(capsys, clean_model_cache, monkeypatch):
    """No network and no HF_HUB_OFFLINE: the probe's one clear line, not half a minute of retries."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    line = one_error_line(capsys, "fill-mask", "--model", "some-org/not-cached-model", "我[MASK]")
    assert "Hugging Face is not reachable" in line


# ---- crafted model directories, a full disk, a hub that never answers ------------------------------------
def crafted_copy(tiny_bert_dir, tmp_path, name):
    import shutil

    return shutil.copytree(tiny_bert_dir, tmp_path / name)


@pytest.mark.parametrize("weights, fragment", [
    (b"0123456789", "header"),  # garbage: the first 8 bytes read as a huge header length
    ((10**12).to_bytes(8, "little") + b"{}", "header too large"),
    (b"\x08\x00\x00\x00\x00\x00\x00\x00not json", "header"),
])
def test_bad_safetensors_headers_are_one_line(capsys, tiny_bert_dir, tmp_path, weights, fragment):
    directory = crafted_copy(tiny_bert_dir, tmp_path, "bad-header")
    (directory / "model.safetensors").write_bytes(weights)
    line = one_error_line(capsys, "fill-mask", "--model", str(directory), "我[MASK]")
    assert "failed" in line and fragment in line


def test_a_tokenizer_larger_than_the_vocabulary_is_one_line(capsys, tiny_bert_dir, tmp_path):
    """(A vocabulary larger than the tokenizer is a padded one: loaded, tests/test_any_checkpoint.py.)"""
    from transformers import BertConfig, BertForPreTraining

    directory = crafted_copy(tiny_bert_dir, tmp_path, "small-vocab")
    config = BertConfig.from_pretrained(str(directory))
    config.vocab_size -= 50
    BertForPreTraining(config).save_pretrained(directory)
    line = one_error_line(capsys, "fill-mask", "--model", str(directory), "我吃了一个[MASK]")
    assert f"vocab_size = {config.vocab_size}" in line


def test_missing_weights_are_one_line_without_transformers_report(capsys, tiny_bert_dir, tmp_path):
    from safetensors.torch import load_file, save_file

    directory = crafted_copy(tiny_bert_dir, tmp_path, "missing")
    weights = load_file(str(directory / "model.safetensors"))
    save_file({k: v for k, v in weights.items() if ".layer.1." not in k}, str(directory / "model.safetensors"),
              metadata={"format": "pt"})
    line = one_error_line(capsys, "fill-mask", "--model", str(directory), "我[MASK]")  # one line: no LOAD REPORT
    assert "do not cover the model (16 tensors" in line


@pytest.mark.parametrize("changes, fragment", [
    ({"hidden_size": "abc"}, "'hidden_size' expected int, got str"),
    ({"vocab_size": None, "num_attention_heads": 0}, "'vocab_size' expected int, got NoneType"),
    ({"layer_norm_eps": "x"}, "'layer_norm_eps' expected float"),
    ({"num_attention_heads": 0}, "num_attention_heads = 0, but a size must be"),  # was "modulo by zero" (#53)
])
def test_config_fields_of_the_wrong_type_are_one_line(capsys, tiny_bert_dir, tmp_path, changes, fragment):
    """On main: "Unexpected error (StrictDataclassFieldValidationError)… Please report it"."""
    directory = crafted_copy(tiny_bert_dir, tmp_path, "wrong-type")
    config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
    (directory / "config.json").write_text(json.dumps({**config, **changes}), encoding="utf-8")
    line = one_error_line(capsys, "fill-mask", "--model", str(directory), "我[MASK]")
    assert ("failed" in line or "Refusing" in line) and fragment in line and "report" not in line, line


@pytest.mark.parametrize("argv", [["fill-mask", "我吃了一个[MASK]"],
                                  ["embed", "--word", "苹果", "我吃了一个苹果"]])
def test_a_full_disk_is_one_line(capsys, monkeypatch, tiny_bert_dir, argv):
    with open("/dev/full", "w", encoding="utf-8") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = main([argv[0], "--model", str(tiny_bert_dir), *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "ENOSPC" in lines[0], err


def test_a_hub_that_never_answers_is_one_line(capsys, clean_model_cache, silent_hub, monkeypatch):
    """The hub accepts the connection and sends nothing: the CLI gives up after LAB_HUB_TIMEOUT_S."""
    _, accepted = silent_hub
    monkeypatch.setenv("LAB_HUB_TIMEOUT_S", "1")
    line = one_error_line(capsys, "fill-mask", "--model", "silent-org/silent-model", "我[MASK]")
    assert "did not answer within 1 s" in line and accepted


# ---- a corpus with bad lines (#39 item 6) ----------------------------------------------------------------
def corpus_with_bad_lines(path):
    """Line 2 is 2,001 characters, line 4 not UTF-8, line 5 more tokens than the tiny model takes (64: read in
    windows), line 3 blank; lines 1, 5 and 6 have the word."""
    path.write_bytes("\n".join(["我吃了一个苹果", "苹" * 2001, "", "\udcff", "苹果" + "好" * 100, "苹果真好吃"])
                     .encode("utf-8", "surrogateescape") + b"\n")
    return path


def test_a_bad_line_stops_the_run_with_its_line_number_and_no_output(capsys, tiny_bert_dir, tmp_path):
    """On main: "too long" with no line number, and the output file of the lines before it stayed."""
    source = corpus_with_bad_lines(tmp_path / "corpus.txt")
    out = tmp_path / "out.jsonl"
    out.write_text("an earlier run\n", encoding="utf-8")
    line = one_error_line(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source),
                          "--out", str(out))
    assert line == (f"error: {source}, line 2: 2,001 characters, more than the 2,000 a sentence may have. "
                    "To skip such lines (each is listed), add --bad-lines skip.")
    assert out.read_text(encoding="utf-8") == "an earlier run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "out.jsonl"]  # no partial file left


def test_bad_lines_can_be_skipped_and_are_listed(capsys, tiny_bert_dir, tmp_path):
    source = corpus_with_bad_lines(tmp_path / "corpus.txt")
    code, out, err = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source),
                         "--bad-lines", "skip")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["sentence_index"] + 1 for r in rows] == [1, 5, 6]  # the file's line numbers
    skipped = [line for line in err.splitlines() if ": skipped, " in line]
    assert [s.split(":")[0] for s in skipped] == [f"{source}, line {n}" for n in (2, 4)]
    assert "not UTF-8" in skipped[1] and "2 lines skipped" in err and "1 sentences longer than" in err


@pytest.mark.parametrize("bad, reason", [("苹" * 2001, "2,001 characters"), ("\udcff", "not UTF-8")])
def test_a_bad_line_is_found_by_the_counting_pass_before_any_work(capsys, tiny_bert_dir, tmp_path, monkeypatch,
                                                                   bad, reason):
    """On main a bad line at 15,000 of 20,000 was found after the model had read the 14,999 before it (329 s for an
    over-long line, 376 s for bad UTF-8); the counting pass that reads every line first checks them."""
    from core.interface import api

    lines = ["我吃了一个苹果"] * 20_000
    lines[14_999] = bad
    source = tmp_path / "corpus.txt"
    source.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    monkeypatch.setattr(api, "load", lambda *a, **k: pytest.fail("the model was loaded"))
    line = one_error_line(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source),
                          "--max-sentences", "20000")
    assert line.startswith(f"error: {source}, line 15000: ") and reason in line, line


def test_the_sentence_limit_is_checked_before_any_work(capsys, tiny_bert_dir, tmp_path, monkeypatch):
    """On main the limit was found after embedding that many sentences, and the partial output stayed."""
    from core.models import cache

    source = tmp_path / "many.txt"
    source.write_text("我吃了一个苹果\n\n" * 300, encoding="utf-8")
    out = tmp_path / "proj"
    monkeypatch.setattr(cache, "load_encoder", lambda *a, **k: pytest.fail("the model was loaded"))
    line = one_error_line(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--input", str(source),
                          "--max-sentences", "250", "--format", "projector", "--out", str(out))
    assert "300 sentences: more than the limit of 250" in line and not out.exists()


def test_a_stream_past_the_cap_says_the_limit_and_the_alternatives():
    """A stream that could not be counted first (a pipe) stops at the cap with the same advice (#55 item 7)."""
    import argparse

    from core.interface.cli_io import input_sentences

    args = argparse.Namespace(sentences=["苹果"] * 3, input=None, max_sentences=2)
    with pytest.raises(LabError) as info:
        list(input_sentences(args))
    message = info.value.message("en", markdown=False)
    assert message.startswith("≥ 3 sentences: more than the limit of 2")
    assert "--max-sentences N" in message and "stream_word_vectors" in message
    assert "--max-sentences N" in info.value.message("zh", markdown=False)


def test_parquet_without_pyarrow_names_the_extra(capsys, tiny_bert_dir, tmp_path, monkeypatch):
    """Without pyarrow, ``--format parquet`` was "Unexpected error (ModuleNotFoundError)" (#55 item 5): now one
    line naming the ``[parquet]`` extra, in both languages, and nothing written."""
    for name in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)  # what an environment without pyarrow answers: ImportError
    out = tmp_path / "v.parquet"
    code, stdout, err = run(capsys, "embed", "--model", str(tiny_bert_dir), "--word", "苹果", "--format", "parquet",
                            "--out", str(out), "我吃了一个苹果")
    assert code != 0 and stdout == "" and not out.exists() and list(tmp_path.iterdir()) == []
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and 'elmo-bert-lab[parquet]' in lines[0] and "Unexpected" not in err
    with pytest.raises(LabError) as info:
        __import__("core.interface.export").interface.export.TableWriter("parquet", tmp_path / "t.parquet")
    assert info.value.code == "needs_extra" and "[parquet]" in info.value.message("zh", markdown=False)
