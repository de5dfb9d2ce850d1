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
