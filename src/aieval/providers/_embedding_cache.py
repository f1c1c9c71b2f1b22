"""A cache of text embeddings (the ``embedding_cache`` table), beside the response cache.

An embedding depends only on the endpoint, the model and the text, so every one is cached (no
temperature to honour). The file may be the run store or the response cache's: only this table
is touched.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path

from aieval.store import SideTable, StoreLocation

__all__ = ["EmbeddingCache", "embedding_key"]


def embedding_key(identity: str, model: str, text: str) -> str:
    """The cache key of ``text`` embedded by ``model`` at the endpoint ``identity``."""
    canonical = json.dumps([identity, model, text], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """Embeddings by key in a store's database (an SQLite file, ``":memory:"``, or a
    ``postgresql://`` URL)."""

    def __init__(self, path: str | Path | StoreLocation) -> None:
        self._table = SideTable(path, "embedding_cache", "embedding cache")
        self.location = self._table.location
        #: the SQLite file (``None`` for a PostgreSQL database)
        self.path = self.location.path

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.location)!r})"

    def get_many(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """The cached vectors among ``keys`` (a key not cached is absent)."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self._table.query(
            f"SELECT key, vector FROM embedding_cache WHERE key IN ({marks})", list(keys)
        )
        return {key: [float(x) for x in json.loads(vector)] for key, vector in rows}

    def put_many(self, model: str, vectors: dict[str, list[float]]) -> None:
        """Store ``{key: vector}`` embedded by ``model``."""
        now = time.time()
        rows = [(key, model, json.dumps(vector), now) for key, vector in vectors.items()]
        self._table.executemany(
            "INSERT INTO embedding_cache (key, model, vector, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET model = excluded.model, vector = excluded.vector,"
            " created_at = excluded.created_at",
            rows,
        )

    def __len__(self) -> int:
        rows = self._table.query("SELECT COUNT(*) FROM embedding_cache")
        return int(rows[0][0])

    def close(self) -> None:
        """Close the connection (the next use reopens it)."""
        self._table.close()
