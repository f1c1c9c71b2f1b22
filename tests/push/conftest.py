"""The server tests' fixtures (an app over ``tmp_path/runs.db``) for the push tests, and the
push targets: each store backend this branch has."""

from pathlib import Path

import pytest
from tests.server.conftest import make_app, root

import aieval.store

__all__ = ["make_app", "root", "store_location"]


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A target store on each backend: an SQLite file, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.db")
    if not hasattr(aieval.store, "parse_location"):
        pytest.skip("the store's PostgreSQL backend is not merged into this branch yet")
    return str(request.getfixturevalue("pg_server").create_database())
