"""A store file someone else made (a CI artifact) is read without being trusted: read-only and
never changed, refused unless its schema is aieval's (views, triggers, other tables, generated
columns), every query stopped after a time limit."""

from __future__ import annotations

import gc
import hashlib
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.cli import run_main

from aieval import run
from aieval.errors import StoreError
from aieval.store import ReceivedTraces, Store, parse_location
from aieval.store._untrusted import UntrustedSqliteBackend

ROWS = [{"id": f"q{i}", "input": f"q{i}", "expected": "x", "prediction": "x"} for i in range(5)]
ENDLESS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n"


def _store(tmp_path: Path, *, checkpoint: bool = True) -> tuple[Path, str]:
    """A store as `aieval run` leaves it (``checkpoint``: everything in the file itself, as
    when the writer has ended; else part of it still in the write-ahead log)."""
    db = tmp_path / "artifact.db"
    run_id = run(name="qa", dataset=ROWS, scorers=["exact_match"], store=db).id
    # the result keeps its store open for ``samples()``; collect it now, so that the store's
    # connection (and the log files it removes as it closes) is gone before a test looks
    gc.collect()
    if checkpoint:
        _tamper(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    return db, run_id


def _tamper(db: Path, *statements: str) -> None:
    with sqlite3.connect(db) as raw:
        for statement in statements:
            raw.execute(statement)
    raw.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_aieval_store_reads_the_same_and_is_never_written(tmp_path: Path) -> None:
    db, run_id = _store(tmp_path)
    with Store(db) as trusted:
        expected = [(s.id, s.passed, s.scores) for s in trusted.iter_samples(run_id)]
    before, files = _digest(db), sorted(tmp_path.iterdir())
    with Store(db, untrusted=True) as store:
        assert store.get_run(run_id).name == "qa"
        assert [(s.id, s.passed, s.scores) for s in store.iter_samples(run_id)] == expected
        with pytest.raises(StoreError, match="read-only"):
            store.create_run(name="sneaky")
    assert _digest(db) == before and sorted(tmp_path.iterdir()) == files


def test_runs_still_in_the_write_ahead_log_are_read(tmp_path: Path) -> None:
    db, run_id = _store(tmp_path, checkpoint=False)
    before = _digest(db)
    with Store(db, untrusted=True) as store:
        assert len(list(store.iter_samples(run_id))) == len(ROWS)
    assert _digest(db) == before


@pytest.mark.parametrize(
    ("statements", "named"),
    [
        pytest.param(
            ["DROP TABLE scores", f"CREATE VIEW scores AS {ENDLESS}"],
            "view 'scores'",
            id="endless-view",
        ),
        pytest.param(
            ["CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END"],
            "trigger 't'",
            id="trigger",
        ),
        pytest.param(["CREATE TABLE extra (x)"], "table 'extra'", id="foreign-table"),
        pytest.param(
            ["CREATE INDEX runs_name_created2 ON runs (length(name))"],
            "index 'runs_name_created2'",
            id="foreign-index",
        ),
        pytest.param(
            ["DROP INDEX samples_run", "CREATE INDEX samples_run ON samples (run_id) WHERE 0"],
            "index 'samples_run'",
            id="altered-index",
        ),
        pytest.param(
            [
                "DROP TABLE scores",
                "CREATE TABLE scores (run_id, sample_id, scorer, value REAL GENERATED ALWAYS AS"
                " (length(scorer) * 2) VIRTUAL)",
            ],
            "generated or hidden column 'value'",
            id="generated-column",
        ),
        pytest.param(
            ["ALTER TABLE runs ADD COLUMN surprise TEXT"],
            "column 'surprise'",
            id="foreign-column",
        ),
    ],
)
def test_a_schema_that_is_not_aievals_is_refused_naming_the_file(
    tmp_path: Path, statements: list[str], named: str
) -> None:
    db, _ = _store(tmp_path)
    _tamper(db, *statements)
    before = _digest(db)
    started = time.monotonic()
    with pytest.raises(StoreError) as raised:
        Store(db, untrusted=True)
    assert str(db) in str(raised.value) and named in str(raised.value)
    assert "is not a store aieval wrote" in str(raised.value)
    assert time.monotonic() - started < 10  # refused before any query runs the view
    assert _digest(db) == before


def test_a_file_that_is_no_store_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    _tamper(db, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    with pytest.raises(StoreError, match=r"notes\.db is not an aieval store"):
        Store(db, untrusted=True)


def test_each_query_is_stopped_after_the_time_limit(tmp_path: Path) -> None:
    db, run_id = _store(tmp_path)
    backend = UntrustedSqliteBackend(parse_location(db), seconds=0.2)
    try:
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match=r"ran over 0\.2 s"):
            backend.query(f"SELECT count(*) FROM ({ENDLESS})")
        assert time.monotonic() - started < 10
        # the next query has its own time and runs
        assert backend.query("SELECT id FROM runs") == [(run_id,)]
    finally:
        backend.close()


def test_an_older_store_is_read_from_a_migrated_copy(tmp_path: Path) -> None:
    db, run_id = _store(tmp_path)
    _tamper(
        db,
        "ALTER TABLE samples DROP COLUMN verdict_plain",
        "UPDATE meta SET value = '3' WHERE key = 'schema_version'",
    )
    before = _digest(db)
    with Store(db, untrusted=True) as store:
        assert len(list(store.iter_samples(run_id))) == len(ROWS)
    assert _digest(db) == before


def test_aieval_compare_opens_its_baseline_store_untrusted(tmp_path: Path) -> None:
    db, base_id = _store(tmp_path)
    _tamper(db, "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END")
    cand = run(name="qa", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "mine.db").id
    # the one real process for ``aieval compare`` in this file: its exit code as CI sees it
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "compare", base_id, cand, "--db", "mine.db",
         "--baseline-db", "artifact.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr  # a bad input, not a blocked candidate
    assert "artifact.db is not a store aieval wrote: it holds trigger 't'" in done.stderr


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        pytest.param(
            "UPDATE runs SET metrics = x'00ff'",
            "table 'runs', row id '{run}', column 'metrics' holds a value of type blob",
            id="bytes-for-json",
        ),
        pytest.param(
            "UPDATE samples SET input = '{' WHERE sample_id = 'q1'",
            "table 'samples', row run_id '{run}', sample_id 'q1', column 'input' is not JSON",
            id="broken-json",
        ),
        pytest.param(
            "UPDATE samples SET extra = '[1, 2]' WHERE sample_id = 'q2'",
            "sample_id 'q2', column 'extra' holds JSON list, not an object",
            id="json-not-an-object",
        ),
        pytest.param(
            "UPDATE samples SET metadata = '" + "[" * 5000 + "]" * 5000 + "'",
            "column 'metadata' is not JSON (RecursionError)",
            id="json-too-deep",
        ),
        pytest.param(
            "UPDATE samples SET prediction = x'00ff' WHERE sample_id = 'q3'",
            "sample_id 'q3', column 'prediction' holds bytes that are not text",
            id="bytes-not-text",
        ),
        pytest.param(
            "UPDATE scores SET value = 'NaN'",
            "table 'scores', row run_id '{run}', sample_id 'q0', scorer 'exact_match', column"
            " 'value' holds a value of type text, where aieval writes REAL",
            id="text-for-number",
        ),
        pytest.param(
            "UPDATE samples SET idx = 1.5 WHERE sample_id = 'q4'",
            "column 'idx' holds a value of type real, where aieval writes INTEGER",
            id="real-for-integer",
        ),
        pytest.param(
            "UPDATE samples SET retries = x'01'",
            "column 'retries' holds a value of type blob, where aieval writes INTEGER",
            id="bytes-for-integer",
        ),
        pytest.param(
            "UPDATE runs SET ordered_at = 'soon'",
            "column 'ordered_at' holds a value of type text",
            id="added-column",
        ),
    ],
)
def test_a_value_aieval_would_not_write_is_refused_naming_row_and_column(
    tmp_path: Path, statement: str, named: str
) -> None:
    db, run_id = _store(tmp_path)
    _tamper(db, statement)
    with pytest.raises(StoreError) as raised:
        Store(db, untrusted=True)
    assert str(raised.value).startswith(f"{db} is not a store aieval wrote: in table ")
    assert named.format(run=run_id) in str(raised.value)


def test_text_aieval_stored_as_bytes_is_still_read(tmp_path: Path) -> None:
    """A lone surrogate is stored as its surrogatepass bytes (see ``_encoding``): not refused."""
    db, run_id = _store(tmp_path)
    _tamper(db, "UPDATE samples SET prediction = x'eda080' WHERE sample_id = 'q0'")
    with Store(db, untrusted=True) as store:
        assert store.get_sample(run_id, "q0").prediction == "\ud800"


def test_a_store_holding_received_traces_is_read_and_their_values_checked(
    tmp_path: Path,
) -> None:
    """The received export requests (schema 6) are aieval's own tables: read like the rest,
    and a body that is not bytes is refused, naming its row and column."""
    db, run_id = _store(tmp_path)
    ReceivedTraces(parse_location(db)).add(b"\xff\x00body", "protobuf", {"ab" * 16: 3})
    _tamper(db, "PRAGMA wal_checkpoint(TRUNCATE)")
    with Store(db, untrusted=True) as store:
        assert store.get_run(run_id).name == "qa"
    _tamper(db, "UPDATE received_requests SET body = 'text'")
    with pytest.raises(StoreError) as raised:
        Store(db, untrusted=True)
    assert "in table 'received_requests', row id 1, column 'body' holds a value of type text" in (
        str(raised.value)
    )


def test_aieval_compare_reports_a_bad_value_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, base_id = _store(tmp_path)
    _tamper(db, "UPDATE runs SET metrics = x'00ff'")
    cand = run(name="qa", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "mine.db").id
    done = run_main(capsys, monkeypatch, "compare", base_id, cand, "--db", "mine.db",
                    "--baseline-db", "artifact.db", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"artifact.db is not a store aieval wrote: in table 'runs', row id '{base_id}'" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def _artifact_with_log(tmp_path: Path) -> tuple[Path, str]:
    """A store copied while its writer had part of it in the write-ahead log (not
    checkpointed): ``artifact/store.db`` and ``artifact/store.db-wal``."""
    db, run_id = _store(tmp_path)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE runs SET name = 'in-the-log'")
    folder = tmp_path / "artifact"
    folder.mkdir()
    for suffix in ("", "-wal"):
        (folder / f"store.db{suffix}").write_bytes(Path(f"{db}{suffix}").read_bytes())
    writer.close()
    return folder / "store.db", run_id


def test_a_store_with_its_log_is_read_and_nothing_is_made_beside_it(tmp_path: Path) -> None:
    db, run_id = _artifact_with_log(tmp_path)
    before = {p.name: _digest(p) for p in db.parent.iterdir()}
    assert set(before) == {"store.db", "store.db-wal"}
    with Store(db, untrusted=True) as store:
        assert store.get_run(run_id).name == "in-the-log"
        assert {p.name: _digest(p) for p in db.parent.iterdir()} == before
    assert {p.name: _digest(p) for p in db.parent.iterdir()} == before


def _checksum_broken(log: bytes) -> bytes:
    return log[:20] + bytes([log[20] ^ 1]) + log[21:]  # a salt changed: the checksum is wrong


@pytest.mark.parametrize(
    ("log", "named"),
    [
        pytest.param(
            lambda log: bytes(range(256)) * 20, "not an SQLite write-ahead log", id="garbage"
        ),
        pytest.param(lambda log: log[:10], "shorter than a log's header", id="cut"),
        pytest.param(_checksum_broken, "header's checksum is wrong", id="checksum"),
        pytest.param(lambda log: log[:32] + b"\0" * 4120, "holds no transaction", id="no-frames"),
    ],
)
def test_a_log_sqlite_would_ignore_is_refused_naming_it(
    tmp_path: Path, log: Callable[[bytes], bytes], named: str
) -> None:
    db, _ = _artifact_with_log(tmp_path)
    wal = db.with_name("store.db-wal")
    wal.write_bytes(log(wal.read_bytes()))
    with pytest.raises(StoreError, match=named) as raised:
        Store(db, untrusted=True)
    assert f"the write-ahead log beside {db} ({wal})" in str(raised.value)
    assert sorted(p.name for p in db.parent.iterdir()) == ["store.db", "store.db-wal"]


@pytest.mark.parametrize("damage", ["cut short", "not a database"])
def test_a_damaged_baseline_store_is_a_bad_input_never_a_block(
    tmp_path: Path,
    damage: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a half-downloaded artifact, or a file of another kind: exit 2 naming it, not 1 (which
    # ``compare`` and ``github`` keep for a blocked candidate)
    db, _ = _store(tmp_path)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2] if damage == "cut short" else b"not sqlite " * 100)
    cand = run(name="qa", dataset=ROWS, scorers=["exact_match"], store=tmp_path / "mine.db").id
    done = run_main(capsys, monkeypatch, "compare", "qa", cand, "--db", "mine.db",
                    "--baseline-db", db.name, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert db.name in done.stderr and "Traceback" not in done.stderr
