"""An imported run (push, copy) reaches PostgreSQL by COPY: one per table, values exact."""

from __future__ import annotations

from pathlib import Path

from tests.store.test_backends import ODD, _odd_sample
from tests.store.test_postgres_copy import FLOATS, _via
from tests.store.test_store import sample
from tests.support.postgres import PostgresServer
from tests.support.tcp_proxy import TcpProxy

from aieval import ScoreRecord, Store


def test_an_imported_run_is_one_copy_per_table_and_reads_back_exactly(
    pg_server: PostgresServer, pg_url: str, tmp_path: Path
) -> None:
    with Store(str(tmp_path / "local.db")) as source:
        run_id = source.create_run(name="qa", config={"c": ODD})
        written = [_odd_sample(i, text) for i, text in enumerate(ODD)]
        # floats whose text form is easy to get wrong, in a score value
        for i, value in enumerate(FLOATS):
            written.append(sample(100 + i))
            written[-1].scores["f"] = ScoreRecord(value)
        source.record_samples(run_id, written)
        source.finish_run(run_id, status="completed", metrics={"m": 1})
        run, samples = source.get_run(run_id), list(source.stored_samples(run_id))
    with TcpProxy(pg_server.host, pg_server.port) as proxy:
        team = Store(_via(proxy, pg_url))
        del proxy.sent[:]
        outcome = team.import_run(run, samples)
        wire = bytes(proxy.sent)
        team.close()
    assert (outcome.outcome, outcome.samples_added) == ("new", len(samples))
    for table in (b"samples", b"scores", b"model_calls"):
        assert wire.count(b"COPY " + table + b" (") == 1
        assert b"INSERT INTO " + table not in wire
    with Store(pg_url) as again:
        assert again.get_run(run_id) == run
        # compared as stored: every text, JSON and float the same (NaN by its repr)
        assert repr(list(again.stored_samples(run_id))) == repr(samples)
