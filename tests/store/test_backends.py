"""Both backends keep the same promises: lossless text, one take-over, same numbers, versions."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from tests.store.test_store import sample
from tests.support.postgres import PostgresServer
from tests.support.tcp_proxy import TcpProxy

from aieval import CallRecord, SampleRecord, ScoreRecord, Store
from aieval.errors import RunInProgressError, StoreError
from aieval.providers import ResponseCache
from aieval.report import build_report, compare_runs
from aieval.store._encoding import PG_MARKER
from aieval.store._schema import SCHEMA_VERSION

# texts PostgreSQL's text cannot hold (NUL, lone surrogates), one that looks like the escape,
# and plain ones: each must read back exactly
ODD = ["nul\x00inside", "lone \udc80 surrogate", PG_MARKER + "fake", "\x00", "é ünï 🙂", ""]


def _odd_sample(i: int, text: str) -> SampleRecord:
    score = ScoreRecord(
        0.5, raw={"r": text}, reason=text, error=text, metadata={"m": text}, unreadable=text
    )
    return SampleRecord(
        id=f"id-{i}-{text}",
        index=i,
        input={"q": text, text: [text]},
        expected=text,
        prediction=text,
        metadata={"k": text},
        scores={f"score {text}": score},
        calls=[CallRecord(f"judge:{text}", text, text, error=text)],
        error=text,
        passed=True,
        extra={"x": text},
    )


@pytest.mark.parametrize("text", ODD)
def test_every_text_column_round_trips(store_location: str, text: str) -> None:
    store = Store(store_location)
    run_id = store.create_run(
        name=f"n{text}", model=text, provider=text, dataset=text, dataset_hash=text,
        git_sha=text, config={"c": text}, run_id=f"r-{text}",
    )  # fmt: skip
    written = _odd_sample(0, text)
    store.record_sample(run_id, written)
    store.finish_run(run_id, status="failed", metrics={"m": text}, error=text)
    calibration = store.record_calibration(
        judge=text, n=1, metrics={"k": text}, model=text, model_version=text,
        prompt_version=text, run_id=run_id, labels=text,
    )  # fmt: skip
    with Store(store_location) as again:
        row = again.get_run(f"n{text}")
        assert (row.id, row.name, row.model, row.provider, row.dataset, row.dataset_hash) == (
            f"r-{text}", f"n{text}", text, text, text, text,
        )  # fmt: skip
        assert (row.git_sha, row.config, row.metrics, row.error) == (
            text, {"c": text}, {"m": text}, text,
        )  # fmt: skip
        assert again.get_run(f"r-{text}").id == f"r-{text}"
        (read,) = list(again.iter_samples(run_id))
        assert read == again.get_sample(run_id, written.id)
        assert (read.id, read.input, read.expected, read.prediction, read.error) == (
            written.id, written.input, text, text, text,
        )  # fmt: skip
        assert (read.metadata, read.extra) == ({"k": text}, {"x": text})
        score = read.scores[f"score {text}"]
        assert (score.raw, score.reason, score.error, score.metadata, score.unreadable) == (
            {"r": text}, text, text, {"m": text}, text,
        )  # fmt: skip
        call = read.calls[0]
        assert (call.purpose, call.provider, call.model, call.error) == (
            f"judge:{text}", text, text, text,
        )  # fmt: skip
        assert again.completed_sample_ids(run_id) == {written.id}
        assert [s.id for s in again.samples_since(run_id)] == [written.id]
        (cal,) = again.calibrations(text)
        assert (cal.id, cal.judge, cal.model, cal.labels, cal.metrics) == (
            calibration, text, text, text, {"k": text},
        )  # fmt: skip


def test_schema_version_is_recorded(store_location: str) -> None:
    store = Store(store_location)
    assert store._read_one("SELECT value FROM meta WHERE key = 'schema_version'") == (
        str(SCHEMA_VERSION),
    )
    Store(store_location).close()  # opening again migrates nothing and keeps it
    assert store._read_one("SELECT COUNT(*) FROM meta") == (1,)


def test_calibrations_most_recent_first(store_location: str) -> None:
    store = Store(store_location)
    first = store.record_calibration(judge="j", n=10, metrics={"kappa": {"estimate": 0.5}})
    second = store.record_calibration(judge="j", n=20, metrics={"kappa": {"estimate": 0.7}})
    store.record_calibration(judge="other", n=5, metrics={})
    assert second > first
    assert [c.id for c in store.calibrations("j")] == [second, first]
    assert [c.n for c in store.calibrations(limit=2)] == [5, 20]


def test_only_one_of_many_resumers_takes_an_interrupted_run(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="qa")
        store.finish_run(run_id, status="interrupted")
    stores = [Store(store_location) for _ in range(6)]
    start = threading.Barrier(len(stores))
    outcomes: list[str] = []

    def resume(store: Store) -> None:
        start.wait()
        try:
            store.mark_running(run_id)
            outcomes.append("took it")
        except RunInProgressError:
            outcomes.append("refused")

    threads = [threading.Thread(target=resume, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["refused"] * 5 + ["took it"]
    assert stores[0].get_run(run_id).status == "running"


def _numbers(data: Any) -> Any:
    """A report's data without what names the run or its store (ids, times)."""
    if isinstance(data, dict):
        return {
            k: _numbers(v)
            for k, v in data.items()
            if k not in {"id", "run", "baseline", "candidate", "created_at", "started_at",
                         "finished_at", "duration_s"}
        }  # fmt: skip
    if isinstance(data, list):
        return [_numbers(v) for v in data]
    return data


def test_reports_and_comparisons_are_identical_on_both(tmp_path: Path, pg_url: str) -> None:
    results = []
    for where in (str(tmp_path / "runs.db"), pg_url):
        store = Store(where)
        ids = []
        for name, shift in (("base", 0), ("cand", 1)):
            run_id = store.create_run(
                name=name, run_id=f"{name}-run", config={"pass_threshold": 0.5}
            )
            store.record_samples(run_id, [sample(i + shift) for i in range(40)])
            store.finish_run(run_id, status="completed")
            ids.append(run_id)
        report = build_report(store, ids[1], slice_by=["slice"]).to_dict()
        comparison = compare_runs(store, ids[0], ids[1]).to_dict()
        results.append((_numbers(report), _numbers(comparison)))
    assert results[0] == results[1]
    assert results[0][0]["samples"] == 40


def _terminate_store_sessions(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as admin:
        return admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'aieval' AND datname = current_database()"
        ).fetchall()


def test_one_lost_connection_is_retried_on_a_new_one(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(pg_url)
    run_id = store.create_run(name="qa")
    store.record_sample(run_id, sample(0))
    assert _terminate_store_sessions(pg_url) == [(True,)]
    store.record_sample(run_id, sample(1))  # connects again and writes the batch once
    assert "lost the connection to the store at postgresql://" in caplog.text
    assert store.completed_sample_ids(run_id) == {"s0", "s1"}
    assert _terminate_store_sessions(pg_url) == [(True,)]
    store.finish_run(run_id, status="completed")  # an idempotent update is retried too
    assert store.get_run(run_id).status == "completed"


def _via(proxy: TcpProxy, url: str) -> str:
    """``url`` with its host and port replaced by the proxy's."""
    database = url.rsplit("/", 1)[1]
    return f"postgresql://aieval@127.0.0.1:{proxy.port}/{database}"


def test_a_batch_committed_before_the_connection_dropped_is_not_written_twice(
    pg_server: PostgresServer, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        store = Store(_via(proxy, pg_url))
        run_id = store.create_run(name="qa")
        store.record_sample(run_id, sample(0))
        proxy.drop_reply_to(b"COMMIT")  # the server commits the batch; its answer never arrives
        store.record_samples(run_id, [sample(1), sample(2)])
        assert proxy.dropped.is_set()
        assert "connecting again" in caplog.text
        assert store.completed_sample_ids(run_id) == {"s0", "s1", "s2"}
        with psycopg.connect(pg_url) as conn:
            counts = conn.execute(
                "SELECT (SELECT COUNT(*) FROM samples), (SELECT COUNT(*) FROM scores)"
            ).fetchone()
        assert counts == (3, 3 * len(sample(0).scores))


def test_a_store_that_stays_unreachable_is_a_store_error_then_reconnects(
    pg_server: PostgresServer, pg_url: str
) -> None:
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        store = Store(_via(proxy, pg_url))
        run_id = store.create_run(name="qa")
        store.record_sample(run_id, sample(0))
        proxy.down = True
        assert _terminate_store_sessions(pg_url) == [(True,)]
        with pytest.raises(StoreError, match=r"cannot write samples of run .* to postgresql://"):
            store.record_sample(run_id, sample(1))
        proxy.down = False
        store.record_sample(run_id, sample(1))  # the next use connects again
        assert store.completed_sample_ids(run_id) == {"s0", "s1"}


def test_a_read_after_a_lost_connection_is_asked_once_more_and_only_once(
    pg_server: PostgresServer, pg_url: str
) -> None:
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        store = Store(_via(proxy, pg_url))
        cache = ResponseCache(_via(proxy, pg_url))
        run_id = store.create_run(name="qa")
        assert len(cache) == 0
        for read in (lambda: store.get_run(run_id).name, lambda: len(cache)):
            assert read() in ("qa", 0)  # connected
            # one cut: the read is asked again on one new connection, and answers
            assert _terminate_store_sessions(pg_url)
            before = proxy.connections
            assert read() in ("qa", 0)
            assert proxy.connections == before + 1
            # the server stays unreachable: one more connection is tried, not two
            proxy.down = True
            assert _terminate_store_sessions(pg_url)
            before = proxy.connections
            with pytest.raises(StoreError, match=r"cannot read .*postgresql://"):
                read()
            assert proxy.connections == before + 1
            proxy.down = False
        assert store.get_run(run_id).name == "qa" and len(cache) == 0  # connected again
        # a write keeps its own one reconnect-and-retry
        assert _terminate_store_sessions(pg_url)
        store.finish_run(run_id, status="completed")
        assert store.get_run(run_id).status == "completed"
        cache.close()
        store.close()


def test_an_older_postgres_store_is_migrated_in_place(pg_url: str) -> None:
    with Store(pg_url) as store:
        run_id = store.create_run(name="old")
        store.record_sample(run_id, sample(1))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE samples DROP COLUMN verdict")
        conn.execute("ALTER TABLE scores DROP COLUMN unreadable")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    with Store(pg_url) as store:
        assert store._read_one("SELECT value FROM meta WHERE key = 'schema_version'") == (
            str(SCHEMA_VERSION),
        )
        (old,) = list(store.iter_samples(run_id))  # read through the adapter of older rows
        assert old.id == "s1" and old.scores["em"].value == 1.0
        store.record_sample(run_id, sample(2))
        assert store.count_samples(run_id) == 2


def test_opening_an_up_to_date_store_waits_for_no_writer(pg_url: str) -> None:
    writer = Store(pg_url)
    run_id = writer.create_run(name="busy")
    with psycopg.connect(pg_url) as held:  # a transaction holding row locks on every table
        held.execute("INSERT INTO runs (id, name, status, created_at) VALUES ('x', 'x', 'r', 0)")
        held.execute(
            "INSERT INTO samples (run_id, sample_id, idx, created_at) VALUES ('x', 'a', 0, 0)"
        )
        with Store(pg_url) as reader:  # DDL would queue behind the open transaction
            assert reader.get_run(run_id).name == "busy"
        held.rollback()


def test_commits_are_synchronous_even_where_the_database_turns_them_off(pg_url: str) -> None:
    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database} SET synchronous_commit = off")
    with psycopg.connect(pg_url) as other:
        assert other.execute("SHOW synchronous_commit").fetchone() == ("off",)
    with Store(pg_url) as store:
        assert store._read_one("SHOW synchronous_commit") == ("on",)
        assert _terminate_store_sessions(pg_url) == [(True,)]
        assert store._read_one("SHOW synchronous_commit") == ("on",)  # and after reconnecting
