"""core.interface.export and its CLI options: the Embedding Projector's two TSV files, CSV / Parquet tables,
bertviz's layout."""
from __future__ import annotations

import dataclasses
import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.__main__ import main
from core.guard.errors import LabError
from core.interface import api, export

SENTENCES = ["我吃了一个苹果。", "苹果昨天发布了新手机，\t=苹果 真好", "今天天气很好。"]


@pytest.fixture(scope="module")
def labelled(bert):
    return api.embed(bert, SENTENCES, "苹果", labels=["水果", "公司", None])


def read_projector(directory):
    vectors = (directory / "vectors.tsv").read_text(encoding="utf-8").splitlines()
    metadata = (directory / "metadata.tsv").read_text(encoding="utf-8").splitlines()
    return [[float(x) for x in line.split("\t")] for line in vectors], [line.split("\t") for line in metadata]


def test_projector_layout(labelled, tmp_path):
    export.write_projector(labelled, tmp_path / "proj")
    vectors, metadata = read_projector(tmp_path / "proj")
    occurrences, layers = len(labelled.occurrences), len(labelled.layer_names)
    assert occurrences == 3 and len(vectors) == occurrences * layers == len(metadata) - 1  # the header row
    assert metadata[0] == ["sentence_index", "sentence", "layer", "model", "label"]
    assert all(len(row) == 256 for row in vectors) and all(len(row) == 5 for row in metadata)
    expected = np.stack([o.layers[j] for o in labelled.occurrences for j in range(layers)])
    np.testing.assert_allclose(vectors, expected, rtol=1e-6, atol=1e-7)
    assert metadata[1] == ["0", "我吃了一个【苹果】。", "embeddings", "mini-bert-zh", "水果"]  # 0-based, as the API
    # the tab inside the sentence became a space (no extra column), the second occurrence is marked
    assert metadata[1 + 2 * layers][1] == "苹果昨天发布了新手机， =【苹果】 真好"
    assert [row[2] for row in metadata[1:1 + layers]] == labelled.layer_names


def test_unlabelled_layer_subset_and_zip(bert, tmp_path):
    vectors = api.embed(bert, SENTENCES[:1], "苹果")
    export.write_projector(vectors, tmp_path, layers=[4])
    rows, metadata = read_projector(tmp_path)
    assert metadata == [["sentence_index", "sentence", "layer", "model"],
                        ["0", "我吃了一个【苹果】。", "layer 4", "mini-bert-zh"]]
    np.testing.assert_allclose(rows[0], vectors.occurrences[0].layers[4], rtol=1e-6, atol=1e-7)
    with zipfile.ZipFile(io.BytesIO(export.projector_zip(vectors, layers=[4]))) as archive:
        assert sorted(archive.namelist()) == sorted(export.PROJECTOR_FILES)
        for name in export.PROJECTOR_FILES:
            assert archive.read(name).decode("utf-8") == (tmp_path / name).read_text(encoding="utf-8")
    with pytest.raises(LabError) as err:
        export.write_projector(vectors, tmp_path, layers=[5])
    assert err.value.code == "out_of_range"


def test_formula_cells_are_inert(labelled):
    columns = export.table_columns(labelled)
    assert all(not s.startswith(("=", "+", "-", "@")) for s in columns["sentence"])
    assert export.cell("=SUM(A1)") == "'=SUM(A1)" and export.cell("a\tb\nc") == "a b c"
    # the guard belongs to spreadsheets only: the Projector's metadata keeps the sentence as it is
    assert export.text_cell("-【苹果】是水果") == "-【苹果】是水果" and export.text_cell("a\tb\nc") == "a b c"


def test_one_numbering_and_no_empty_export(labelled, tmp_path):
    """sentence_index counts from 0 in every output, as in the API and the JSON Lines (#41); an export of no
    occurrence is an error, not two empty files."""
    indices = [o.sentence_index for o in labelled.occurrences]
    assert export.table_columns(labelled)["sentence_index"][::5] == indices
    export.write_projector(labelled, tmp_path, layers=[0])
    rows = (tmp_path / "metadata.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert [int(row.split("\t")[0]) for row in rows] == indices
    empty = dataclasses.replace(labelled, occurrences=[])
    for call in (lambda: export.write_projector(empty, tmp_path / "none"), lambda: export.projector_zip(empty)):
        with pytest.raises(LabError) as err:
            call()
        assert err.value.code == "word_in_no_sentence"
    assert not (tmp_path / "none").exists()


def test_csv_and_parquet_tables(labelled, tmp_path):
    buffer = io.StringIO()
    writer = export.TableWriter("csv", buffer)
    assert writer.write(labelled) == 3 * 5
    frame = pd.read_csv(io.StringIO(buffer.getvalue()), keep_default_na=False)
    assert list(frame.columns[:8]) == list(export.TABLE_COLUMNS) and frame.shape == (15, 8 + 256)
    parquet = export.TableWriter("parquet", tmp_path / "v.parquet")
    parquet.write(labelled)
    parquet.write(labelled)  # a second batch: a second row group of the same file
    parquet.close()
    table = pd.read_parquet(tmp_path / "v.parquet")
    assert table.shape == (30, 8 + 256) and list(table["label"][:5]) == ["水果"] * 5
    expected = np.stack([o.layers[j] for o in labelled.occurrences for j in range(5)])
    for loaded in (frame, table.iloc[:15]):
        np.testing.assert_allclose(loaded[[f"d{d}" for d in range(256)]].to_numpy(float), expected, rtol=1e-6)


@pytest.mark.parametrize("fmt", export.BERTVIZ_FORMATS)
def test_bertviz_files_round_trip(bert, tmp_path, fmt):
    attention, tokens = api.bertviz_attention(bert, "苹果昨天发布了新手机。")
    stacked = np.stack([layer[0].numpy() for layer in attention])
    path = export.write_bertviz(stacked, tokens, tmp_path / f"att.{fmt}", fmt, model=bert.name)
    loaded, loaded_tokens = export.read_bertviz(path)
    assert loaded_tokens == tokens and len(loaded) == len(attention)
    for mine, theirs in zip(loaded, attention):  # bertviz's format_attention: 4-D, batch 1, squeezable
        assert mine.ndim == 4 and mine.shape == theirs.shape and mine.squeeze(0).shape == theirs.shape[1:]
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), atol=1e-6)
    with pytest.raises(ValueError):
        export.bertviz_json(stacked, tokens[:-1])


# ---- the CLI ----------------------------------------------------------------------------------------
def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.realmodel
def test_cli_projector_export_streams_a_file(capsys, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(["我吃了一个苹果。", "", "今天天气很好。"] * 150) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "embed", "--model", "mini-bert-zh", "--word", "苹果", "--input", source,
                         "--format", "projector", "--out", tmp_path / "proj")
    assert code == 0
    summary = json.loads(out)
    assert summary["format"] == "projector" and summary["rows"] == 150 * 5
    vectors, metadata = read_projector(tmp_path / "proj")
    assert len(vectors) == len(metadata) - 1 == 150 * 5
    assert [row[0] for row in metadata[1::5]] == [str(3 * k) for k in range(150)]  # line - 1, blanks counted
    assert "not found in 140 more sentences" in err and "%|" not in err  # no progress bar outside a terminal


@pytest.mark.subprocess
def test_cli_progress_bar_on_a_terminal(tmp_path):
    """On a terminal stderr gets tqdm's bar, counted against the file's lines; stdout keeps only the data."""
    source = tmp_path / "in.txt"
    source.write_text("我吃了一个苹果。\n" * 450, encoding="utf-8")
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    done = subprocess.run([sys.executable, "-m", "core", "embed", "--word", "苹果", "--input", str(source),
                           "--format", "csv"], cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE,
                          stderr=follower, env={**os.environ, "LAB_LANG": "en"}, timeout=300)
    os.close(follower)
    terminal = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal is closed: everything was read
            break
        if not chunk:
            break
        terminal += chunk
    os.close(leader)
    assert done.returncode == 0 and len(done.stdout.decode("utf-8").splitlines()) == 1 + 450 * 5
    assert b"450/450" in terminal and b"sentences" in terminal


@pytest.mark.realmodel
def test_cli_csv_to_stdout_and_jsonl_to_a_file(capsys, tmp_path):
    code, out, _ = run(capsys, "embed", "--model", "mini-elmo-zh", "--word", "苹果", "--format", "csv",
                       "我吃了一个苹果")
    frame = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert code == 0 and frame.shape == (3, 8 + 256) and list(frame["layer"]) == ["token layer", "biLSTM 1", "biLSTM 2"]
    code, out, _ = run(capsys, "embed", "--model", "mini-bert-zh", "--word", "苹果", "--out", tmp_path / "v.jsonl",
                       "我吃了一个苹果", "苹果很甜")
    lines = (tmp_path / "v.jsonl").read_text(encoding="utf-8").splitlines()
    assert code == 0 and json.loads(out)["rows"] == 2 and [json.loads(x)["sentence_index"] for x in lines] == [0, 1]


@pytest.mark.realmodel
def test_cli_attention_for_bertviz(capsys, tmp_path):
    code, out, _ = run(capsys, "attention", "--model", "mini-bert-zh", "--format", "bertviz-json",
                       "--out", tmp_path / "a.json", "我吃了一个苹果")
    assert code == 0 and json.loads(out)["shape"] == [4, 1, 4, 9, 9]
    payload = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert np.asarray(payload["attention"]).shape == (4, 1, 4, 9, 9) and len(payload["tokens"]) == 9


@pytest.mark.parametrize("argv, fragment", [
    (["embed", "--word", "苹果", "--format", "projector", "我吃了一个苹果"], "--out a directory"),
    (["embed", "--word", "苹果", "--format", "parquet", "我吃了一个苹果"], "--out a .parquet file"),
    (["embed", "--word", "苹果", "--format", "csv", "--out", "{file}/x.csv", "我吃了一个苹果"], "Cannot write"),
    (["embed", "--word", "苹果", "--format", "projector", "--out", "{file}", "我吃了一个苹果"], "Cannot write"),
    (["attention", "--format", "bertviz-npz", "我吃了一个苹果"], "--out a file"),
    (["attention", "--format", "bertviz-npz", "--out", "{file}/a.npz", "我吃了一个苹果"], "Cannot write"),
])
@pytest.mark.realmodel
def test_cli_export_errors_are_one_line(capsys, tmp_path, argv, fragment):
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    code, out, err = run(capsys, *[a.replace("{file}", str(blocker)) for a in argv])
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1 and fragment in err


# ---- where exports may write (#39 item 5) -------------------------------------------------------------
def test_a_symlinked_target_is_refused_and_the_file_behind_it_kept(labelled, tmp_path):
    """On main write_projector wrote through a vectors.tsv symlink, overwriting a file outside its folder."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me", encoding="utf-8")
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "vectors.tsv").symlink_to(outside)
    with pytest.raises(LabError) as err:
        export.write_projector(labelled, folder)
    assert err.value.code == "out_symlink" and "vectors.tsv" in err.value.message("en", markdown=False)
    assert outside.read_text(encoding="utf-8") == "keep me" and not (folder / "metadata.tsv").exists()
    (tmp_path / "view.json").symlink_to(outside)
    with pytest.raises(LabError) as err:
        export.write_bertviz(np.full((1, 1, 2, 2), 0.5), ["a", "b"], tmp_path / "view.json", "json")
    assert err.value.code == "out_symlink" and outside.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("target", ["a/../../exp/b", "../x"])
def test_a_path_that_climbs_is_refused(labelled, tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    with pytest.raises(LabError) as err:
        export.write_projector(labelled, target)
    assert err.value.code == "out_climbs"
    assert not (tmp_path.parent / "exp").exists() and not (tmp_path.parent / "x").exists()


def test_a_failed_export_leaves_the_old_files_and_no_partial_ones(labelled, tmp_path):
    folder = tmp_path / "proj"
    export.write_projector(labelled, folder)
    before = {name: (folder / name).read_bytes() for name in export.PROJECTOR_FILES}
    with pytest.raises(LabError):
        export.write_projector(labelled, folder, layers=[0, 99])  # fails once the files are open (on main: truncated)
    assert {name: (folder / name).read_bytes() for name in export.PROJECTOR_FILES} == before
    assert sorted(p.name for p in folder.iterdir()) == sorted(export.PROJECTOR_FILES)  # no temporary file left


# ---- one atomic, symlink-refusing writer for every export (#53 item 2) -------------------------------
ATTENTION, TOKENS = np.full((1, 1, 2, 2), 0.5), ["a", "b"]
SINGLE_FILE_EXPORTS = {
    "attention_html": lambda path: export.write_attention_html(ATTENTION, TOKENS, path),
    "bertviz_json": lambda path: export.write_bertviz(ATTENTION, TOKENS, path, "json"),
    "bertviz_npz": lambda path: export.write_bertviz(ATTENTION, TOKENS, path, "npz"),
    "parquet_table": lambda path: export.TableWriter("parquet", path),
}


@pytest.mark.parametrize("name", SINGLE_FILE_EXPORTS)
def test_every_single_file_export_refuses_a_symlink(tmp_path, name):
    """On main ``attention --format html --out link.csv`` replaced the file the link pointed to."""
    outside = tmp_path / "precious.csv"
    outside.write_text("keep me", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(outside)
    with pytest.raises(LabError) as err:
        SINGLE_FILE_EXPORTS[name](tmp_path / "link.csv")
    assert err.value.code == "out_symlink" and outside.read_text(encoding="utf-8") == "keep me"


@pytest.mark.parametrize("name", ["attention_html", "bertviz_json", "bertviz_npz"])
def test_every_single_file_export_is_renamed_into_place(tmp_path, monkeypatch, name):
    """Written under a temporary name beside the target and renamed over it once complete (on main the HTML was
    written in place: a failed write left half a page)."""
    renames = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace",
                        lambda src, dst: (renames.append((Path(src), Path(dst))), real_replace(src, dst)))
    target = tmp_path / "out.file"
    assert SINGLE_FILE_EXPORTS[name](target) == target
    assert [(src.parent, dst) for src, dst in renames] == [(tmp_path, target)]
    assert [p.name for p in tmp_path.iterdir()] == ["out.file"]


def test_the_projector_metadata_keeps_formulas(labelled, tmp_path):
    """What the module's docstring says (on main it said the TSV was guarded): the Projector's TSV keeps ``=…`` as
    typed; the table's cells are guarded (test_formula_cells_are_inert)."""
    _, metadata = read_projector(export.write_projector(labelled, tmp_path / "p")[0].parent)
    assert any("=苹果" in cell for row in metadata for cell in row)


def _html_figure(page: str) -> tuple[list, dict]:
    """The traces and layout a plotly HTML page draws (its ``Plotly.newPlot("id", data, layout, …)`` call)."""
    start = page.index("Plotly.newPlot(")
    rest = page[page.index(",", start) + 1:].lstrip()
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(rest)
    layout, _ = decoder.raw_decode(rest[end:].lstrip(" ,\n"))
    return data, layout


def test_attention_html_can_be_read_on_paper(tmp_path):
    """The offline attention page had no token labels and a colour scale per map, without a bar (#55 item 7):
    now every map names the tokens on both axes, and one colour scale with its bar covers all maps."""
    attention = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 4))  # (layers, heads, n, n)
    tokens = ["[CLS]", "苹果", "好吃", "[SEP]"]
    path = export.write_attention_html(attention, tokens, tmp_path / "att.html", model="tiny")
    data, layout = _html_figure(path.read_text(encoding="utf-8"))
    assert len(data) == 2 * 3 and all(trace["coloraxis"] == "coloraxis" for trace in data)
    axes = [value for key, value in layout.items() if key.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 2 * 2 * 3
    for axis in axes:
        assert axis["showticklabels"] is True and axis["ticktext"] == tokens and axis["tickvals"] == [0, 1, 2, 3]
    scale = layout["coloraxis"]
    assert scale["cmin"] == 0 and scale["cmax"] == pytest.approx(attention.max())
    assert scale["colorbar"]["title"]["text"] == "attention weight"
    domains = sorted({tuple(layout[key]["domain"]) for key in layout if key.startswith("xaxis")})
    assert all(right < left for (_, right), (left, _) in zip(domains, domains[1:]))  # maps apart, room for labels
