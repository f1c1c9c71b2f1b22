"""The run store: every run, sample, score and model call in one SQLite file."""

from aieval.store._store import RunRow, Store, default_db_path

__all__ = ["RunRow", "Store", "default_db_path"]
