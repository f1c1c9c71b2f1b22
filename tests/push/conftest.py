"""The server tests' fixtures for the push tests; the server's store is each backend in turn."""

import pytest
from tests.server.conftest import make_app, root

__all__ = ["make_app", "root", "server_store"]


@pytest.fixture
def server_store(store_location: str) -> str:
    """The store the server writes uploads to: an SQLite file, then PostgreSQL."""
    return store_location
