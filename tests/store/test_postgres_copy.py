"""PostgreSQL sample writes go by COPY: one per table, in one transaction, values exact."""

from __future__ import annotations

import math
import struct

import psycopg
import pytest
from tests.store.test_backends import ODD
from tests.store.test_store import sample
from tests.support.postgres import PostgresServer
from tests.support.tcp_proxy import TcpProxy

from aieval import CallRecord, Store
from aieval.errors import UnstorableSampleError
from aieval.store._backend import Insert

#: floats whose text form is easy to get wrong: each must read back bit for bit
FLOATS = [
    0.1 + 0.2, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1 / 3,
    math.inf, -math.inf, math.nan, 123456789.00000001,
]  # fmt: skip


def _via(proxy: TcpProxy, url: str) -> str:
    return f"postgresql://aieval@127.0.0.1:{proxy.port}/{url.rsplit('/', 1)[1]}"


def _bits(value: float | None) -> bytes | None:
    return None if value is None else struct.pack(">d", value)


def test_a_sample_batch_is_one_copy_per_table_in_one_transaction(
    pg_server: PostgresServer, pg_url: str
) -> None:
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        store = Store(_via(proxy, pg_url))
        run_id = store.create_run(name="qa")
        del proxy.sent[:]
        written = [sample(i) for i in range(3)]
        store.record_samples(run_id, written)
        wire = bytes(proxy.sent)
        store.close()
    for table in (b"samples", b"scores", b"model_calls"):
        assert wire.count(b"COPY " + table + b" (") == 1
    # no row inserted one statement at a time (the run's rollups are one upsert per part)
    for table in (b"samples", b"scores", b"model_calls", b"sample_values"):
        assert b"INSERT INTO " + table not in wire
    assert (wire.count(b"BEGIN"), wire.count(b"COMMIT")) == (1, 1)
    with Store(pg_url) as again:
        assert list(again.iter_samples(run_id)) == [again.get_sample(run_id, s.id) for s in written]
        read = {s.id: s for s in again.iter_samples(run_id)}
    for s in written:
        assert (read[s.id].input, read[s.id].scores, read[s.id].calls) == (
            s.input,
            s.scores,
            s.calls,
        )


def test_any_table_a_batch_writes_gets_copy_and_exact_values(
    pg_server: PostgresServer, pg_url: str
) -> None:
    """A table added later (a new per-sample table) is written by the same COPY helper: texts
    PostgreSQL cannot hold, floats (non-finite too), 64-bit edges, bytes and NULL come back
    exactly."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE odd (n BIGINT, t TEXT, f DOUBLE PRECISION, i BIGINT, b BYTEA)")
    # COPY's own syntax in a value (tab, newline, backslash, its end-of-data line, NULL's \N)
    copy_syntax = ["back\\slash\ttab\nline\r", "a\n\\.\nafter", "\\N", "\\."]
    texts = [*ODD, '{"j": "\\\\n\\t"}', *copy_syntax, None]
    ints = [-(2**63), 2**63 - 1, 0, None]
    blobs = [b"\x00\xff\\x\n\t", b"", None]
    rows = [
        (n, texts[n % len(texts)], FLOATS[n % len(FLOATS)], ints[n % len(ints)], blobs[n % 3])
        for n in range(30)
    ]
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        store = Store(_via(proxy, pg_url))
        del proxy.sent[:]
        store._db.write_rows([Insert("odd", ("n", "t", "f", "i", "b"), rows)])
        assert proxy.sent.count(b"COPY odd (n, t, f, i, b) FROM STDIN") == 1
        read = store._db.query("SELECT n, t, f, i, b FROM odd ORDER BY n")
        store.close()
    assert [(n, t, _bits(f), i, b) for n, t, f, i, b in read] == [
        (n, t, _bits(f), i, b) for n, t, f, i, b in rows
    ]


def test_sample_floats_read_back_bit_for_bit(pg_url: str) -> None:
    with Store(pg_url) as store:
        run_id = store.create_run(name="qa")
        written = [sample(i, cost=f) for i, f in enumerate(FLOATS)]
        for s, f in zip(written, FLOATS, strict=True):
            s.latency_s = f
            s.calls = [CallRecord("target", "p", "m", latency_s=f, cost=f)]
        store.record_samples(run_id, written)
        read = {s.id: s for s in store.iter_samples(run_id)}
    for s, f in zip(written, FLOATS, strict=True):
        got = read[s.id]
        assert _bits(got.latency_s) == _bits(got.cost) == _bits(f)
        assert _bits(got.calls[0].latency_s) == _bits(got.calls[0].cost) == _bits(f)


def test_a_batch_whose_last_table_fails_stores_nothing(pg_url: str) -> None:
    """The model calls' COPY fails after the samples' and scores' went through: the one
    transaction keeps none of the batch, and the store goes on."""
    with Store(pg_url) as store:
        run_id = store.create_run(name="qa")
        bad = [sample(i) for i in range(3)]
        bad[2].calls = [CallRecord("target", "p", "m", input_tokens=2**64)]
        with pytest.raises(UnstorableSampleError, match=f"run {run_id}"):
            store.record_samples(run_id, bad)
        assert store.count_samples(run_id) == 0
        assert store._db.query("SELECT COUNT(*) FROM scores") == [(0,)]
        store.record_samples(run_id, [sample(i) for i in range(3)])
        assert store.completed_sample_ids(run_id) == {"s0", "s1", "s2"}


def test_a_connection_cut_inside_a_copy_keeps_nothing_and_the_retry_stores_it_once(
    pg_server: PostgresServer, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The connection drops once the samples' COPY went through and the scores' began: the
    server rolls the open transaction back, and the one retry on a new connection writes the
    whole batch once."""
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        store = Store(_via(proxy, pg_url))
        run_id = store.create_run(name="qa")
        proxy.drop_reply_to(b"COPY scores (")
        store.record_samples(run_id, [sample(i) for i in range(3)])
        assert proxy.dropped.is_set() and "connecting again" in caplog.text
        store.close()
    with psycopg.connect(pg_url) as conn:
        counts = conn.execute(
            "SELECT (SELECT COUNT(*) FROM samples), (SELECT COUNT(DISTINCT sample_id) FROM"
            " samples), (SELECT COUNT(*) FROM scores), (SELECT COUNT(*) FROM model_calls)"
        ).fetchone()
    assert counts == (3, 3, 3 * len(sample(0).scores), 3)
