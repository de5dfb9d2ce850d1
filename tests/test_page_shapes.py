"""Every page has one of the documented shapes (docs/code.md, "The shapes of a page"; ``ui.PageSpec.shape``), and
its script looks like it: the state declared once through ``ui.state.seed`` where the shape has state, results read
through ``ui.cache``, the router's views picked by the URL."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

import pytest

from ui import PAGES, Shape

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "code.md").read_text(encoding="utf-8")


def documented() -> dict[str, set[str]]:
    """Each shape's pages as docs/code.md lists them: the folder names in its bullet."""
    section = DOC[DOC.index("### The shapes of a page"):]
    section = section[:section.index("\n\n`app.py`")]
    return {shape: set(re.findall(r"`(\w+)`", body))
            for shape, body in re.findall(r"- \*\*(\w+)\*\*:(.*?)(?=\n- \*\*|\Z)", section, flags=re.DOTALL)}


def folder(spec) -> str:
    return Path(spec.path).parent.name


def used(path: Path) -> set[str]:
    """The names the page's folder calls or hands on (``seed(...)``, ``attempt(cache.occurrence_view, ...)``: seed,
    attempt, occurrence_view)."""
    names = set()
    for module in path.parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
    return names


def test_every_shape_is_documented_with_exactly_its_pages():
    doc = documented()
    assert set(doc) == set(get_args(Shape))
    for shape in get_args(Shape):
        pages = {folder(spec) for spec in PAGES if spec.shape == shape}
        assert pages <= doc[shape], (shape, pages - doc[shape])
        assert {name for name in doc[shape] if (ROOT / "app_pages" / name).is_dir()} == pages, shape


@pytest.mark.parametrize("spec", PAGES, ids=[spec.url_path for spec in PAGES])
def test_the_script_has_its_shape(spec):
    names = used(ROOT / spec.path)
    script = (ROOT / spec.path).read_text(encoding="utf-8")
    if spec.shape in ("experiment", "sections", "cards"):
        assert "seed" in names and "attempt" in names, "its state declared once, its core call inside attempt()"
    if spec.shape == "experiment":
        assert names & {"model_call", "occurrence_view", "encode"}, "one core call through ui.cache"
    if spec.shape == "results":
        assert names & {"file_result", "experiment_results"}, "its results file through ui.cache"
    if spec.shape == "guide":
        assert "seed" not in names and "model_rows" in names
    if spec.shape == "router":
        assert 'st.query_params.get("view")' in script
    if spec.shape == "console":
        assert "sign_in" in names and "attempt" in names, "signed in, its core calls inside attempt()"
