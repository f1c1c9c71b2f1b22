"""Fixture scopes that mean what they say.

``scope="package"`` in a folder without ``__init__.py`` is no package scope: pytest keeps such a
fixture until the session ends (a local Ray did so, idling on each worker's CPU for the whole
suite). A fixture meant to end with its folder's tests is module-scoped instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _scopes(path: Path) -> list[tuple[int, str]]:
    """(line, scope) of each ``scope=`` keyword given as a literal in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "scope"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.append((node.lineno, node.value.value))
    return found


def test_no_package_scope_outside_a_package() -> None:
    wrong = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if not (path.parent / "__init__.py").exists()
        for line, scope in _scopes(path)
        if scope == "package"
    ]
    assert not wrong, f"scope='package' here lasts the whole session: {wrong}"


def test_the_check_reads_a_scope_keyword(tmp_path: Path) -> None:
    sample = tmp_path / "conftest.py"
    sample.write_text('import pytest\n\n@pytest.fixture(scope="package")\ndef f(): ...\n')
    assert _scopes(sample) == [(3, "package")]
