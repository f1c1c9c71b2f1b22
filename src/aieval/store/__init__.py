"""The run store: every run, sample, score and model call in one SQLite file."""

from aieval.store._store import CalibrationRow, RunRow, Store, default_db_path, new_run_id

__all__ = ["CalibrationRow", "RunRow", "Store", "default_db_path", "new_run_id"]
