"""No module of aieval reads a run summary by key: it is a typed object, read by attribute.

A stored summary (a dict in the store) is turned into a :class:`aieval.runner.RunSummary` at
the edge (``RunSummary.from_dict``); every reader after that uses attributes. This walks the
source like tests/test_imports.py does and refuses ``summary["..."]``, ``summary.get(...)`` and
``"..." in summary`` on anything named ``summary`` (``result.summary``, ``end.summary``...).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import aieval

SRC = Path(aieval.__file__).parent


def _named_summary(node: ast.expr) -> bool:
    """``summary``, ``result.summary``, ``run_summary``: what holds a run summary."""
    if isinstance(node, ast.Name):
        return node.id.endswith("summary")
    if isinstance(node, ast.Attribute):
        return node.attr.endswith("summary")
    return False


def _key_reads(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _named_summary(node.value):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                yield node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and _named_summary(node.func.value):
                yield node.lineno
        elif isinstance(node, ast.Compare):
            ops = zip(node.ops, node.comparators, strict=True)
            if any(isinstance(op, ast.In | ast.NotIn) and _named_summary(c) for op, c in ops):
                yield node.lineno


def test_no_module_reads_a_run_summary_by_key() -> None:
    found = [
        f"{file.relative_to(SRC.parent)}:{line}"
        for file in sorted(SRC.rglob("*.py"))
        for line in _key_reads(ast.parse(file.read_text(encoding="utf-8"), str(file)))
    ]
    assert found == [], "read the RunSummary's attributes instead: " + ", ".join(found)


def test_the_check_sees_each_form_of_key_read() -> None:
    source = (
        'a = result.summary["samples"]\n'
        'b = summary.get("epochs")\n'
        'c = "minimums" in run.summary\n'
        "d = result.summary.samples\n"
        'e = decision["summary"]\n'
    )
    assert list(_key_reads(ast.parse(source))) == [1, 2, 3]
