"""Pure-Python core of the ELMo→BERT Lab (no Streamlit imports).

One package, one import name per process: ``core`` in a clone (the app, the tests, the notebook), ``elmo_bert_lab``
when installed (``pip install .``). Both names may be importable at once (an editable install inside the clone);
a process that imported one and then the other would hold every module twice, with two model caches and two
``LabError`` classes that ``except`` cannot tell apart, so the second import is refused with the reason.
"""
from __future__ import annotations

import sys
from pathlib import Path

_NAMES = ("core", "elmo_bert_lab")


def _refuse_a_second_name() -> None:
    here = Path(__file__).resolve()
    for other in _NAMES:
        file = getattr(sys.modules.get(other), "__file__", None)
        if other != __name__ and file is not None and Path(file).resolve() == here:
            raise ImportError(f"this process already imported the ELMo→BERT Lab as `{other}`; importing it again "
                              f"as `{__name__}` would load every module twice. Use one name: `{other}`.")


def _version() -> str:
    """The installed package's version; in a clone that is not installed, pyproject.toml's (one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("elmo-bert-lab")
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


_refuse_a_second_name()
__version__ = _version()
