"""Datasets: rows from lists, JSONL, JSON, CSV or Hugging Face ``datasets``, streamed and hashed.

:func:`load_inspect_log` imports an inspect_ai log as a dataset of recorded predictions, and
:func:`recorded_score` reads the scores inspect_ai recorded (extra ``inspect``); a log path given as
a dataset is read the same way.
"""

from aieval.datasets._dataset import Dataset, DatasetInfo, load_dataset
from aieval.datasets._inspect import inspect_log_rows, load_inspect_log, recorded_score
from aieval.datasets._inspect_rows import inspect_example
from aieval.datasets._recorded import recorded_usage
from aieval.datasets._rows import RowSpec

__all__ = [
    "Dataset",
    "DatasetInfo",
    "RowSpec",
    "inspect_example",
    "inspect_log_rows",
    "load_dataset",
    "load_inspect_log",
    "recorded_score",
    "recorded_usage",
]
