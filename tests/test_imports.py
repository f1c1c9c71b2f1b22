"""Imports point one way: no module cycle in aieval, and no package importing one above it.

Every import counts, at any depth: module level, inside functions, and under
``if TYPE_CHECKING:`` (an annotation-only import still ties the modules together for a reader
and for a type checker, so it obeys the same order).
"""

from __future__ import annotations

import ast
import functools
import graphlib
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import aieval

SRC = Path(aieval.__file__).parent

#: The packages in pipeline order, lowest first (docs/architecture.md shows the same map). A
#: module may import modules of its own layer or of a layer below, never one above.
LAYERS: list[tuple[str, ...]] = [
    # leaf helpers
    (
        "errors",
        "_version",
        "_json",
        "_files",
        "_keys",
        "_lazy",
        "_numbers",
        "_terminal",
        "_tables",
        "_floors",
        "_gc",
        "_secrets",
        "_sync",
        "_endpoint",
        "_tracefiles",
        "_yaml",
    ),
    # stage contracts (and the old homes that re-export them)
    ("core", "_types", "_records", "_plugins", "_usage_figures"),
    ("stats",),
    ("store",),
    ("grading",),
    ("sandbox",),
    ("providers", "_calls"),
    ("scorers",),
    ("datasets",),
    ("judges",),
    ("runner",),
    ("workflows", "conversations"),
    ("traces",),
    ("code", "migrate"),
    ("report",),
    ("online",),
    ("mcp",),
    ("telemetry",),
    ("push",),
    ("server",),
    ("testing",),
    ("ci",),
    # the command line and the package front
    ("cli", "__init__", "__main__"),
]
RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}


def _modules() -> dict[str, Path]:
    found = {}
    for file in sorted(SRC.rglob("*.py")):
        parts = ["aieval", *file.relative_to(SRC).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = file
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The aieval module ``name`` is or lies in (``aieval.core.Example`` -> ``aieval.core``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """``(imported aieval module, line)`` for every import in ``module``, at any depth."""
    file = MODULES[module]
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            names = [f"{base}.{alias.name}" for alias in node.names] or [base]
        else:
            continue
        for name in names:
            target = _resolve(name) if name.split(".")[0] == "aieval" else None
            if target is not None and target != module:
                yield target, node.lineno


def _unit(module: str) -> str:
    """The layer unit of a module: its overridden name, its package, or its root module."""
    parts = module.split(".")[1:]
    if ".".join(parts) in RANK:
        return ".".join(parts)
    if not parts:
        return "__init__"
    return parts[0]


@functools.cache
def _graph() -> dict[str, list[tuple[str, int]]]:
    """Each module's ``(imported module, line)`` edges, parsed once, when a test first asks
    (not at collection: each xdist worker collects this file, few run its tests)."""
    return {module: sorted(set(_imports(module))) for module in MODULES}


def test_every_module_has_a_layer() -> None:
    assert len(MODULES) > 150
    assert {m: _unit(m) for m in MODULES if _unit(m) not in RANK} == {}


def test_the_modules_import_each_other_without_cycles() -> None:
    graph = {module: {target for target, _ in edges} for module, edges in _graph().items()}
    assert sum(map(len, graph.values())) > 500  # the check sees the imports
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1][::-1]  # graphlib lists it from imported to importer
        steps = [
            f"{MODULES[a].relative_to(SRC.parent)}:{line} imports {b}"
            for a, b in itertools.pairwise(cycle)
            for target, line in _graph()[a]
            if target == b
        ]
        pytest.fail("import cycle:\n" + "\n".join(steps))


def _unit_graph() -> dict[str, dict[str, tuple[str, int]]]:
    """The package-level graph: unit -> {unit it imports: (one importing module, its line)}."""
    units: dict[str, dict[str, tuple[str, int]]] = {}
    for module, edges in _graph().items():
        imported = units.setdefault(_unit(module), {})
        for target, line in edges:
            if _unit(target) != _unit(module):
                imported.setdefault(_unit(target), (module, line))
    return units


def test_the_packages_import_each_other_without_cycles() -> None:
    """No two units (packages, or root modules) import each other, directly or through others.

    Units of one layer may import each other, so the layer check alone lets two of them form a
    cycle (each importing the other's modules, perhaps inside a function) while no module cycle
    shows: such a pair is one package in two folders. Split the layer so that one builds on the
    other, and reach the lower one's caller through a plug-in.
    """
    graph = _unit_graph()
    assert sum(map(len, graph.values())) > 50  # the check sees the imports
    try:
        graphlib.TopologicalSorter({unit: set(edges) for unit, edges in graph.items()}).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1][::-1]  # graphlib lists it from imported to importer
        steps = [
            f"{a} imports {b} ({MODULES[graph[a][b][0]].relative_to(SRC.parent)}:{graph[a][b][1]})"
            for a, b in itertools.pairwise(cycle)
        ]
        pytest.fail("package cycle:\n" + "\n".join(steps))


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{MODULES[module].relative_to(SRC.parent)}:{line}: {_unit(module)} imports {target} "
        f"({_unit(target)} is a layer above)"
        for module, edges in _graph().items()
        for target, line in edges
        if RANK.get(_unit(target), -1) > RANK.get(_unit(module), -1)
    ]
    assert upward == []


def test_the_layer_order_is_the_documented_map() -> None:
    doc = (SRC.parents[1] / "docs" / "architecture.md").read_text()
    packages = [layer[0] for layer in LAYERS[1:-1]]
    positions = [doc.find(f"`aieval.{name}`") for name in packages]
    assert -1 not in positions, dict(zip(packages, positions, strict=True))
    assert positions == sorted(positions), "docs/architecture.md lists the layers in another order"


#: Today's imports of another package's private module, ``(importing module, imported
#: module)`` without the ``aieval.`` prefix: the ceiling, which only shrinks. A module imports
#: another package's public names (re-exported from its ``__init__``); when an import below
#: goes, its line goes too.
PRIVATE_IMPORTS = frozenset(
    {
        ("runner._evalfile", "datasets._checks"),
        ("store._sample_reads", "core._stored"),
        ("store._table_reads", "core._stored"),
    }
)


def _private_imports(*, own_package: bool = False) -> set[tuple[str, str]]:
    """Every ``(module, private module of another package)`` import, at any depth (with
    ``own_package``, of a private module of the importer's own package instead)."""
    found = set()
    for module, edges in _graph().items():
        own = module.split(".")[1] if MODULES[module].parent != SRC else None
        for target, _ in edges:
            parts = target.split(".")
            if len(parts) == 3 and parts[2].startswith("_") and (parts[1] == own) == own_package:
                found.add((module.removeprefix("aieval."), target.removeprefix("aieval.")))
    return found


def test_no_new_import_of_another_packages_private_module() -> None:
    found = _private_imports()
    assert len(_private_imports(own_package=True)) > 300  # the check sees private modules
    new = sorted(found - PRIVATE_IMPORTS)
    assert new == [], (
        "import the other package's public names (re-export what you need from its "
        f"__init__) instead of its private modules: {new}"
    )


def test_the_private_import_ceiling_lists_only_imports_that_remain() -> None:
    gone = sorted(PRIVATE_IMPORTS - _private_imports())
    assert gone == [], f"these imports are gone: remove them from PRIVATE_IMPORTS: {gone}"


#: Modules outside ``aieval.store`` that still hold SQL text (the caches' queries run through
#: the store's seam; a trace grouping's private spill file): the store owns every other query.
SQL_OUTSIDE_STORE = frozenset({"providers._cache", "providers._embedding_cache", "traces._group"})
#: Modules outside ``aieval.store`` that import a database driver: the server, to tell a
#: store that is down by its error's class; a trace grouping, for its private spill file.
DRIVERS_OUTSIDE_STORE = frozenset({"server._errors", "traces._group"})
_SQL = re.compile(
    r"\b(SELECT\s[\s\S]*\bFROM|INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+\w+\s+SET|CREATE\s+(TABLE|INDEX))\b"
)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_sql_and_database_drivers_stay_in_the_store() -> None:
    sql, drivers = set(), set()
    for module, file in MODULES.items():
        name = module.removeprefix("aieval.")
        if name == "store" or name.startswith("store."):
            continue
        tree = ast.parse(file.read_text(), str(file))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in skip and _SQL.search(node.value):
                    sql.add(name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.module:
                    names.append(node.module)
                if any(n.split(".")[0] in ("sqlite3", "psycopg") for n in names):
                    drivers.add(name)
    assert sql <= SQL_OUTSIDE_STORE, sorted(sql)
    assert drivers <= DRIVERS_OUTSIDE_STORE, sorted(drivers)
