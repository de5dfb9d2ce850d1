"""examples/explore.ipynb runs from top to bottom on the embedded models (nbclient, a real kernel), and is kept
without outputs in the repository."""
from __future__ import annotations

import re
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NOTEBOOK = EXAMPLES / "explore.ipynb"


def test_notebook_is_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)


@pytest.mark.notebook
def test_notebook_runs_the_lectures_experiments(embedded_elmo_and_bert):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    started = time.monotonic()
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(EXAMPLES)}}).execute()  # a failing cell raises here
    elapsed = time.monotonic() - started
    texts = "\n".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.outputs)
    figures = sum("application/vnd.plotly.v1+json" in output.get("data", {})
                  for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs)
    assert "word2vec: one vector for every sentence: True" in texts
    assert "[0.4 0.6 1. ]" in texts  # the lecture's worked example
    assert "[('奶'," in texts and "metadata.tsv" in texts  # 牛[MASK]: the embedded BERT's first answer is 奶
    assert figures == 7
    warnings = [output["text"] for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
                if output.get("name") == "stderr" and "Warning" in output["text"]]
    assert not warnings, warnings
    reference = next(cell for cell in notebook.cells if "REFERENCE = " in cell.source)
    said = "".join(output.get("text", "") for output in reference.outputs)
    assert said.startswith("skipped: bert-base-chinese") or said.startswith("embeddings: cos(")
    assert elapsed < 60, f"the notebook took {elapsed:.0f} s"
    # `jupyter nbconvert --to html` keeps the figures, with plotly.js inside the page: it opens offline
    page, _ = HTMLExporter().from_notebook_node(notebook)
    assert page.count("Plotly.newPlot(") == 7
    assert re.search(r"plotly\.js v\d", page) and not re.search(r"<script[^>]+src=\"[^\"]*plot\.ly", page)
