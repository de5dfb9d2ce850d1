"""Word vectors and attentions in the files the analysts' tools read.

- The TensorBoard Embedding Projector (projector.tensorflow.org, "Load"): ``vectors.tsv``, one vector per
  line as tab-separated floats without a header, and ``metadata.tsv``, one line per vector in the same
  order; with more than one column its first line is the column names (the Projector reads a single
  column file as labels without a header). One row per (occurrence, layer), so the Projector can colour
  and filter by layer, model, sentence or sense. :class:`ProjectorWriter`, :func:`write_projector`,
  :func:`projector_zip`.
- A table (pandas, R, a spreadsheet): one row per (occurrence, layer), the vector as ``d0 … d{dim-1}``
  columns; CSV, or Parquet through pyarrow (the library's ``[parquet]`` extra: ``pip install
  "elmo-bert-lab[parquet]"``; without it, LabError ``needs_extra``). :class:`TableWriter`.
- bertviz (``head_view(attention, tokens)``): per layer a ``(batch=1, num_heads, n, n)`` array, and the
  tokens, as JSON or npz (:func:`write_bertviz`; :func:`read_bertviz` gives bertviz's tuple of tensors back).

Every writer takes the :class:`~core.compute.occurrences.WordVectors` of one batch at a time, so a corpus streams
through in bounded memory. In every text cell a tab or line break becomes a space (it would start a new column
or row). The table's text cells (CSV, Parquet) also pass ``core.guard.safe_text.csv_safe``, so a spreadsheet never
runs a formula from them; the Projector's ``metadata.tsv`` keeps the text as it is (``=HYPERLINK(…)`` included:
the Projector shows it, and a guard's apostrophe would show too), so open that file in a spreadsheet with care.
Every file is written whole or not at all, through :class:`AtomicOutputs` (:func:`write_file` for one file):
under a fresh temporary name in the target's own folder, renamed into place when complete; a target that is a
symbolic link, or a path with a ``..`` part, is refused (it could make the export overwrite a file elsewhere).
:class:`TableWriter` streams into the handle or Parquet path it is given (a path refused as above, but written in
place): the CLI gives it an :class:`AtomicOutputs` file.
"""
from __future__ import annotations

import csv
import io
import json
import os
import secrets
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np

from ..compute.occurrences import WordVectors
from ..compute.token_vectors import layer_indices
from ..guard.errors import LabError, type_name
from ..guard.safe_text import csv_safe
from ..vectors.view import highlight

PROJECTOR_FILES = ("vectors.tsv", "metadata.tsv")
METADATA_COLUMNS = ("sentence_index", "sentence", "layer", "model")  # + "label" when senses are given
TABLE_COLUMNS = ("model", "layer_index", "layer", "sentence_index", "sentence", "start", "end", "label")
TABLE_FORMATS = ("csv", "parquet")
BERTVIZ_FORMATS = ("json", "npz")
FLOAT_FORMAT = "%.7g"  # float32 carries about 7 significant digits


def output_path(path: str | Path) -> Path:
    """``path`` as a place to write: LabError ``out_climbs`` for a ``..`` part, ``out_symlink`` for a symbolic
    link (writing through it would replace the file it points to), ``bad_argument`` for no path at all."""
    if not isinstance(path, str | os.PathLike):
        raise LabError("bad_argument", name="path", expected="str or Path", given=type_name(path))
    path = Path(path)
    if ".." in path.parts:
        raise LabError("out_climbs", file=str(path))
    if path.is_symlink():
        raise LabError("out_symlink", file=str(path))
    return path


class AtomicOutputs:
    """Files that appear together, complete, or not at all: ``temps`` are fresh names in each target's folder
    (the rename stays on one file system); :meth:`commit` renames them over the targets (a symlink put there
    meanwhile is replaced, not followed), :meth:`discard` deletes them. As a context manager: commit when the
    block ends normally, discard when it raises. An ``OSError`` becomes LabError ``out_unwritable``."""

    def __init__(self, *targets: str | Path):
        self.targets = [output_path(target) for target in targets]
        self.temps = [t.with_name(f".{t.name}.{secrets.token_hex(6)}.part") for t in self.targets]
        try:
            for target in self.targets:
                target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _unwritable(self.targets[0], exc) from exc

    def commit(self) -> None:
        try:
            for temp, target in zip(self.temps, self.targets, strict=True):
                output_path(target)  # no symlink appeared since
                os.replace(temp, target)
        except OSError as exc:
            raise _unwritable(target, exc) from exc
        finally:
            self.discard()

    def discard(self) -> None:
        for temp in self.temps:
            temp.unlink(missing_ok=True)

    def __enter__(self) -> list[Path]:
        return self.temps

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _unwritable(path: Path, exc: OSError) -> LabError:
    return LabError("out_unwritable", file=str(path), error=exc.strerror or type(exc).__name__)


def write_file(path: str | Path, write: Callable[[IO], object], *, binary: bool = False) -> Path:
    """``write(handle)`` into one file at ``path``, through :class:`AtomicOutputs` (complete or not at all, no
    symbolic link followed); the handle is text (UTF-8, ``\\n`` line ends) unless ``binary``."""
    outputs = AtomicOutputs(path)
    with outputs as (temp,):
        try:
            with open(temp, "xb") if binary else open(temp, "x", encoding="utf-8", newline="\n") as handle:
                write(handle)
        except OSError as exc:
            raise _unwritable(outputs.targets[0], exc) from exc
    return outputs.targets[0]


def text_cell(text: object) -> str:
    """One TSV text cell: whitespace runs (tabs, line breaks) as one space, so a cell stays one cell."""
    return " ".join(str(text).split())


def cell(text: object) -> str:
    """One spreadsheet (CSV, Parquet) text cell: :func:`text_cell` with formula characters made inert. The
    Projector's metadata is no spreadsheet and keeps the text as it is."""
    return csv_safe(text_cell(text))


def _layers(vectors: WordVectors, layers: Sequence[int] | None) -> list[int]:
    return layer_indices(layers, len(vectors.layer_names))


def _rows(vectors: WordVectors, layers: Sequence[int] | None):
    """(occurrence, layer index) in the order every writer uses: occurrences, then layers."""
    chosen = _layers(vectors, layers)
    return [(occurrence, j) for occurrence in vectors.occurrences for j in chosen]


def _something(vectors: WordVectors) -> WordVectors:
    """``vectors`` when they are :func:`core.interface.api.embed`'s result and hold an occurrence: an export of
    nothing is refused, not written as empty files."""
    if not isinstance(vectors, WordVectors):
        raise LabError("bad_argument", name="vectors", expected="WordVectors (api.embed's result)",
                       given=type_name(vectors))
    if not vectors.occurrences:
        raise LabError("word_in_no_sentence", word=vectors.word)
    return vectors


class ProjectorWriter:
    """Appends batches to an open ``vectors.tsv`` / ``metadata.tsv`` pair. ``labelled``: add the sense
    label column (decided before the first row: the header comes first)."""

    def __init__(self, vectors_file: IO[str], metadata_file: IO[str], *, labelled: bool = False,
                 layers: Sequence[int] | None = None):
        self.vectors_file, self.metadata_file, self.layers = vectors_file, metadata_file, layers
        self.labelled = labelled
        self.rows = 0
        metadata_file.write("\t".join(METADATA_COLUMNS + (("label",) if labelled else ())) + "\n")

    def write(self, vectors: WordVectors) -> int:
        """Writes the batch's rows; returns how many."""
        rows = _rows(vectors, self.layers)
        if not rows:
            return 0
        matrix = np.stack([occurrence.layers[j] for occurrence, j in rows]).astype(np.float32)
        np.savetxt(self.vectors_file, matrix, fmt=FLOAT_FORMAT, delimiter="\t")
        for occurrence, j in rows:
            cells = [str(occurrence.sentence_index),
                     highlight(occurrence.sentence, occurrence.start, occurrence.end, escape=False),
                     vectors.layer_names[j], vectors.model] + ([occurrence.label or ""] if self.labelled else [])
            self.metadata_file.write("\t".join(text_cell(c) for c in cells) + "\n")
        self.rows += len(rows)
        return len(rows)


def _labelled(vectors: WordVectors) -> bool:
    return any(occurrence.label for occurrence in vectors.occurrences)


def write_projector(vectors: WordVectors, directory: str | Path, *, layers: Sequence[int] | None = None
                    ) -> tuple[Path, Path]:
    """``directory/vectors.tsv`` and ``directory/metadata.tsv`` (created; existing files are replaced, both at
    once). ``sentence_index`` counts from 0, as in the API. No occurrence: ``word_in_no_sentence``, nothing
    written."""
    _something(vectors)
    directory = output_path(directory)
    paths = (directory / PROJECTOR_FILES[0], directory / PROJECTOR_FILES[1])
    with AtomicOutputs(*paths) as temps:
        try:
            with open(temps[0], "x", encoding="utf-8", newline="\n") as vec, \
                    open(temps[1], "x", encoding="utf-8", newline="\n") as meta:
                ProjectorWriter(vec, meta, labelled=_labelled(vectors), layers=layers).write(vectors)
        except OSError as exc:
            raise _unwritable(directory, exc) from exc
    return paths


def projector_zip(vectors: WordVectors, *, layers: Sequence[int] | None = None) -> bytes:
    """The two Projector files in one zip (a browser download is one file)."""
    _something(vectors)
    vec, meta = io.StringIO(), io.StringIO()
    ProjectorWriter(vec, meta, labelled=_labelled(vectors), layers=layers).write(vectors)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in zip(PROJECTOR_FILES, (vec.getvalue(), meta.getvalue())):
            archive.writestr(name, text)
    return buffer.getvalue()


def table_columns(vectors: WordVectors, layers: Sequence[int] | None = None) -> dict[str, list | np.ndarray]:
    """The batch as columns: ``TABLE_COLUMNS`` then ``d0 … d{dim-1}`` (float32)."""
    rows = _rows(vectors, layers)
    columns: dict[str, list | np.ndarray] = {
        "model": [cell(vectors.model)] * len(rows), "layer_index": [j for _, j in rows],
        "layer": [vectors.layer_names[j] for _, j in rows],
        "sentence_index": [o.sentence_index for o, _ in rows], "sentence": [cell(o.sentence) for o, _ in rows],
        "start": [o.start for o, _ in rows], "end": [o.end for o, _ in rows],
        "label": [cell(o.label or "") for o, _ in rows]}
    matrix = np.stack([o.layers[j] for o, j in rows]).astype(np.float32) if rows else np.zeros((0, 0), np.float32)
    for d in range(matrix.shape[1]):
        columns[f"d{d}"] = matrix[:, d]
    return columns


class TextOut(Protocol):
    """Where CSV text goes: an open text file, or anything with its ``write`` (the CLI's stdout)."""

    def write(self, text: str, /) -> int | None: ...


def _require_pyarrow() -> None:
    """pyarrow, which Parquet needs, or LabError ``needs_extra`` naming the extra that brings it."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise LabError("needs_extra", what="Parquet", package="pyarrow", extra="parquet") from exc


class TableWriter:
    """Appends batches to one CSV (an open text handle) or Parquet file (a path; one row group per batch)."""

    def __init__(self, fmt: str, target: TextOut | str | Path, *, layers: Sequence[int] | None = None):
        if fmt not in TABLE_FORMATS:
            raise ValueError(f"format must be one of {TABLE_FORMATS}, not {fmt!r}")
        if fmt == "parquet":
            _require_pyarrow()
        if isinstance(target, str | Path):
            target = output_path(target)
        self.fmt, self.target, self.layers = fmt, target, layers
        self.rows = 0
        # csv's writer or pyarrow's, made on the first rows: the header / schema needs the vector size
        self._writer: Any = None

    def write(self, vectors: WordVectors) -> int:
        columns = table_columns(vectors, self.layers)
        count = len(columns["model"])
        if not count:
            return 0
        if self.fmt == "csv":
            if self._writer is None:
                assert not isinstance(self.target, str | Path)  # CSV goes to an open handle
                self._writer = csv.writer(self.target, lineterminator="\n")
                self._writer.writerow(list(columns))
            values = list(columns.values())
            self._writer.writerows(
                [v[i] if k < len(TABLE_COLUMNS) else FLOAT_FORMAT % v[i] for k, v in enumerate(values)]
                for i in range(count))
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.table(columns)
            if self._writer is None:
                self._writer = pq.ParquetWriter(str(self.target), table.schema)
            self._writer.write_table(table)
        self.rows += count
        return count

    def close(self) -> None:
        if self.fmt == "parquet" and self._writer is not None:
            self._writer.close()


def bertviz_arrays(attention: np.ndarray) -> np.ndarray:
    """``(num_layers, num_heads, n, n)`` → ``(num_layers, batch=1, num_heads, n, n)`` float32: bertviz's
    tuple of per-layer ``(1, num_heads, n, n)`` tensors, stacked."""
    att = np.asarray(attention, dtype=np.float32)
    if att.ndim != 4 or att.shape[-1] != att.shape[-2]:
        raise ValueError(f"attention must be (num_layers, num_heads, n, n), got shape {att.shape}")
    return att[:, None]


def bertviz_json(attention: np.ndarray, tokens: Sequence[str], *, model: str = "") -> str:
    """``{"tokens": [...], "attention": [layer][batch][head][from][to], "shape": …, "model": …}``."""
    arrays = bertviz_arrays(attention)
    if len(tokens) != arrays.shape[-1]:
        raise ValueError(f"{len(tokens)} tokens for attention over {arrays.shape[-1]}")
    return json.dumps({"format": "bertviz head_view", "model": model, "tokens": list(tokens),
                       "shape": list(arrays.shape), "attention": np.round(arrays.astype(np.float64), 6).tolist()},
                      ensure_ascii=False)


def write_bertviz(attention: np.ndarray, tokens: Sequence[str], path: str | Path, fmt: str, *,
                  model: str = "") -> Path:
    """The attention as ``fmt`` (``json``, or ``npz`` with arrays ``attention`` and ``tokens``) at ``path``."""
    if fmt not in BERTVIZ_FORMATS:
        raise ValueError(f"format must be one of {BERTVIZ_FORMATS}, not {fmt!r}")
    if fmt == "json":
        return write_file(path, lambda handle: handle.write(bertviz_json(attention, tokens, model=model)))
    # a handle: np.savez would add ".npz" to another suffix
    return write_file(path, lambda handle: np.savez_compressed(handle, attention=bertviz_arrays(attention),
                                                               tokens=np.array(list(tokens), dtype=str)),
                      binary=True)


def write_attention_html(attention: np.ndarray, tokens: Sequence[str], path: str | Path, *, model: str = "") -> Path:
    """Every layer × head of ``attention`` ``(layers, heads, n, n)`` as the app's heatmap grid in one HTML file
    with plotly.js inside it (about 5 MB): it opens in any browser with no network, unlike bertviz's views,
    which load their scripts from a CDN. Made to be read on paper too: the tokens on both axes of every map
    (rows: from, columns: to) and one colour scale for all maps with its colour bar."""
    from ..figures.attention import attention_grid

    layers, heads = attention.shape[:2]
    figure = attention_grid(attention, list(tokens), layer_names=[f"layer {i + 1}" for i in range(layers)],
                            head_names=[f"head {h}" for h in range(heads)],
                            title=f"{model} · {' '.join(tokens)}" if model else " ".join(tokens), labelled=True)
    return write_file(path, lambda handle: handle.write(figure.to_html(include_plotlyjs=True, full_html=True)))


def read_bertviz(path: str | Path):
    """``(attention, tokens)`` from :func:`write_bertviz`'s file, ready for ``bertviz.head_view(*…)``: a tuple
    of per-layer torch tensors ``(1, num_heads, n, n)`` and the token list."""
    import torch

    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as data:
            arrays, tokens = data["attention"], [str(t) for t in data["tokens"]]
    else:
        payload = json.loads(path.read_text(encoding="utf-8"))
        arrays, tokens = np.asarray(payload["attention"], dtype=np.float32), payload["tokens"]
    return tuple(torch.from_numpy(np.ascontiguousarray(layer)) for layer in arrays), tokens
