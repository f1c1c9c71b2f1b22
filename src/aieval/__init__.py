"""aieval: evaluate LLM applications and agent workflows, and decide whether a version ships.

Public names are imported on first use, so ``import aieval`` stays fast.
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports
from aieval._version import __version__ as __version__

if TYPE_CHECKING:
    from aieval._records import CallRecord, SampleRecord, ScoreRecord
    from aieval._types import Example, Score
    from aieval.datasets import Dataset, load_dataset
    from aieval.runner import RunResult, RunSummary, run, run_async
    from aieval.scorers import Scorer, scorer, trajectory_match
    from aieval.store import Store

__all__ = [
    "CallRecord",
    "Dataset",
    "Example",
    "ModelPrice",
    "RunResult",
    "RunSummary",
    "SampleRecord",
    "Score",
    "ScoreRecord",
    "Scorer",
    "Store",
    "load_dataset",
    "run",
    "run_async",
    "scorer",
    "trajectory_match",
]

_EXPORTS = {
    "CallRecord": "aieval._records",
    "SampleRecord": "aieval._records",
    "ScoreRecord": "aieval._records",
    "Example": "aieval._types",
    "ModelPrice": "aieval._usage_figures",
    "Score": "aieval._types",
    "Dataset": "aieval.datasets",
    "load_dataset": "aieval.datasets",
    "RunResult": "aieval.runner",
    "RunSummary": "aieval.runner",
    "run": "aieval.runner",
    "run_async": "aieval.runner",
    "Scorer": "aieval.scorers",
    "scorer": "aieval.scorers",
    "trajectory_match": "aieval.scorers",
    "Store": "aieval.store",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
