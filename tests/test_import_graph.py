"""The import drawing of core/ has no cycle: every import counts, at the top of a module or inside a function
(an import moved into a function still ties the two modules together, it only hides the tie from Python).

core/ is one folder per concern (a "room"), and the rooms are layered: a room imports only rooms below it in
:data:`LAYERS`, so no import climbs back up and the rooms have no cycle between them either."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"

# core's rooms, bottom first: each imports only rooms listed before it. A new room goes above every room it imports
# and below every room that imports it; an import the table refuses is one that climbs back up (or closes a cycle).
LAYERS = (
    "runtime",      # where the files are, how sessions share the CPU
    "guard",        # LabError and its messages, argument checks, safe text and JSON, the word filter
    "models",       # loading and running the encoders (ELMo, BERT family, word2vec), the catalogue, the caches
    "compute",      # maths on encodings: geometry, scalar mixes, statistics, occurrences, per-token vectors
    "attention",    # attention maths and the attention page's view
    "content",      # sentence sets (?scene=), exercises, training budgets, the precomputed results files
    "figures",      # plotly figure builders
    "vectors",      # the static-vs-contextual page's vectors: parsing, mixes, projections
    "fillmask",     # fill-mask: predictions, masking, confidence, examples, the page's view
    "views",        # what the objectives and home pages show
    "transfer",     # feature-based vs fine-tuning transfer runs
    "experiments",  # the evidence page's experiments
    "train",        # training the embedded models
    "interface",    # the public API, its reference, export files, the CLI's input/output
    "board",        # the class board's rules and store (its projector files through interface's export)
)
FLAT = {"core", "core.__main__"}  # the package itself and `python -m core`: the only modules outside a room


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """core's modules -> the core modules each imports (``from . import x`` names module x when x is one)."""
    modules = {module_name(path): path for path in CORE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            graph[name] |= {target for target in targets if target in modules and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_core_has_no_import_cycle():
    graph = import_graph()
    assert graph["core.train.evaluate"] >= {"core.train.data", "core.models.cache"}  # the graph sees imports
    assert "core.train.evaluate" in graph["core.train.bert"]  # ... also those inside functions
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def room(module: str) -> str | None:
    """The room (core's first-level folder) of a module; None for core itself and core.__main__."""
    return None if module in FLAT else module.split(".")[1]


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Rooms -> the other rooms their modules import."""
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = room(module)
        if here is None:
            continue
        rooms.setdefault(here, set())
        rooms[here] |= {there for there in map(room, targets) if there is not None and there != here}
    return rooms


def climbing(rooms: dict[str, set[str]]) -> list[str]:
    """Imports of a room that is not below the importing one in LAYERS."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted(f"core.{here} imports core.{there}" for here, theirs in rooms.items() for there in theirs
                  if rank[there] >= rank[here])


def test_every_module_is_in_a_room():
    graph = import_graph()
    assert sorted(name for name in graph if name.count(".") == 1 and name not in FLAT
                  and not (CORE / name.split(".")[1]).is_dir()) == []
    assert sorted({room(name) for name in graph} - {None}) == sorted(LAYERS)  # and every room is in the table
    for name in LAYERS:
        assert (CORE / name / "__init__.py").is_file(), name


def test_rooms_import_only_rooms_below():
    rooms = room_graph(import_graph())
    assert rooms["fillmask"] >= {"models", "attention"}  # the graph sees the rooms' imports
    assert climbing(rooms) == []
    assert cycles(rooms) == []


def test_an_import_that_climbs_back_up_is_found():
    rooms = room_graph(import_graph())
    rooms["compute"].add("interface")  # e.g. compute/stats.py importing core.interface.api
    assert climbing(rooms) == ["core.compute imports core.interface"]
    assert any({"compute", "interface"} <= set(cycle) for cycle in cycles(rooms))


def test_the_wheel_carries_every_room():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    packages = set(setuptools["packages"])
    assert {f"elmo_bert_lab.{name}" for name in LAYERS} <= packages
    assert "elmo_bert_lab.guard.messages" in packages
    assert setuptools["package-data"]["elmo_bert_lab.guard.messages"] == ["*.json"]
