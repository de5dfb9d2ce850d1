"""Pure-Python core of the ELMo→BERT Lab (no Streamlit imports)."""
from __future__ import annotations


def _version() -> str:
    """The installed package's version; in a clone that is not installed, pyproject.toml's (one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("elmo-bert-lab")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


__version__ = _version()
