"""Report fixtures: one document of each kind, shaped like the ``to_dict()`` of core objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.reports import all_documents

from aieval.store import Store

KINDS = [pytest.param(name, id=name) for name in all_documents()]


@pytest.fixture(params=KINDS)
def document(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Each fixture kind in turn: graded, ungraded, promoting and blocking."""
    return all_documents()[request.param]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """An empty store of the test's own."""
    return Store(tmp_path / "runs.db")
