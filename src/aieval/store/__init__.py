"""The run store: every run, sample, score and model call, in an SQLite file or PostgreSQL."""

from aieval.store._location import StoreLocation, default_location, parse_location
from aieval.store._runs import RUN_ID_SHAPE, is_run_id
from aieval.store._store import (
    BaselineChoice,
    CalibrationRow,
    RunRow,
    Store,
    default_db_path,
    new_run_id,
)
from aieval.store._transfer import (
    Checked,
    ImportOutcome,
    RunHolding,
    StoredCall,
    StoredSample,
    StoredScore,
    holding_digest,
    not_yours_message,
)

__all__ = [
    "RUN_ID_SHAPE",
    "BaselineChoice",
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
    "is_run_id",
    "new_run_id",
    "not_yours_message",
    "parse_location",
]
