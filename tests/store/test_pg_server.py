"""The test suite's PostgreSQL server: a real one, with a trusted and a password role."""

import psycopg
import pytest
from tests.support.postgres import TEAMMATE_PASSWORD, PostgresServer


def test_each_test_gets_a_fresh_database(pg_server: PostgresServer, pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT current_database(), current_user").fetchone() == (
            pg_url.rsplit("/", 1)[1],
            "aieval",
        )
        assert conn.execute(
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone() == (0,)
    assert pg_server.create_database() != pg_url


def test_the_password_role_checks_its_password(pg_url: str) -> None:
    with psycopg.connect(pg_url.replace("aieval@", f"teammate:{TEAMMATE_PASSWORD}@")) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("teammate",)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(pg_url.replace("aieval@", "teammate:wrong@"))
