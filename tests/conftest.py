"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import compileall
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from tests.support.cli import in_process  # noqa: F401 (a fixture for every test)
from tests.support.cputime import (  # noqa: F401 (hooks: --cpu-durations)
    pytest_addoption,
    pytest_configure,
    pytest_runtest_makereport,
    pytest_runtest_setup,
    pytest_runtest_teardown,
)
from tests.support.openai_server import OpenAIServer
from tests.support.postgres import PostgresServer, find_binaries, postgres_server
from tests.support.schedule import (
    order_items,
    pytest_xdist_make_scheduler,  # noqa: F401 (a hook)
)

import aieval

# CI machines are shared and small: a property's correctness must not depend on a 200 ms
# per-example deadline that a busy neighbour can blow.
settings.register_profile("aieval", deadline=None)
settings.load_profile("aieval")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile aieval's modules (and the tests' support modules) to bytecode up front.

    The tests start hundreds of ``aieval`` subprocesses; with ``PYTHONDONTWRITEBYTECODE`` set (as
    on many CI images) each of them would compile every module it imports from source again. A
    module whose source changed later is compiled afresh by Python as usual.
    """
    if sys.dont_write_bytecode and not hasattr(session.config, "workerinput"):
        for folder in (Path(aieval.__file__).parent, Path(__file__).parent / "support"):
            compileall.compile_dir(folder, quiet=2, workers=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the modules with a test on the shared local Ray first, then those with a test marked
    ``slow``, then the rest, each module's tests together and in their usual order.

    pytest-xdist hands out tests in this order: a long test handed out last keeps one worker
    busy while the other has nothing left to do; first, the short tests fill in around them.
    The Ray tests side by side let each worker stop its Ray (idle, it still uses CPU) when it
    moves on (``ray_cluster`` in ``tests/runner/conftest.py``).
    """
    order_items(
        items,
        first=(
            lambda item: "ray_cluster" in getattr(item, "fixturenames", ()),
            lambda item: item.get_closest_marker("slow") is not None,
        ),
    )


@pytest.fixture(autouse=True)
def _own_default_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's default store (``$AIEVAL_DB``) is its own file, never ``./aieval.db``.

    A judge called outside a run caches deterministic answers in the default store, and a
    loopback server's port can come back in a later test: a shared file would answer one test's
    judge with another test's reply.
    """
    monkeypatch.setenv("AIEVAL_DB", str(tmp_path_factory.mktemp("store") / "aieval.db"))


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A loopback OpenAI/Anthropic-compatible server; script it with ``enqueue``/``responder``."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for the session (Debian's server binaries, as an unprivileged user).

    Skipped with a reason when the binaries are absent, except under ``CI`` (then it fails:
    ``scripts/postgres.sh`` installs them there).
    """
    binaries = find_binaries()
    if binaries is None:
        reason = (
            "PostgreSQL server binaries (initdb, pg_ctl) not installed: see scripts/postgres.sh"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with postgres_server(binaries) as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, empty PostgreSQL database of its own for this test (dropped after)."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store location on each backend: an SQLite file, then a fresh PostgreSQL database
    (dropped after the test)."""
    if request.param == "sqlite":
        yield str(tmp_path / "runs.db")
        return
    server: PostgresServer = request.getfixturevalue("pg_server")
    url = server.create_database()
    yield url
    server.drop_database(url)
