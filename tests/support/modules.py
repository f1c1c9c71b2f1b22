"""What a source file imports, for tests of a package's shape."""

from __future__ import annotations

import ast
from pathlib import Path


def imported_modules(file: Path) -> set[str]:
    """Every module an ``import`` statement in ``file`` names, at any depth."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(file.read_text(), str(file))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found
