"""The command line's input and output: stdout that fails with one clear line, ``embed``'s --input stream with
its caps, and where ``embed``'s vectors go (JSON Lines, CSV, Parquet or the Projector's files, written atomically).
``core.__main__`` holds the commands."""
from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..guard.errors import LabError


def write_stdout(text: str | None = None) -> None:
    """``text`` to stdout (None: flush it). A full disk or a closed pipe is the one-line ``output_failed``;
    the unwritten rest is dropped (stdout then points at /dev/null), else Python's exit-time flush of it
    would add a second error."""
    try:
        if text is None:
            sys.stdout.flush()
        else:
            sys.stdout.write(text)
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise LabError("output_failed", error=errno.errorcode.get(exc.errno or 0, "?")) from exc


# --input is read as a stream with two caps (both overridable): a line longer than the longest
# sentence the models take is refused before it is held in memory (``/dev/zero`` has no newline), and
# so is a file with more sentences than --max-sentences (a 20 MB file is hours of CPU time).
MAX_INPUT_SENTENCES = 10_000
EMBED_FORMATS = ("jsonl", "projector", "csv", "parquet")


def _file_lines(handle, first: int):
    """``(index, sentence)`` of every non-blank line of the open --input file (binary), blank ones included in the
    count, so that a line's index is ``first`` + its line number - 1. A line no model can take (over
    ``MAX_SENTENCE_CHARS`` characters, not UTF-8 text) comes as ``(index, LabError)``; an over-long line is never
    held whole (``/dev/zero`` has no newline)."""
    from ..models.encoders import MAX_SENTENCE_CHARS

    line_bytes = 4 * MAX_SENTENCE_CHARS + 2  # UTF-8 needs at most 4 bytes a character, plus CR LF
    for number, raw in enumerate(iter(lambda: handle.readline(line_bytes + 1), b""), 1):
        if len(raw) > line_bytes:
            while raw and not raw.endswith(b"\n"):  # the rest of the line, in bounded pieces
                raw = handle.readline(line_bytes + 1)
            yield first + number - 1, LabError("sentence_too_long", length=f"> {MAX_SENTENCE_CHARS:,}",
                                               limit=f"{MAX_SENTENCE_CHARS:,}")
            continue
        line: str | LabError
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            line = LabError("line_not_utf8")
        if isinstance(line, str) and "\x00" in line:
            line = LabError("line_not_utf8")
        elif isinstance(line, str) and len(line) > MAX_SENTENCE_CHARS:  # as core.interface.api would, in the count
            line = LabError("sentence_too_long", length=f"{len(line):,}", limit=f"{MAX_SENTENCE_CHARS:,}")
        if line:
            yield first + number - 1, line


def input_sentences(args):
    """``(index, sentence)`` of the command-line sentences, then of every non-blank line of the --input file
    (:func:`_file_lines`: a line's index is its line number - 1 after the command-line ones; one that cannot be
    read comes as ``(index, LabError)``, for ``--bad-lines`` to stop at or skip)."""
    count = 0

    def counted(item):
        nonlocal count
        count += 1
        if count > args.max_sentences:  # a stream that could not be counted beforehand (a pipe), or grew
            raise LabError("input_too_many_sentences", count=f"≥ {args.max_sentences + 1:,}",
                           limit=f"{args.max_sentences:,}")
        return item

    for index, sentence in enumerate(args.sentences):
        if sentence.strip():
            yield counted((index, sentence))
    if not args.input:
        return
    try:
        with open(args.input, "rb") as handle:
            for item in _file_lines(handle, len(args.sentences)):
                yield counted(item)
    except OSError as exc:
        raise LabError("file_unreadable", file=args.input) from exc


def count_sentences(args) -> tuple[int, tuple[int, LabError] | None] | None:
    """The counting pass over the --input file, before any work: its non-blank lines and the first one that
    cannot be read (``(index, LabError)``, else None), read as :func:`input_sentences` reads them, in bounded
    memory; None for a stream that can be read once only (a pipe). A bad line at 15,000 of 20,000 was found
    only after the model had read the 14,999 before it (329 s)."""
    try:
        if not Path(args.input).is_file():
            return None
        count, first_bad = 0, None
        with open(args.input, "rb") as handle:
            for index, line in _file_lines(handle, len(args.sentences)):
                count += 1
                if first_bad is None and isinstance(line, LabError):
                    first_bad = (index, line)
        return count, first_bad
    except OSError as exc:
        raise LabError("file_unreadable", file=args.input) from exc


def where(args, index: int) -> str:
    """Where the sentence at ``index`` came from, for a terminal: the --input file's line, or the command line."""
    first = len(args.sentences)
    return f"{args.input}, line {index - first + 1}" if index >= first else f"command-line sentence {index + 1}"


class StdoutText:
    """stdout as a text handle for the table writers, through :func:`write_stdout`."""

    write = staticmethod(write_stdout)


def progress_bar(total: int | None):
    """A tqdm bar on stderr when it is a terminal; quiet (disabled) in a pipe, a file or a test."""
    from tqdm import tqdm

    return tqdm(total=total or None, unit=" sentences", disable=not sys.stderr.isatty(), file=sys.stderr,
                dynamic_ncols=True)


class JsonLines:
    """``embed``'s default output: one JSON line per occurrence, its layers' vectors rounded to 6 decimals."""

    def __init__(self, handle, layers=None):
        self.handle, self.layers, self.rows = handle, layers, 0

    def write(self, vectors) -> int:
        import numpy as np

        from ..compute.token_vectors import layer_indices

        chosen = layer_indices(self.layers, len(vectors.layer_names))
        for occ in vectors.occurrences:
            self.handle.write(json.dumps({"sentence_index": occ.sentence_index, "sentence": occ.sentence,
                                          "start": occ.start, "end": occ.end, "layer_indices": chosen,
                                          "layers": np.round(occ.layers[chosen].astype(np.float64), 6).tolist()},
                                         ensure_ascii=False) + "\n")
        self.rows += len(vectors.occurrences)
        return len(vectors.occurrences)


class VectorSink:
    """Where ``embed``'s batches go: ``--format`` (JSON Lines by default) to ``--out`` or stdout. Files are
    written under temporary names and appear, complete, only when :meth:`commit` is called at the end of a run
    that succeeded; :meth:`close` of a run that failed deletes them (``core.interface.export.AtomicOutputs``)."""

    def __init__(self, args):
        from . import export

        self.format, self.out, self._files, self._outputs = args.format, args.out, [], None
        self._writer: Any = None  # export's projector or table writer, or JsonLines: each has write(vectors)
        needs = {"projector": "a directory", "parquet": "a .parquet file"}
        if self.format in needs and not self.out:
            raise LabError("export_needs_out", format=self.format, what=needs[self.format])
        if self.out:
            targets = ([export.output_path(self.out) / name for name in export.PROJECTOR_FILES]
                       if self.format == "projector" else [self.out])
            self._outputs = export.AtomicOutputs(*targets)
        temps = self._outputs.temps if self._outputs else []
        try:
            if self.format == "projector":
                self._files = [open(temp, "x", encoding="utf-8", newline="\n") for temp in temps]
                self._writer = export.ProjectorWriter(*self._files, layers=args.layer)
            elif self.format == "parquet":
                self._writer = export.TableWriter("parquet", temps[0], layers=args.layer)
            else:  # jsonl, csv: to --out, else to stdout
                self._files = [open(temps[0], "x", encoding="utf-8", newline="")] if temps else []
                handle = self._files[0] if self._files else StdoutText()
                self._writer = (JsonLines(handle, args.layer) if self.format == "jsonl"
                                else export.TableWriter("csv", handle, layers=args.layer))
        except OSError as exc:
            self.close()
            raise LabError("out_unwritable", file=self.out, error=exc.strerror or type(exc).__name__) from exc

    def write(self, vectors) -> int:
        try:
            return self._writer.write(vectors)
        except OSError as exc:
            raise LabError("out_unwritable", file=self.out or "stdout", error=exc.strerror or type(exc).__name__) \
                from exc

    def _finish(self) -> None:
        if hasattr(self._writer, "close"):  # Parquet's footer
            self._writer.close()
        for handle in self._files:
            handle.close()
        self._files = []

    def commit(self) -> None:
        """The run succeeded: the files take their names."""
        try:
            self._finish()
        except OSError as exc:
            self.close()
            raise LabError("out_unwritable", file=self.out, error=exc.strerror or type(exc).__name__) from exc
        if self._outputs:
            self._outputs.commit()

    def close(self) -> None:
        """Whatever was not committed is deleted."""
        with contextlib.suppress(OSError):
            self._finish()
        if self._outputs:
            self._outputs.discard()

    def summary(self) -> dict | None:
        """What a file export wrote (printed as one JSON line; stdout carried no data)."""
        if not self._outputs:
            return None
        return {"format": self.format, "files": [str(f) for f in self._outputs.targets], "rows": self._writer.rows}
