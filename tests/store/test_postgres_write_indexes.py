"""What each sample written to PostgreSQL costs the server: no index that repeats another's
prefix, and the foreign keys that keep a score, call or value from outliving its sample."""

from __future__ import annotations

import psycopg
import pytest
from tests.store.test_store import sample

from aieval import Store
from aieval.store._schema import SCHEMA_VERSION


def _indexes(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'samples'")
        return {row[0] for row in rows}


def test_a_postgres_store_has_no_index_repeating_the_primary_keys_prefix(pg_url: str) -> None:
    with Store(pg_url) as store:
        run_id = store.create_run(name="qa")
        store.record_samples(run_id, [sample(i) for i in range(3)])
        assert [s.id for s in store.iter_samples(run_id)] == ["s0", "s1", "s2"]
    indexes = _indexes(pg_url)
    assert "samples_run" not in indexes
    assert {"samples_pkey", "samples_seq"} <= indexes  # by run, and by run in insertion order


def test_an_older_postgres_store_loses_that_index_when_migrated(pg_url: str) -> None:
    Store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE INDEX samples_run ON samples (run_id)")
        conn.execute(
            "UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION - 1),)
        )
    with Store(pg_url) as store:
        run_id = store.create_run(name="qa")
        store.record_samples(run_id, [sample(1), sample(2)])
        assert store.completed_sample_ids(run_id) == {"s1", "s2"}
    assert "samples_run" not in _indexes(pg_url)


def test_every_per_sample_table_keeps_its_foreign_key_to_the_sample(pg_url: str) -> None:
    """Kept on purpose (docs/team.md, "Durability" and "Integrity"): the check costs
    the server about 5 us per written sample, and without it a score or call whose sample is
    gone would be counted by the readers that sum a run's scores by run id."""
    Store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        keys = {
            (str(row[0]), str(row[1]))
            for row in conn.execute(
                "SELECT conrelid::regclass, confrelid::regclass FROM pg_constraint"
                " WHERE contype = 'f'"
            )
        }
        assert {
            ("samples", "runs"),
            ("scores", "samples"),
            ("model_calls", "samples"),
            ("sample_values", "samples"),
        } <= keys
        # an orphan is refused by the server, whoever writes it
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute(
                "INSERT INTO scores (run_id, sample_id, scorer, value) VALUES ('r', 's', 'em', 1)"
            )
