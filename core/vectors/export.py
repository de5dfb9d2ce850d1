"""The vectors of a :class:`~core.vectors.view.VectorsView` as downloadable data (CSV, JSON)."""
from __future__ import annotations

import csv
import io
import json

from ..guard.safe_text import csv_safe
from .view import VectorsView


def export_rows(view: VectorsView) -> list[dict]:
    """One row per (model, layer, occurrence): sentence, start, end, label, vector."""
    rows = []
    for vectors in (view.static, view.contextual):
        if vectors is None:
            continue
        for occ in vectors.occurrences:
            for j, name in enumerate(vectors.layer_names):
                rows.append({
                    "model": vectors.model,
                    "layer": name,
                    "sentence_index": occ.sentence_index + 1,
                    "sentence": occ.sentence,
                    "start": occ.start,
                    "end": occ.end,
                    "label": occ.label or "",
                    "vector": [round(float(x), 6) for x in occ.layers[j]],
                })
    return rows


def to_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["model", "layer", "sentence_index", "sentence", "start", "end", "label", "vector"])
    for r in rows:
        writer.writerow([csv_safe(r["model"]), r["layer"], r["sentence_index"], csv_safe(r["sentence"]),
                         r["start"], r["end"], csv_safe(r["label"]), " ".join(f"{x:.6g}" for x in r["vector"])])
    return buffer.getvalue()


def to_json(view: VectorsView) -> str:
    return json.dumps({"word": view.word, "sentences": view.sentences, "rows": export_rows(view)},
                      ensure_ascii=False)
