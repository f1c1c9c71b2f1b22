"""The run store: every run, sample, score and model call, in an SQLite file or PostgreSQL."""

from aieval.store._location import StoreLocation, default_location, parse_location
from aieval.store._store import CalibrationRow, RunRow, Store, default_db_path, new_run_id

__all__ = [
    "CalibrationRow",
    "RunRow",
    "Store",
    "StoreLocation",
    "default_db_path",
    "default_location",
    "new_run_id",
    "parse_location",
]
