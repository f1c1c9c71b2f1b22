"""The runner: ``run()`` / ``run_async()`` with bounded concurrency, storage and resume."""

from aieval._calls import record_call
from aieval.runner._evalfile import (
    DatasetConfig,
    EvalConfig,
    EvalSettings,
    TargetConfig,
    build_scorers,
    check_eval,
    load_eval,
    parse_eval,
    run_eval,
    telemetry_requested,
)
from aieval.runner._evaluator import EvaluatorFactory, EvaluatorRequest, SampleEvaluator
from aieval.runner._executor import Executor, Finished, LocalExecutor
from aieval.runner._imports import import_file
from aieval.runner._inputs import EXECUTORS
from aieval.runner._minimums import MissedMinimum
from aieval.runner._plaintext import plaintext_keys
from aieval.runner._ray import RayExecutor, import_ray
from aieval.runner._references import import_reference
from aieval.runner._result import Aggregator, RunResult, ScorerStats
from aieval.runner._run import ProgressCallback, check_run, run, run_async, run_spec, run_spec_async
from aieval.runner._spec import ExecutionSpec, RunSpec, ScoringSpec, StorageSpec, TargetSpec
from aieval.runner._summary import (
    CacheSummary,
    EfficiencySummary,
    EpochsSummary,
    EvaluationSummary,
    LatencySummary,
    MinimumCheck,
    MinimumsSummary,
    RunSummary,
    ScorerSummary,
    TokenSummary,
    TopError,
)

__all__ = [
    "EXECUTORS",
    "Aggregator",
    "CacheSummary",
    "DatasetConfig",
    "EfficiencySummary",
    "EpochsSummary",
    "EvalConfig",
    "EvalSettings",
    "EvaluationSummary",
    "EvaluatorFactory",
    "EvaluatorRequest",
    "ExecutionSpec",
    "Executor",
    "Finished",
    "LatencySummary",
    "LocalExecutor",
    "MinimumCheck",
    "MinimumsSummary",
    "MissedMinimum",
    "ProgressCallback",
    "RayExecutor",
    "RunResult",
    "RunSpec",
    "RunSummary",
    "SampleEvaluator",
    "ScorerStats",
    "ScorerSummary",
    "ScoringSpec",
    "StorageSpec",
    "TargetConfig",
    "TargetSpec",
    "TokenSummary",
    "TopError",
    "build_scorers",
    "check_eval",
    "check_run",
    "import_file",
    "import_ray",
    "import_reference",
    "load_eval",
    "parse_eval",
    "plaintext_keys",
    "record_call",
    "run",
    "run_async",
    "run_eval",
    "run_spec",
    "run_spec_async",
    "telemetry_requested",
]


#: Old public names: (the object now, what to say). They still work, with a warning.
_RENAMED = {
    # an eval file's settings had a model of their own; they are the run spec's fields now
    "SettingsConfig": (
        EvalSettings,
        "is now aieval.runner.EvalSettings (its fields are RunSpec's)",
    ),
}


def __getattr__(name: str) -> object:
    if name not in _RENAMED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    now, said = _RENAMED[name]
    warnings.warn(f"aieval.runner.{name} {said}", DeprecationWarning, stacklevel=2)
    return now
