"""A run store that cannot be reached answers 503 with ``Retry-After`` and says so (the store
named without its password or the server's folders), on both backends and a real server; the
server answers again once the store is back, and ``aieval push`` reports the 503 clearly.

SQLite: the folder holding the store is moved away (a disk unmounted) and a file stands in its
place, so no new connection can open it (connections already open still read the moved file, so
the outage is met by the first read of samples, which opens the server's read connection).
PostgreSQL: the database is reached through a TCP proxy that goes down, its sessions cut, so
every connection is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer
from tests.support.tcp_proxy import TcpProxy
from tests.support.viewer_data import store_qa_samples

from aieval.errors import PushError
from aieval.push import ServerTarget, push_runs
from aieval.server import ServerSettings, create_app
from aieval.store import Store

TOKEN = "store-down-token-0123456789abcdef"
JSON = {"Content-Type": "application/json"}
SPAN = (
    b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "'
    + b"a" * 32
    + b'", "spanId": "'
    + b"1" * 16
    + b'", "name": "app", "startTimeUnixNano": "1", "endTimeUnixNano": "2"}]}]}]}'
)
PASSWORD = "pg-pass-0123456789"


@dataclass
class Outage:
    """A store and the means to take it down and bring it back."""

    location: str
    down: Callable[[], None]
    up: Callable[[], None]
    hidden: list[str]  # what no answer may show (a password, the server's folders)


def _sqlite(tmp_path: Path) -> Iterator[Outage]:
    folder = tmp_path / "disk"
    folder.mkdir()
    moved = tmp_path / "unmounted"

    def down() -> None:
        folder.rename(moved)
        folder.write_text("not a folder")

    def up() -> None:
        folder.unlink()
        moved.rename(folder)

    yield Outage(str(folder / "runs.db"), down, up, [str(tmp_path)])


def _postgres(server: PostgresServer) -> Iterator[Outage]:
    import psycopg

    url = server.create_database()
    database = url.rsplit("/", 1)[1]
    with TcpProxy(server.host, server.port) as proxy:
        proxied = (
            server.database_url(database, password=PASSWORD)
            .replace(f":{server.port}/", f":{proxy.port}/")
        )  # fmt: skip

        def down() -> None:
            proxy.down = True
            with psycopg.connect(url, autocommit=True) as conn:  # straight to the server
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (database,),
                )

        def up() -> None:
            proxy.down = False

        yield Outage(proxied, down, up, [PASSWORD])


@pytest.fixture(params=["sqlite", "postgres"])
def outage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Outage]:
    if request.param == "sqlite":
        yield from _sqlite(tmp_path)
    else:
        yield from _postgres(request.getfixturevalue("pg_server"))


@pytest.fixture
def served(outage: Outage, tmp_path: Path) -> Iterator[tuple[LiveServer, str]]:
    run_id = store_qa_samples(outage.location, 20, seed=3, skill=0.5)
    app = create_app(outage.location, ServerSettings(dataset_roots=(tmp_path,), token=TOKEN))
    try:
        with LiveServer(app) as live:
            yield live, run_id
    finally:
        app.state.manager.shutdown()


def _unavailable(response: httpx.Response, outage: Outage) -> str:
    """The 503's message, checked for its shape and that it hides what it must."""
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "5"
    body = response.json()
    assert set(body) == {"message", "reasons"}
    message: str = body["message"]
    assert "is unavailable" in message and "try again in 5 s" in message
    for secret in outage.hidden:
        assert secret not in response.text
    return message


def test_a_store_down_answers_503_then_serves_again(
    served: tuple[LiveServer, str], outage: Outage
) -> None:
    live, run_id = served
    headers = {"Authorization": f"Bearer {TOKEN}"}
    paths = [f"/api/runs/{run_id}/samples", f"/api/runs/{run_id}/header", "/api/runs"]
    with httpx.Client(base_url=live.url, headers=headers, timeout=60) as client:
        assert client.get("/api/runs").status_code == 200
        outage.down()
        try:
            message = _unavailable(client.get(paths[0]), outage)
            if outage.location.startswith("postgresql"):
                assert "postgresql://aieval:***@127.0.0.1" in message
            else:
                assert "(runs.db)" in message and "unable to open database file" in message
            # an export request the store cannot take: 503, which OTLP exporters retry
            _unavailable(client.post("/v1/traces", content=SPAN, headers=JSON), outage)
        finally:
            outage.up()
        answers = [client.get(p) for p in paths]
        assert [a.status_code for a in answers] == [200] * 3, answers[0].text
        assert answers[0].json()["total"] == 20
        assert client.post("/v1/traces", content=SPAN, headers=JSON).status_code == 200
        assert [t["trace_id"] for t in client.get("/api/traces").json()["traces"]] == ["a" * 32]


def test_push_reports_the_store_down(
    served: tuple[LiveServer, str], outage: Outage, tmp_path: Path
) -> None:
    live, _ = served
    source = tmp_path / "local.db"
    local_run = store_qa_samples(source, 3, seed=5, skill=0.5, name="to-push")
    target = ServerTarget(live.url, TOKEN, attempts=1)
    outage.down()
    try:
        with Store(source) as src, pytest.raises(PushError) as refused:
            push_runs(src, target, [local_run])
    finally:
        outage.up()
        target.close()
    said = str(refused.value)
    assert f"run {local_run}" in said and "cannot take the upload now (503: the run store" in said
    assert "is unavailable: " in said and "try again in 5 s" in said
    assert all(secret not in said for secret in outage.hidden)


def test_read_connections_busy_past_their_wait_answer_503(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aieval.store import ReadPool, _read_pool

    location = str(tmp_path / "runs.db")
    run_id = store_qa_samples(location, 5, seed=3, skill=0.5)
    pool = ReadPool(size=1, wait_s=0.05)
    monkeypatch.setattr(_read_pool, "READ_POOL", pool)
    app = create_app(location, ServerSettings(dataset_roots=(tmp_path,), token=TOKEN))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with LiveServer(app) as live, httpx.Client(base_url=live.url, headers=headers) as client:
            path = f"/api/runs/{run_id}/samples"
            assert client.get(path).status_code == 200
            slot = pool._slots[str(Path(location))]
            assert slot.acquire(timeout=5)  # another reader holds the only connection
            try:
                busy = client.get(path)
            finally:
                slot.release()
            assert busy.status_code == 503, busy.text
            assert busy.headers["retry-after"] == "5"
            message = busy.json()["message"]
            assert "read connections stayed busy" in message and "try again in 5 s" in message
            assert str(tmp_path) not in busy.text
            assert client.get(path).status_code == 200
    finally:
        app.state.manager.shutdown()
