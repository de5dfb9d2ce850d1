"""docs/API.md is what core.interface.api_reference writes from today's docstrings, and every public name has one."""
from __future__ import annotations

import inspect

from core.interface import api, export
from core.interface.api_reference import EXPORT_PUBLIC, OUTPUT, render


def test_reference_is_current():
    assert OUTPUT.read_text(encoding="utf-8") == render(), "run: python -m core.interface.api_reference"


def test_every_public_name_is_documented():
    names = [getattr(api, n) for n in api.__all__ if n != "Model"] + [getattr(export, n) for n in EXPORT_PUBLIC]
    assert all(inspect.getdoc(obj) for obj in names), [obj.__name__ for obj in names if not inspect.getdoc(obj)]


def test_every_entry_is_its_own_whole_and_every_result_and_code_is_there():
    """#55 item 6: ScalarMix's entry was torch's ``nn.Module`` docstring, member lines were cut at a line break
    mid-sentence, a signature followed its name as a second code span (doubled backticks), and WordVectors,
    Occurrence, AttentionView, the error codes and ``clear_cache`` had no entry."""
    import re

    from torch import nn

    from core.guard.errors import message_table
    from core.interface.api_reference import RESULT_TYPES, own_doc

    names = [getattr(api, n) for n in api.__all__ if n != "Model"] + [getattr(export, n) for n in EXPORT_PUBLIC]
    names += list(RESULT_TYPES.values())
    assert not [obj.__name__ for obj in names if not own_doc(obj)]
    text = render()
    assert inspect.getdoc(nn.Module).splitlines()[0] not in text
    assert not re.search(r"\w``\(", text)  # a name and its signature are one code span, not two run together
    for name in ("api.clear_cache", "compute.occurrences.WordVectors", "compute.occurrences.Occurrence",
                 "attention.view.AttentionView", "guard.errors.LabError", "WordVectors.to_frame"):
        assert f"`{name}" in text, name
    for code in message_table("en"):
        assert f"| `{code}` |" in text
    for line in text.splitlines():  # a member's summary line ends a sentence
        if re.match(r"- `\w+\.\w+", line) and ": " in line:
            assert line.rstrip().endswith((".", ")", "`", ":")), line
