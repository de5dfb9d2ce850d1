"""Writes ``docs/API.md``: every public function and class of ``core.interface.api`` and ``core.interface.export``
with its signature and docstring, so the reference cannot drift from the code (a test compares the file with
what this module writes). Run ``python -m core.interface.api_reference`` after changing a public docstring."""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

from . import api, export

OUTPUT = Path(__file__).resolve().parents[2] / "docs" / "API.md"
EXPORT_PUBLIC = ("write_projector", "projector_zip", "table_columns", "TableWriter", "write_bertviz",
                 "bertviz_json", "read_bertviz", "write_attention_html")

INTRO = """# API reference

Generated from the docstrings by `python -m core.interface.api_reference`; do not edit by hand. Installed, the
package is `elmo_bert_lab` (`from elmo_bert_lab.interface import api, export`); in a clone it is `core`
(`from core.interface import api, export`). Shapes are written as in AllenNLP's docstrings, e.g.
`(num_layers, num_tokens, dim)`. Bad input raises `LabError`, whose
`err.message("zh")` / `err.message("en")` is plain text (`markdown=True`: escaped for Streamlit's Markdown).
"""


def _entry(module_name: str, name: str, obj) -> str:
    kind = "class" if inspect.isclass(obj) else "def"
    try:
        signature = str(inspect.signature(obj))
    except (TypeError, ValueError):
        signature = "(...)"
    doc = inspect.getdoc(obj) or ""
    lines = [f"### `{module_name}.{name}`", "", "```python", f"{kind} {name}{signature}", "```", ""]
    if doc:
        lines += [doc, ""]
    if inspect.isclass(obj):
        for member, value in vars(obj).items():
            if member.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
                continue
            member_doc = inspect.getdoc(value) or ""
            label = f"`{name}.{member}`" + ("" if isinstance(value, property) else f"`{inspect.signature(value)}`")
            lines += [f"- {label}" + (f": {member_doc.splitlines()[0]}" if member_doc else "")]
        lines.append("")
    return "\n".join(lines)


def render() -> str:
    parts = [INTRO, "## `api`", "", inspect.getdoc(api) or "", ""]
    parts += [_entry("api", name, getattr(api, name)) for name in api.__all__ if name != "Model"]
    parts += ["## `export`", "", inspect.getdoc(export) or "", ""]
    parts += [_entry("export", name, getattr(export, name)) for name in EXPORT_PUBLIC]
    return "\n".join(parts).rstrip() + "\n"


def main() -> int:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(render(), encoding="utf-8")
    print(OUTPUT, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
