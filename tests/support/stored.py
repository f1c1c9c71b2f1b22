"""What a test's SQLite store holds, read straight from the file (a run may still be writing)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


def stored_samples(db: Path) -> int:
    """Samples stored in ``db`` so far; 0 while the file or its tables do not exist yet."""
    try:
        with closing(sqlite3.connect(db)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
