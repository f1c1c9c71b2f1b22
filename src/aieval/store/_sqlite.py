"""The SQLite backend: one file in WAL mode."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Any

from aieval.store._backend import PAGE, Backend, Insert, PageSink
from aieval.store._encoding import from_db, row_from_db, to_db_row
from aieval.store._location import StoreLocation
from aieval.store._schema import FILLS, fill_config_columns, table_names, up_to_date

__all__ = ["ROWS_A_STATEMENT", "SqliteBackend"]

#: The most rows one ``INSERT`` statement of :meth:`SqliteBackend.insert_rows` holds (fewer
#: where SQLite's limit on bound values asks: 32,766 since 3.32, 999 before).
ROWS_A_STATEMENT = 512


#: The longest text written into a statement as a literal (a longer one is bound: a literal
#: is repeated in each of a statement's rows, and a statement's text has a size limit).
LITERAL_CHARS = 200


def _literal(value: Any) -> str | None:
    """``value`` as an SQL literal that stores exactly what binding it would (``None``: none
    does: a float, whose text SQLite may read back a bit off, an integer beyond 64 bits, bytes,
    a text beyond ASCII or longer than :data:`LITERAL_CHARS`)."""
    if value is None:
        return "NULL"
    if type(value) is int and -(2**63) <= value < 2**63:  # SQLite reads a longer one as REAL
        return str(value)
    if (
        type(value) is str
        and len(value) <= LITERAL_CHARS
        and value.isascii()
        and "\x00" not in value
    ):
        return "'" + value.replace("'", "''") + "'"
    return None


class SqliteBackend(Backend):
    """An SQLite file (WAL, foreign keys on); a string UTF-8 cannot hold is stored as bytes."""

    errors = (sqlite3.Error,)
    no_limit = -1
    for_update = ""

    def __init__(self, location: StoreLocation) -> None:
        super().__init__(location)
        assert location.path is not None
        path = location.path
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error:
            self._db.close()
            raise
        self._db.row_factory = row_from_db

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._run(sql, args).fetchall()

    def pages(self, sql: str, args: Sequence[Any], consume: PageSink, size: int = PAGE) -> None:
        cursor = self._db.cursor()
        cursor.row_factory = None  # plain tuples: texts are decoded by the reader, if read
        try:
            try:
                cursor.execute(sql, args)
            except UnicodeEncodeError:  # refused while binding, before the statement ran
                cursor.execute(sql, to_db_row(args))
            while page := cursor.fetchmany(size):
                consume(page)
        finally:
            cursor.close()

    def text(self, value: Any) -> Any:
        return from_db(value)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        self._run(sql, args)

    def _run(self, sql: str, args: Sequence[Any]) -> sqlite3.Cursor:
        """``sql`` run with ``args``; a string UTF-8 cannot hold is bound as its bytes.

        sqlite3 refuses such a string while binding, before the statement runs, so the values
        are tried as they are first (nearly always right) instead of each one being tested.
        """
        try:
            return self._db.execute(sql, args)
        except UnicodeEncodeError:
            return self._db.execute(sql, to_db_row(args))

    def insert_rows(self, insert: Insert) -> None:
        # Rows go as multi-row ``INSERT ... VALUES (...), (...)`` statements of up to
        # :data:`ROWS_A_STATEMENT` rows: SQLite then inserts a statement's rows in one step of
        # its own (no Python call per row, and the interpreter is free meanwhile: a run's
        # writer thread stores a batch while the run scores the next). sqlite3 binds every value
        # before the statement runs, so a string UTF-8 cannot hold (refused while binding)
        # leaves that statement's rows unwritten, and it goes again with them as bytes.
        # A fixed column's value is written into the statement as a literal where it is one
        # (NULL, an integer, a plain ASCII text) instead of bound in every row: each bound
        # value costs the interpreter about a quarter of a microsecond.
        found = [_literal(value) for _, value in insert.fixed]
        literals = [text for text in found if text is not None]
        if len(literals) < len(found):
            insert, literals = insert.expanded(), []
        rows = insert.rows
        if not rows:
            return
        width = len(insert.columns)
        limit = self._db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        per = max(1, min(ROWS_A_STATEMENT, limit // width))
        size = -(-len(rows) // -(-len(rows) // per))  # statements of nearly equal size
        names = (*insert.columns, *(name for name, _ in insert.fixed))
        head = f"INSERT INTO {insert.table} ({', '.join(names)}) VALUES "
        one = f"({', '.join(['?'] * width + literals)})"
        for start in range(0, len(rows), size):
            part = rows[start : start + size]
            sql = head + ", ".join([one] * len(part))
            try:
                self._db.execute(sql, list(chain.from_iterable(part)))
            except UnicodeEncodeError:
                self._db.execute(sql, list(chain.from_iterable(map(to_db_row, part))))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """``sql`` over ``rows``, all or none of them; a string UTF-8 cannot hold is bound as
        its bytes.

        The rows are tried as they are (testing each value costs more than the insert's own
        binding). sqlite3 refuses such a string while binding its row, after the rows before
        it were inserted: a savepoint takes those back, and the batch goes again converted.
        """
        db = self._db
        db.execute("SAVEPOINT batch_rows")
        try:
            try:
                db.executemany(sql, rows)
            except UnicodeEncodeError:
                db.execute("ROLLBACK TO batch_rows")
                db.executemany(sql, [to_db_row(row) for row in rows])
        except BaseException:
            # SQLite may have ended the transaction itself (a full disk does)
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK TO batch_rows")
                db.execute("RELEASE batch_rows")
            raise
        db.execute("RELEASE batch_rows")

    @contextlib.contextmanager
    def transaction(self, *, exclusive: bool = False) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE" if exclusive else "BEGIN")
        try:
            yield
        except BaseException:
            # SQLite may already have rolled back (a full disk does); nothing is half-written
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def create_schema(self, schema: str, added: dict[str, dict[str, str]], version: int) -> None:
        have_tables = {
            row[0]
            for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        found = None
        if "meta" in have_tables:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            found = None if row is None else str(row[0])
        if up_to_date(found, version) and have_tables.issuperset(table_names(schema)):
            return  # current: no DDL
        self._db.executescript(schema)
        for table, columns in added.items():
            have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            for column, kind in columns.items():
                if column not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        now = time.time()
        for sql in FILLS:
            self._db.execute(sql, (now,) * sql.count("?"))
        fill_config_columns(self.query, self.executemany)
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(version),),
        )

    def has_table(self, name: str) -> bool:
        found = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return found is not None

    def create_table(self, ddl: str) -> None:
        self._db.execute(ddl)

    def close(self) -> None:
        self._db.close()
