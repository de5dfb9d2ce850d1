"""Writes ``docs/API.md``: every public function and class of ``core.interface.api`` and ``core.interface.export``
with its signature and docstring, so the reference cannot drift from the code (a test compares the file with
what this module writes). Run ``python -m core.interface.api_reference`` after changing a public docstring."""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

from ..attention.view import AttentionView
from ..compute.occurrences import Occurrence, WordVectors
from ..compute.token_vectors import SentenceTokens
from ..guard.errors import LabError, message_table
from . import api, export

OUTPUT = Path(__file__).resolve().parents[2] / "docs" / "API.md"
EXPORT_PUBLIC = ("write_projector", "projector_zip", "table_columns", "TableWriter", "write_bertviz",
                 "bertviz_json", "read_bertviz", "write_attention_html")

# what the API's functions return or raise, documented beside them
RESULT_TYPES = {"WordVectors": WordVectors, "Occurrence": Occurrence, "SentenceTokens": SentenceTokens,
                "AttentionView": AttentionView, "LabError": LabError}

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
    doc = own_doc(obj)
    lines = [f"### `{module_name}.{name}`", "", "```python", f"{kind} {name}{signature}", "```", ""]
    if doc:
        lines += [doc, ""]
    if inspect.isclass(obj):
        for member, value in vars(obj).items():
            if member.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
                continue
            member_doc = inspect.getdoc(value) or ""
            label = f"`{name}.{member}`" if isinstance(value, property) else \
                f"`{name}.{member}{inspect.signature(value)}`"
            lines += [f"- {label}" + (f": {first_paragraph(member_doc)}" if member_doc else "")]
        lines.append("")
    return "\n".join(lines)


def first_paragraph(doc: str) -> str:
    """The docstring's first paragraph on one line: whole sentences, never cut at a line break."""
    return " ".join(line.strip() for line in doc.split("\n\n")[0].splitlines())


def own_doc(obj) -> str:
    """``obj``'s own docstring: not one inherited from a base class (``nn.Module``'s) and not the signature a
    dataclass writes when it has none; "" when it has none of its own."""
    doc = vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__
    if not doc or (inspect.isclass(obj) and doc.startswith(f"{obj.__name__}(")):
        return ""
    return inspect.cleandoc(doc)


def error_codes() -> str:
    """Every ``LabError`` code with its English message (each has a Chinese one too: ``core/messages``)."""
    lines = ["## Error codes", "",
             "`err.code` is one of these; `err.params` fill the message's `{…}`. Codes the app alone raises are "
             "listed too.", "", "| code | message (en) |", "| --- | --- |"]
    for code, template in message_table("en").items():
        escaped = template.replace("|", "\\|")
        lines.append(f"| `{code}` | {escaped} |")
    return "\n".join(lines) + "\n"


def render() -> str:
    parts = [INTRO, "## `api`", "", inspect.getdoc(api) or "", ""]
    parts += [_entry("api", name, getattr(api, name)) for name in api.__all__ if name != "Model"]
    parts += ["## `export`", "", inspect.getdoc(export) or "", ""]
    parts += [_entry("export", name, getattr(export, name)) for name in EXPORT_PUBLIC]
    parts += ["## Results and errors", ""]
    parts += [_entry(obj.__module__.removeprefix("core."), name, obj) for name, obj in RESULT_TYPES.items()]
    parts += [error_codes()]
    return "\n".join(parts).rstrip() + "\n"


def main() -> int:
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(render(), encoding="utf-8")
    print(OUTPUT, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
