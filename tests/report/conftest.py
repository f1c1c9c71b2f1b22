"""Report fixtures: one document of each kind, shaped like the ``to_dict()`` of core objects."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from tests.report.golden.fixture import build_store
from tests.support.postgres import PostgresServer
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


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def golden_template(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The golden fixture's store (``golden/fixture.py``), built once per backend: tests work on
    a copy of their own (:func:`golden_copy`). Its location."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("golden") / "golden.db"
        build_store(path).close()
        yield str(path)
        return
    server: PostgresServer = request.getfixturevalue("pg_server")
    url = server.create_database()
    build_store(url).close()
    yield url
    server.drop_database(url)


@pytest.fixture
def golden_copy(
    golden_template: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[str]:
    """A copy of the golden store of the test's own (PostgreSQL: ``CREATE DATABASE ...
    TEMPLATE``; SQLite: a backup); its location."""
    if not golden_template.startswith("postgresql:"):
        location = str(tmp_path / "golden-copy.db")
        source, copy = sqlite3.connect(golden_template), sqlite3.connect(location)
        with closing(source), closing(copy):
            source.backup(copy)
        yield location
        return
    server: PostgresServer = request.getfixturevalue("pg_server")
    url = server.create_database(template=golden_template)
    yield url
    server.drop_database(url)
