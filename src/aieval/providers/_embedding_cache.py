"""A SQLite cache of text embeddings (the ``embedding_cache`` table), beside the response cache.

An embedding depends only on the endpoint, the model and the text, so every one is cached (no
temperature to honour). The file may be the run store or the response cache's: only this table
is touched.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from aieval.errors import StoreError

__all__ = ["EmbeddingCache", "embedding_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    vector TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""

_MEMORY = ":memory:"


def embedding_key(identity: str, model: str, text: str) -> str:
    """The cache key of ``text`` embedded by ``model`` at the endpoint ``identity``."""
    canonical = json.dumps([identity, model, text], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """Embeddings by key in a SQLite file (WAL mode), or in memory with ``":memory:"``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                if str(self.path) != _MEMORY:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path, timeout=30.0, check_same_thread=False, isolation_level=None
                )
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
            except (OSError, sqlite3.Error) as exc:
                raise StoreError(f"cannot open the embedding cache {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

    def get_many(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """The cached vectors among ``keys`` (a key not cached is absent)."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        with self._lock:
            try:
                rows = (
                    self._connect()
                    .execute(
                        f"SELECT key, vector FROM embedding_cache WHERE key IN ({marks})", keys
                    )
                    .fetchall()
                )
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the embedding cache {self.path}: {exc}") from exc
        return {key: [float(x) for x in json.loads(vector)] for key, vector in rows}

    def put_many(self, model: str, vectors: dict[str, list[float]]) -> None:
        """Store ``{key: vector}`` embedded by ``model``."""
        now = time.time()
        rows = [(key, model, json.dumps(vector), now) for key, vector in vectors.items()]
        with self._lock:
            try:
                self._connect().executemany(
                    "INSERT OR REPLACE INTO embedding_cache (key, model, vector, created_at)"
                    " VALUES (?, ?, ?, ?)",
                    rows,
                )
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write the embedding cache {self.path}: {exc}") from exc

    def __len__(self) -> int:
        with self._lock:
            try:
                row = self._connect().execute("SELECT COUNT(*) FROM embedding_cache").fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the embedding cache {self.path}: {exc}") from exc
        return int(row[0])

    def close(self) -> None:
        """Close the connection (the next use reopens it)."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
