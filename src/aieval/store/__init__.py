"""The run store: every run, sample, score and model call, in an SQLite file or PostgreSQL."""

from aieval.store._location import StoreLocation, default_location, parse_location
from aieval.store._store import CalibrationRow, RunRow, Store, default_db_path, new_run_id
from aieval.store._transfer import (
    Checked,
    ImportOutcome,
    RunHolding,
    StoredCall,
    StoredSample,
    StoredScore,
    holding_digest,
)

__all__ = [
    "CalibrationRow",
    "Checked",
    "ImportOutcome",
    "RunHolding",
    "RunRow",
    "Store",
    "StoreLocation",
    "StoredCall",
    "StoredSample",
    "StoredScore",
    "default_db_path",
    "default_location",
    "holding_digest",
    "new_run_id",
    "parse_location",
]
