"""An SQLite store file that someone else made (a CI artifact, a download), opened to be read
and nothing more.

Such a file is data, never code: its schema could hold a view that runs an endless recursive
query when the store reads ``scores``, a trigger, or a generated column. So the file is opened
read-only and ``immutable`` (no lock, nothing written beside it) with ``query_only`` and
``trusted_schema`` off, every query is stopped after a time limit (``set_progress_handler``),
and before anything is read its schema must be aieval's own: every object in ``sqlite_master``
is a table or an index of :data:`~aieval.store._schema.SCHEMA` (with those tables' own
columns, none generated) or SQLite's index of a primary key. Anything else (a view, a trigger,
a virtual table, another table or index) is a :class:`StoreError` naming the file and the
object. Then every value must be of the type aieval writes (see
:mod:`aieval.store._untrusted_values`), so no reader meets one it cannot decode.

A write-ahead log beside the file (``<file>-wal``, part of the store a writer had not yet
checkpointed) is read from a private copy: the file and its log are copied into a private
temporary folder and checkpointed there, so SQLite's ``-shm`` is made in that folder, never
beside the artifact. A log SQLite would silently ignore (not SQLite's header, another page
size, no committed transaction) is refused, naming it.

A store at an older schema version is read from a private copy, migrated there as aieval
migrates its own stores (its schema checked first, so the migration runs only aieval's DDL).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
import sqlite3
import struct
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aieval.errors import StoreError, UntrustedStoreError
from aieval.store._backend import PAGE, PageSink
from aieval.store._encoding import row_from_db
from aieval.store._location import StoreLocation
from aieval.store._schema import COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION, up_to_date
from aieval.store._sqlite import SqliteBackend
from aieval.store._untrusted_values import check_values

__all__ = ["UNTRUSTED_QUERY_SECONDS", "UntrustedSqliteBackend"]

#: How long one query on a store aieval did not create may run (a page of a long read counts
#: as one query): far more than any query of a store aieval wrote needs.
UNTRUSTED_QUERY_SECONDS = 20.0
# SQLite's virtual machine steps between two looks at the clock
_STEPS = 10_000


class UntrustedSqliteBackend(SqliteBackend):
    """A read-only connection to an SQLite store file aieval did not create: its schema checked
    on opening, each query stopped after ``seconds``; every write is refused."""

    def __init__(
        self, location: StoreLocation, *, seconds: float = UNTRUSTED_QUERY_SECONDS
    ) -> None:
        assert location.path is not None
        self.location = location
        self._seconds = seconds
        self._deadline = math.inf
        self._copy: Path | None = None
        self._folder: Path | None = None
        path = location.path
        if not path.is_file():
            raise UntrustedStoreError(
                f"no store at {path}: a baseline store must be an existing file"
            )
        # immutable: no lock and no -shm file made beside it; a write-ahead log beside it holds
        # part of the store, read from a private copy (a -shm would be made beside the log)
        wal = location.sibling("-wal")
        source = path.resolve()
        try:
            if wal is not None and wal.is_file() and wal.stat().st_size:
                source = self._checkpointed_copy(path, wal)
            self._db = _connect(f"file:{quote(str(source))}?mode=ro&immutable=1", uri=True)
        except BaseException:
            self.close()
            raise
        try:
            self._guard()
            with self._limit():
                check_schema(self._db, path)
            try:
                current = up_to_date(self._version(), SCHEMA_VERSION)
            except StoreError as exc:
                raise UntrustedStoreError(f"{path}: {exc}") from None
            if not current:
                self._migrated_copy()
            check_values(self._db, path, self._limit)
            self._db.execute("PRAGMA query_only=ON")
        except BaseException:
            self.close()
            raise
        self._db.row_factory = row_from_db

    def _checkpointed_copy(self, path: Path, wal: Path) -> Path:
        """The store and its write-ahead log ``wal`` copied into a private temporary folder and
        checkpointed there: the copy holds the whole store, nothing is made beside ``path``.

        Raises:
            StoreError: the log is one SQLite would ignore, naming it.
        """
        _check_wal_header(path, wal)
        self._folder = Path(tempfile.mkdtemp(prefix="aieval-baseline-"))
        copy = self._folder / "store.db"
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, self._folder / "store.db-wal")
        db = _connect(str(copy))
        self._db = db
        try:
            self._guard()
            with self._limit():
                # PASSIVE says how many frames the log held; TRUNCATE empties it (and says 0)
                busy, frames, _ = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.close()
        if busy or frames <= 0:
            raise UntrustedStoreError(
                f"the write-ahead log beside {path} ({wal}) holds no transaction SQLite can "
                "read: remove it, or give the store as it was written"
            )
        return copy

    def _guard(self) -> None:
        self._db.execute("PRAGMA trusted_schema=OFF")
        self._db.execute("PRAGMA cell_size_check=ON")  # a corrupt page is an error, early
        self._db.set_progress_handler(self._expired, _STEPS)

    def _expired(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def _version(self) -> str | None:
        with self._limit():
            try:
                sql = "SELECT value FROM meta WHERE key = 'schema_version'"
                row = self._db.execute(sql).fetchone()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                row = None  # no meta table: not a store
        if row is None:
            raise UntrustedStoreError(
                f"{self.location.path} is not an aieval store: it records no version"
            )
        return str(row[0])

    def _migrated_copy(self) -> None:
        """Read from a private copy brought to this version (the original is never written)."""
        fd, name = tempfile.mkstemp(prefix="aieval-baseline-", suffix=".db")
        os.close(fd)
        self._copy = Path(name)
        copy = _connect(str(self._copy))
        try:
            with self._limit():
                self._db.backup(copy)
        except BaseException:
            copy.close()
            raise
        self._db.close()
        self._db = copy
        self._guard()
        with self._limit():
            SqliteBackend.create_schema(self, SCHEMA, COLUMNS_ADDED, SCHEMA_VERSION)

    @contextlib.contextmanager
    def _limit(self) -> Iterator[None]:
        """Stop the statements run inside after ``seconds``, with an error saying so."""
        self._deadline = time.monotonic() + self._seconds
        try:
            yield
        except sqlite3.OperationalError as exc:
            if time.monotonic() <= self._deadline:
                raise
            raise sqlite3.OperationalError(
                f"a query ran over {self._seconds:g} s, the limit on a store aieval did not "
                f"create ({self.location.path}); is it a store `aieval run` wrote?"
            ) from exc
        finally:
            self._deadline = math.inf

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._limit():
            return super().query(sql, args)

    def pages(self, sql: str, args: Sequence[Any], consume: PageSink, size: int = PAGE) -> None:
        def limited(page: list[tuple[Any, ...]]) -> None:
            consume(page)
            self._deadline = time.monotonic() + self._seconds  # the next page's own time

        with self._limit():
            super().pages(sql, args, limited, size)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> None:
        raise sqlite3.OperationalError(f"{self.location.path} is opened read-only")

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise sqlite3.OperationalError(f"{self.location.path} is opened read-only")

    def create_schema(self, schema: str, added: dict[str, dict[str, str]], version: int) -> None:
        """Nothing: the schema was checked on opening, and this store is never written."""

    def create_table(self, ddl: str) -> None:
        raise sqlite3.OperationalError(f"{self.location.path} is opened read-only")

    def close(self) -> None:
        db: sqlite3.Connection | None = getattr(self, "_db", None)  # absent if opening failed
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()
        if self._copy is not None:
            self._copy.unlink(missing_ok=True)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


#: A write-ahead log's first 32 bytes: magic (its low bit: big-endian checksums), format
#: version, page size, checkpoint sequence, two salts, and the checksum of the first 24 bytes.
_WAL_HEADER = struct.Struct(">8I")
_WAL_MAGIC = 0x377F0682
_WAL_VERSION = 3007000


def _check_wal_header(path: Path, wal: Path) -> None:
    """Refuse a write-ahead log whose header SQLite would not read (and so silently ignore).

    Raises:
        StoreError: naming the log and what is wrong with it.
    """
    with wal.open("rb") as f:
        head = f.read(_WAL_HEADER.size)
    with path.open("rb") as f:
        db_head = f.read(100)
    problem = None
    if len(head) < _WAL_HEADER.size:
        problem = "it is shorter than a log's header"
    else:
        magic, version, page, _, _, _, sum0, sum1 = _WAL_HEADER.unpack(head)
        db_page = int.from_bytes(db_head[16:18], "big") if len(db_head) == 100 else 0
        if magic & ~1 != _WAL_MAGIC or version != _WAL_VERSION:
            problem = "it is not an SQLite write-ahead log"
        elif _wal_checksum(head[:24], big=bool(magic & 1)) != (sum0, sum1):
            problem = "its header's checksum is wrong"
        elif page != (65536 if db_page == 1 else db_page):
            problem = f"its page size ({page}) is not the store's"
    if problem is not None:
        raise UntrustedStoreError(
            f"the write-ahead log beside {path} ({wal}) cannot be read: {problem}. SQLite would "
            "ignore it and read an older store; remove it, or give the store as it was written"
        )


def _wal_checksum(data: bytes, *, big: bool) -> tuple[int, int]:
    """SQLite's checksum of a write-ahead log's header (its words in the byte order given)."""
    words = struct.unpack(f"{'>' if big else '<'}{len(data) // 4}I", data)
    s0 = s1 = 0
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a schema that is not aieval's: a view, a trigger, a virtual table, a table or
    index aieval does not create, a column it does not know, or a generated one.

    Raises:
        StoreError: naming ``path`` and the first object that is not aieval's.
    """
    tables, indexes = _reference()
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    for kind, name, table, sql in rows:
        problem = _problem(db, str(kind), str(name), str(table), sql, tables, indexes)
        if problem is not None:
            raise UntrustedStoreError(
                f"{path} is not a store aieval wrote: {problem}. A store made elsewhere is "
                "read only when it holds aieval's own tables and indexes; make the baseline "
                "with `aieval run` (or `aieval push` it to a fresh store)"
            )


def _problem(
    db: sqlite3.Connection,
    kind: str,
    name: str,
    table: str,
    sql: Any,
    tables: dict[str, frozenset[str]],
    indexes: dict[str, str],
) -> str | None:
    shown = f"{kind} {name!r}"
    if kind == "table":
        if name not in tables:
            return f"it holds {shown}, which aieval does not create"
        if not isinstance(sql, str) or not sql.lstrip().upper().startswith("CREATE TABLE"):
            return f"its {shown} is not a plain table"
        for column in db.execute(f'PRAGMA table_xinfo("{name}")').fetchall():
            if column[1] not in tables[name]:
                return f"its {shown} has a column {column[1]!r} that aieval does not create"
            if column[6]:
                return f"its {shown} has a generated or hidden column {column[1]!r}"
        return None
    if kind == "index":
        if sql is None and name.startswith(f"sqlite_autoindex_{table}_") and table in tables:
            return None  # SQLite's own index of a primary key or a unique column
        if indexes.get(name) != _normal(sql):
            return f"it holds {shown}, which aieval does not create as it is"
        return None
    return f"it holds {shown}: aieval stores have no {kind}s"


@functools.cache
def _reference() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    """aieval's tables (with every column any version had) and its indexes' SQL."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        tables = {}
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = {row[1] for row in db.execute(f'PRAGMA table_xinfo("{name}")')}
            tables[name] = frozenset(columns | set(COLUMNS_ADDED.get(name, {})))
        indexes = {
            name: _normal(sql)
            for name, sql in db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
    finally:
        db.close()
    return tables, indexes


def _normal(sql: Any) -> str:
    return " ".join(str(sql).split()) if isinstance(sql, str) else ""


def _connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(target, uri=uri, check_same_thread=False, isolation_level=None)
