"""The PostgreSQL backend (psycopg 3, extra ``postgres``): the store's SQL in PostgreSQL's terms.

Differences from SQLite handled here: ``%s`` placeholders; a ``seq`` identity column gives
``runs``, ``samples`` and ``scores`` the insertion order SQLite's ``rowid`` gives; ``NULL`` is
"no limit"; ``REAL`` is ``double precision``, ``INTEGER`` ``bigint`` and ``BLOB`` ``bytea``
(JSON stays ``text``, so it reads back byte for byte); the take-over locks the run's row
(``FOR UPDATE``); schema creation takes an advisory lock so concurrent openers do not race;
texts ``text`` cannot hold (NUL, lone surrogates) are stored escaped
(:func:`aieval.store._encoding.to_pg`). A broken connection is opened again on the next use,
and a read outside a transaction that finds its connection closed by the server (a restart)
is asked once more on a new one.

Rows for several tables (a batch of samples with their scores and model calls) are written in
one transaction, each table's rows streamed by one ``COPY ... FROM STDIN``: a few round trips
and one commit however many rows, and no per-row statement for the server to run.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

from aieval.errors import StoreError
from aieval.store._backend import PAGE, Backend, Execute, Insert, PageSink
from aieval.store._encoding import PG_MARKER, from_pg, to_pg, to_pg_row
from aieval.store._location import StoreLocation
from aieval.store._schema import (
    FILLS,
    POSTGRES_TABLE_INDEXES,
    POSTGRES_TEXT_SEARCH,
    fill_config_columns,
    table_names,
    up_to_date,
)

try:
    import psycopg
except ImportError:  # pragma: no cover - the extra is missing
    psycopg = None  # type: ignore[assignment]

__all__ = ["PostgresBackend", "postgres_schema"]

#: the tables read in insertion order, and so given a ``seq`` column
ORDERED_TABLES = ("runs", "samples", "scores")
log = logging.getLogger("aieval")
# pg_advisory_xact_lock key serialising schema creation and migration ("aieval" in ASCII)
_SCHEMA_LOCK = 0x61696576616C
# first key of the two-key advisory locks taken on a run id while a copy of it is written ("aiev")
_RUN_LOCK = 0x61696576
#: SQLite's index of a run's samples in insertion order (its rowid): not made on PostgreSQL
_SAMPLES_RUN = "CREATE INDEX IF NOT EXISTS samples_run ON samples (run_id);\n"


class PostgresBackend(Backend):
    """A PostgreSQL database, reached with psycopg 3 (autocommit outside transactions)."""

    no_limit = None
    for_update = " FOR UPDATE"
    run_lock = f"SELECT 1 FROM pg_advisory_xact_lock({_RUN_LOCK}, hashtext(?))"
    # one array parameter: the statement's text stays the same (parsed and planned once)
    max_members = 5000

    def __init__(self, location: StoreLocation) -> None:
        if psycopg is None:
            raise StoreError(
                f"the store at {location} is PostgreSQL, which needs psycopg: pip install"
                " 'aieval[postgres]'"
            )
        super().__init__(location)
        self.errors = (psycopg.Error,)
        self._in_transaction = False
        self._conn = self._connect()

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        conn = psycopg.connect(
            self.location.connect_url(),
            autocommit=True,
            connect_timeout=30,
            application_name="aieval",
        )
        # a commit is durable before it counts: a server crash under synchronous_commit=off
        # could drop committed batches of a run that goes on (and finishes) unaware
        setting = conn.execute("SHOW synchronous_commit").fetchone()
        if setting is not None and setting[0] == "off":
            conn.execute("SET synchronous_commit = on")
        return conn

    def _live(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn.closed or self._conn.broken:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = self._connect()
        return self._conn

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        conn = self._live()
        try:
            rows = conn.execute(_translate(sql), to_pg_row(args)).fetchall()
        except psycopg.OperationalError:
            if not conn.broken or self._in_transaction:
                raise
            # the server closed the connection (restarted): a read outside a transaction is
            # asked once more on a new connection
            rows = self._live().execute(_translate(sql), to_pg_row(args)).fetchall()
        return [_decoded(row) for row in rows]

    def member_of(self, column: str, values: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
        return f"{column} = ANY(?)", ([to_pg(v) for v in values],)

    def pages(self, sql: str, args: Sequence[Any], consume: PageSink, size: int = PAGE) -> None:
        # a server-side cursor: the client holds one page, not the whole result
        conn = self._live()
        with conn.transaction(), conn.cursor(name="aieval_pages") as cursor:
            cursor.execute(_translate(sql), to_pg_row(args))
            while page := cursor.fetchmany(size):
                consume(page)

    def text(self, value: Any) -> Any:
        return from_pg(value)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self._live().execute(_translate(sql), to_pg_row(args))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._live().cursor() as cursor:
            cursor.executemany(_translate(sql), [to_pg_row(row) for row in rows])

    def insert_rows(self, insert: Insert) -> None:
        # COPY, which a pipeline cannot carry: inside a transaction that is not one (an
        # exclusive one, as an imported run's), or in a transaction of its own
        if insert.rows:
            with self._live().cursor() as cursor:
                _copy(cursor, insert.expanded())

    def write_rows(
        self,
        inserts: Sequence[Insert],
        then: tuple[str, Sequence[Any]] | None = None,
        after: Callable[[Execute], None] | None = None,
    ) -> None:
        # one transaction: each table's rows streamed by COPY (parsed by the server as text,
        # no statement per row), then ``then``; a failure anywhere rolls all of it back
        conn = self._live()
        with conn.transaction(), conn.cursor() as cursor:
            for insert in inserts:
                if insert.rows:
                    _copy(cursor, insert.expanded())
            if then is not None:
                cursor.execute(_translate(then[0]), to_pg_row(then[1]))
            if after is not None:  # a run's rollups (aieval.store._rollups)

                def execute(sql: str, args: Sequence[Any]) -> None:
                    cursor.execute(_translate(sql), to_pg_row(args))

                after(execute)

    def refresh_statistics(self, tables: Sequence[str]) -> None:
        # Statistics gathered while a run was being written (autovacuum's analyze) can say a
        # table holds a few rows when it now holds thousands; the planner then nests loops
        # over it and a comparison's join takes minutes instead of a second. Tables changed by
        # more than a fifth since their last analyze are analyzed again (a sample of rows: cheap
        # at any size; a table this role does not own is skipped by the server with a warning).
        # One another session is analyzing is skipped (SKIP_LOCKED): eight writers ending
        # together would otherwise analyze it eight times over, each waiting for the last.
        stale = self.query(
            "SELECT c.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid"
            " WHERE s.relid = ANY(?::regclass[])"
            " AND s.n_mod_since_analyze > 50 + 0.2 * GREATEST(c.reltuples, 0)",
            ([f'"{table}"' for table in tables],),
        )
        for (table,) in stale:
            self.execute(f'ANALYZE (SKIP_LOCKED) "{table}"')

    @property
    def role(self) -> str | None:
        try:
            return str(self._conn.info.user) or None
        except psycopg.Error:  # the connection is closed
            return None

    def bad_value(self, exc: BaseException) -> bool:
        # DataError: SQLSTATE class 22, e.g. numeric_value_out_of_range for a bigint column
        return isinstance(exc, OverflowError | psycopg.DataError)

    def lost(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.OperationalError) and (
            self._conn.closed or self._conn.broken
        )

    @contextlib.contextmanager
    def transaction(self, *, exclusive: bool = False) -> Iterator[None]:
        conn = self._live()
        self._in_transaction = True
        try:
            if exclusive:  # reads its row before writing: one statement at a time
                with conn.transaction():
                    yield
                return
            # a write-only transaction is sent as one pipeline: BEGIN, every batch, COMMIT in
            # about one round trip (an error surfaces when the pipeline syncs, inside this block)
            with conn.pipeline(), conn.transaction():
                yield
        finally:
            self._in_transaction = False

    def create_schema(self, schema: str, added: dict[str, dict[str, str]], version: int) -> None:
        conn = self._live()
        if self._current(schema, version):
            # up to date: no DDL, whose table locks would queue behind (and ahead of) the
            # transactions of the runs writing at this moment, and which a role with only data
            # rights may not run
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            if self._current(schema, version):  # another opener migrated it meanwhile
                return
            started = time.monotonic()
            conn.execute(postgres_schema(schema))
            for table, columns in added.items():
                have = {
                    row[0]
                    for row in conn.execute(
                        "SELECT column_name FROM information_schema.columns"
                        " WHERE table_schema = current_schema() AND table_name = %s",
                        (table,),
                    )
                }
                for column, kind in columns.items():
                    if column not in have:
                        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {_types(kind)}")
            # the sample table's indexes, on the columns just added to an older store too
            conn.execute(POSTGRES_TABLE_INDEXES)
            _text_search(conn)
            took = time.monotonic() - started
            if took > 5:  # the indexes of a large store are built once, when it is migrated
                log.warning("store schema brought to version %s in %.0f s", version, took)
            now = time.time()
            for sql in FILLS:
                conn.execute(sql.replace("?", "%s"), (now,) * sql.count("?"))
            fill_config_columns(self.query, self.executemany)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(version),),
            )

    def _current(self, schema: str, version: int) -> bool:
        """Whether the store is at ``version`` with every table of ``schema``; ``False`` before
        its first use or when older (raises :class:`StoreError` when it is newer)."""
        row = self._conn.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return False
        found = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if not up_to_date(None if found is None else str(found[0]), version):
            return False
        missing = self._conn.execute(
            "SELECT count(*) FROM unnest(%s::text[]) AS t(name) WHERE to_regclass(name) IS NULL",
            (list(table_names(schema)),),
        ).fetchone()
        return missing is not None and missing[0] == 0

    def has_table(self, name: str) -> bool:
        row = self._live().execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
        return row is not None and bool(row[0])

    def create_table(self, ddl: str) -> None:
        name = re.search(r"CREATE TABLE IF NOT EXISTS (\w+)", ddl)
        if name is not None and self.has_table(name.group(1)):
            return
        conn = self._live()
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            conn.execute(_types(ddl))

    def close(self) -> None:
        self._conn.close()


def _copy(cursor: psycopg.Cursor[Any], insert: Insert) -> None:
    """Stream the rows of ``insert`` into its table with one ``COPY ... FROM STDIN`` (text
    format: the server parses each value as its column's type, exactly as it parses a
    parameter; texts escaped as :func:`to_pg` does, floats in shortest round-trip form)."""
    columns = ", ".join(insert.columns)
    with cursor.copy(f"COPY {insert.table} ({columns}) FROM STDIN") as copy:
        for row in insert.rows:
            copy.write_row(to_pg_row(row))


def _text_search(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """Add ``pg_trgm`` and the search index, or say why not (a role without the right to
    create the extension): the table's text search then reads each run's texts."""
    try:
        with conn.transaction():  # a savepoint: a refusal leaves the schema's transaction whole
            conn.execute(POSTGRES_TEXT_SEARCH)
    except psycopg.Error as exc:
        log.warning(
            "store: no trigram index for the viewer's text search (%s); a search reads the"
            " run's texts instead. A superuser can run: CREATE EXTENSION pg_trgm",
            str(exc).strip().splitlines()[0],
        )


def _decoded(row: tuple[Any, ...]) -> tuple[Any, ...]:
    for value in row:
        if isinstance(value, str) and value.startswith(PG_MARKER):
            return tuple(map(from_pg, row))
    return row


@lru_cache(maxsize=256)
def _translate(sql: str) -> str:
    """SQLite-spelled SQL in PostgreSQL's: ``%s`` placeholders, ``seq`` for ``rowid``."""
    return re.sub(r"\browid\b", "seq", sql.replace("%", "%%").replace("?", "%s"))


def _types(sql: str) -> str:
    sql = sql.replace("INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
    sql = re.sub(r"\bINTEGER\b", "BIGINT", sql)
    sql = re.sub(r"\bBLOB\b", "BYTEA", sql)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)


def postgres_schema(schema: str) -> str:
    """The store's SQLite schema in PostgreSQL's types, with an insertion-order ``seq`` column
    (and its index) in the tables read in insertion order, and without ``samples_run``: there
    ``samples_seq`` finds a run's samples in insertion order, and the primary key's prefix
    finds them by run, so that index would only cost each written sample an index entry
    (dropped from a store made before, when it is migrated)."""
    out = _types(schema).replace(_SAMPLES_RUN, "")
    for table in ORDERED_TABLES:
        out = out.replace(
            f"CREATE TABLE IF NOT EXISTS {table} (\n",
            f"CREATE TABLE IF NOT EXISTS {table} (\n    seq BIGINT GENERATED ALWAYS AS IDENTITY,\n",
        )
    return out + (
        "CREATE INDEX IF NOT EXISTS runs_seq ON runs (seq);\n"
        "CREATE INDEX IF NOT EXISTS samples_seq ON samples (run_id, seq);\n"
        "CREATE INDEX IF NOT EXISTS scores_seq ON scores (run_id, seq);\n"
        "DROP INDEX IF EXISTS samples_run;\n"
    )
