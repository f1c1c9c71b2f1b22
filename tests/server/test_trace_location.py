"""Where the server keeps received traces: beside an SQLite store, in a named local file else."""

from __future__ import annotations

from pathlib import Path

import pytest

from aieval.server._traces import trace_store
from aieval.store import parse_location


def test_beside_an_sqlite_store(tmp_path: Path) -> None:
    store = trace_store(parse_location(str(tmp_path / "runs.db")))
    assert store.path == tmp_path / "runs.db.traces.db"


def test_a_postgres_store_uses_the_named_local_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = parse_location("postgresql://ci:pw@db.internal/evals")
    monkeypatch.delenv("AIEVAL_TRACES_DB", raising=False)
    assert trace_store(location).path == Path("aieval-traces.db")
    monkeypatch.setenv("AIEVAL_TRACES_DB", str(tmp_path / "t.db"))
    assert trace_store(location).path == tmp_path / "t.db"
