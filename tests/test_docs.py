"""README.md is the users' page (what it is, run, use, lecture, security) and stays short; design, benchmarks and
measurements live in docs/. Every relative link in README.md and docs/*.md leads to a file that exists (and, into
a Markdown file, to a heading it has)."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 300


def without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans, where a `](…)` is not a link."""
    return re.sub(r"`[^`\n]*`", "", without_code_blocks(text))


def links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", prose(text))


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces made hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", without_code_blocks(text), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def test_the_readme_is_at_most_300_lines():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines: move design and measurements to docs/"


def test_the_readme_keeps_the_run_and_test_commands():
    """`.ci/run` runs exactly the README's test command; a new user copies the run command."""
    readme = README.read_text(encoding="utf-8")
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert venv + "pip install -r requirements.txt && streamlit run serve.py\n" in readme
    assert venv + "pip install -r requirements-dev.txt && python -m pytest -q\n" in readme
    assert "apt-get install -y chromium fonts-noto-cjk nodejs" in readme


def test_the_readme_links_every_doc():
    linked = {(ROOT / unquote(link.split("#")[0])).resolve() for link in links(README.read_text(encoding="utf-8"))}
    assert DOCS and not [doc.name for doc in DOCS if doc.resolve() not in linked]


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page):
    text = page.read_text(encoding="utf-8")
    broken = []
    for link in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):  # http:, https:, mailto: …
            continue
        path, _, anchor = unquote(link).partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link} (no such file)")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target.read_text(encoding="utf-8")):
            broken.append(f"{link} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"
