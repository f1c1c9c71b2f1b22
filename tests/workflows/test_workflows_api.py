"""The public names of aieval.workflows and the doctests of its modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

import aieval.workflows

MODULES = ["_model", "_definition", "_evaluate", "_efficiency", "_recorder", "_rollup", "__init__"]


def test_all_is_sorted_and_resolves() -> None:
    names = aieval.workflows.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in ("WorkflowRun", "StepResult", "load_run", "load_workflow", "evaluate_run"):
        assert name in names and getattr(aieval.workflows, name) is not None


@pytest.mark.parametrize("module", [pytest.param(m, id=m) for m in MODULES])
def test_doctests(module: str) -> None:
    name = "aieval.workflows" if module == "__init__" else f"aieval.workflows.{module}"
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
