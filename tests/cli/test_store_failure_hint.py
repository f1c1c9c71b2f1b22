"""A store failure before the run was created says there is nothing to resume; a permission
failure on PostgreSQL is one line naming the role and what it lacks."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from aieval import Store
from aieval.errors import StoreError

AIEVAL = [sys.executable, "-m", "aieval"]


def _eval(folder: Path) -> None:
    rows = "".join(f'{{"id": "r{i}", "prompt": "p", "expected": "x", "prediction": "x"}}\n'
                   for i in range(3))  # fmt: skip
    (folder / "rows.jsonl").write_text(rows)
    (folder / "e.yaml").write_text("name: e\ndataset: rows.jsonl\nscorers: [exact_match]\n")


def _run(folder: Path, location: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AIEVAL_DB"}
    return subprocess.run(
        [*AIEVAL, "run", "e.yaml", "--db", location, "-q"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("older", [False, True])
@pytest.mark.slow
def test_sqlite_no_resume_hint_when_the_run_was_never_stored(tmp_path: Path, older: bool) -> None:
    _eval(tmp_path)
    with Store(tmp_path / "r.db") as store:
        if older:  # an earlier run of the same name, interrupted: not the one that failed now
            store.finish_run(store.create_run(name="e"), status="interrupted")
    with contextlib.closing(sqlite3.connect(tmp_path / "r.db")) as db, db:
        db.execute(
            "CREATE TRIGGER no_runs BEFORE INSERT ON runs BEGIN"
            " SELECT RAISE(ABORT, 'runs are frozen'); END"
        )
    done = _run(tmp_path, "r.db")
    assert done.returncode == 1, done.stderr
    assert "runs are frozen" in done.stderr
    assert "--resume" not in done.stderr, done.stderr
    assert "nothing of the run was stored: once the store is writable again" in done.stderr


@pytest.mark.slow
def test_postgres_permission_failure_is_one_line_and_offers_no_resume(
    tmp_path: Path, pg_url: str
) -> None:
    _eval(tmp_path)
    Store(pg_url).close()  # the owner creates the store
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN"
            " CREATE ROLE reader LOGIN PASSWORD 'reader-pw-1'; END IF; END $$"
        )
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    done = _run(tmp_path, pg_url.replace("aieval@", "reader:reader-pw-1@"))
    assert done.returncode == 1, done.stderr
    assert "role reader may not read or write table runs: GRANT SELECT, INSERT, UPDATE," in (
        " ".join(done.stderr.split())
    )
    assert "LINE" not in done.stderr and "^" not in done.stderr, done.stderr
    assert "--resume" not in done.stderr, done.stderr
    assert "free space" not in done.stderr
    assert "nothing of the run was stored: once the store is reachable and writable again" in (
        " ".join(done.stderr.split())
    )


def test_a_role_that_may_not_create_tables_is_told_so_in_one_line(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ciwriter') THEN"
            " CREATE ROLE ciwriter LOGIN PASSWORD 'ci-pw-1'; END IF; END $$"
        )
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    writer = pg_url.replace("aieval@", "ciwriter:ci-pw-1@")
    with pytest.raises(StoreError) as raised:
        Store(writer)
    message = str(raised.value)
    assert message.endswith(
        "role ciwriter may not create tables in schema public: open the store once as its"
        " owner, or GRANT CREATE ON SCHEMA public TO ciwriter"
    ), message
    assert "\n" not in message and "CREATE TABLE" not in message


@pytest.mark.slow
def test_postgres_failure_after_the_run_was_stored_offers_resume(
    tmp_path: Path, pg_url: str
) -> None:
    _eval(tmp_path)
    Store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN"
            " RAISE EXCEPTION 'samples are frozen'; END $$ LANGUAGE plpgsql"
        )
        conn.execute(
            "CREATE TRIGGER frozen BEFORE INSERT ON samples"
            " FOR EACH STATEMENT EXECUTE FUNCTION refuse()"
        )
    done = _run(tmp_path, pg_url)
    assert done.returncode == 1, done.stderr
    assert "samples are frozen" in done.stderr
    assert "once the store is reachable and writable again, resume with aieval run e.yaml" in (
        done.stderr
    )
    assert "--resume --db" in done.stderr and "free space" not in done.stderr
