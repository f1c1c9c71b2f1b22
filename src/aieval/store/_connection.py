"""The store's SQLite connection: opening the file, bringing its schema up to date, writing."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from aieval.errors import StoreError
from aieval.store._encoding import row_from_db, to_db_row
from aieval.store._schema import COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION

__all__ = ["Connection", "default_db_path", "placeholders"]


def default_db_path() -> Path:
    """``$AIEVAL_DB`` if set, else ``./aieval.db``."""
    return Path(os.environ.get("AIEVAL_DB") or "aieval.db")


class Connection:
    """One SQLite file in WAL mode, its lock, and the schema migrated in place on opening."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._lock = threading.RLock()
        self._beat_at = 0.0
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30.0
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.row_factory = row_from_db
            self._db.executescript(SCHEMA)
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc

    def _migrate(self) -> None:
        """Bring a store written by an older version up to this schema, in place."""
        for table, columns in COLUMNS_ADDED.items():
            have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            for column, kind in columns.items():
                if column not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        with self._lock:
            try:
                self._db.execute(sql, to_db_row(args))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write to the store at {self.path}: {exc}") from exc


def placeholders(n: int) -> str:
    """``n`` SQL parameter placeholders: ``?, ?, ...``."""
    return ", ".join("?" * n)
