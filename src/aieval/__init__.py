"""aieval: evaluate LLM applications and agent workflows, and decide whether a version ships."""

from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval._types import Example, Score
from aieval.datasets import Dataset, load_dataset
from aieval.runner import RunResult, run, run_async
from aieval.scorers import Scorer, scorer
from aieval.store import Store

__all__ = [
    "CallRecord",
    "Dataset",
    "Example",
    "RunResult",
    "SampleRecord",
    "Score",
    "ScoreRecord",
    "Scorer",
    "Store",
    "load_dataset",
    "run",
    "run_async",
    "scorer",
]
__version__ = "0.1.0"
