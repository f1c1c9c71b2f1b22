"""The run store: every run, sample, score and model call in one SQLite file."""

from aieval.store._store import CalibrationRow, RunRow, Store, default_db_path, new_run_id
from aieval.store._transfer import (
    ImportOutcome,
    RunHolding,
    StoredCall,
    StoredSample,
    StoredScore,
)

__all__ = [
    "CalibrationRow",
    "ImportOutcome",
    "RunHolding",
    "RunRow",
    "Store",
    "StoredCall",
    "StoredSample",
    "StoredScore",
    "default_db_path",
    "new_run_id",
]
