"""The store, report and traces packages' modules import each other one way
(tests/test_imports.py checks the whole package against the layer order)."""

from __future__ import annotations

import graphlib
from pathlib import Path
from types import ModuleType

import pytest
from tests.support.modules import imported_modules

import aieval.report
import aieval.store
import aieval.traces

PACKAGES = [aieval.store, aieval.report, aieval.traces]


def package_modules(package: ModuleType) -> dict[str, Path]:
    root = Path(package.__file__).parent
    return {f"{package.__name__}.{f.stem}": f for f in sorted(root.glob("*.py"))}


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_the_modules_import_each_other_without_cycles(package: ModuleType) -> None:
    modules = package_modules(package)
    front = package.__name__
    private = {name for name in modules if name != f"{front}.__init__"}
    graph = {name: (imported_modules(modules[name]) & private) - {name} for name in private}
    assert any(graph.values())  # the check sees the package's own imports
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError on a cycle
