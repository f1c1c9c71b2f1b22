"""The server's read connections: reused across requests, and opened again after the database
restarts (a real PostgreSQL server of the test's own)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.postgres import (
    PostgresServer,
    find_binaries,
    postgres_server,
    restart_postgres,
)
from tests.support.viewer_data import store_qa_samples

from aieval.server import ServerSettings, create_app
from aieval.store import READ_POOL


@pytest.fixture
def server_store(store_location: str) -> str:
    """These tests run on both backends: an SQLite file, then a PostgreSQL database."""
    return store_location


def _connections(url: str) -> int:
    """The server processes serving aieval on the database of ``url``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = 'aieval'"
        ).fetchone()
    assert row is not None
    return int(row[0])


PATHS = ["samples", "samples?sort=score:token_f1", "samples?q=zanzibar", "header"]


def test_many_requests_reuse_a_few_connections(
    make_app: Callable[..., Any], server_store: str
) -> None:
    run_id = store_qa_samples(server_store, 300, seed=2, skill=0.5)
    with TestClient(make_app(), base_url="http://127.0.0.1:8765") as client:
        assert client.get(f"/api/runs/{run_id}/samples?sort=id").status_code == 200
        before = READ_POOL.opened
        # the app's own connections (store, reports) apart from the pool's one idle connection
        postgres = server_store.startswith("postgresql")
        others = _connections(server_store) - 1 if postgres else 0

        def ask(k: int) -> int:
            return client.get(f"/api/runs/{run_id}/{PATHS[k % len(PATHS)]}").status_code

        assert [ask(k) for k in range(40)] == [200] * 40
        assert READ_POOL.opened == before  # one after another: the same idle connection
        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(ask, range(160))) == [200] * 160
        # never more open than the pool's size, however many requests are in flight
        assert READ_POOL.opened - before <= READ_POOL.size
        if not postgres:
            return
        assert _connections(server_store) <= others + READ_POOL.size


@pytest.fixture
def own_postgres() -> Iterator[tuple[PostgresServer, Path]]:
    binaries = find_binaries()
    if binaries is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not installed")
    with postgres_server(binaries) as server:
        yield server, binaries


def test_a_restarted_database_is_reconnected(
    own_postgres: tuple[PostgresServer, Path], tmp_path: Path
) -> None:
    server, binaries = own_postgres
    url = server.create_database()
    run_id = store_qa_samples(url, 200, seed=4, skill=0.5)
    app = create_app(url, ServerSettings(dataset_roots=(tmp_path,)))
    try:
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            first = client.get(f"/api/runs/{run_id}/samples", params={"sort": "score:token_f1"})
            assert first.status_code == 200 and first.json()["total"] == 200
            opened = READ_POOL.opened
            restart_postgres(server, binaries)
            for params in ({}, {"q": "zanzibar"}, {"sort": "score:token_f1"}):
                again = client.get(f"/api/runs/{run_id}/samples", params=params)
                assert again.status_code == 200, again.text
            assert again.json()["run_total"] == 200
            assert again.json()["samples"] == first.json()["samples"]
            header = client.get(f"/api/runs/{run_id}/header")
            assert header.status_code == 200 and header.json()["samples"] == 200
            # the pooled connection the restart closed was opened again in place, then reused
            assert READ_POOL.opened == opened and 1 <= _connections(url) <= READ_POOL.size + 2
    finally:
        app.state.manager.shutdown()
        READ_POOL.clear()
