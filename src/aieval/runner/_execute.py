"""Executing a run: prepare it, drive its samples through its executor, record how it ended."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from aieval._endpoint import RunEndpoint, enter_endpoint, leave_endpoint
from aieval._records import SampleRecord
from aieval._secrets import redact_text
from aieval._types import Example
from aieval.core import ObserverOptions
from aieval.errors import ConfigError
from aieval.runner._columnar import ChunkGrader, columnar_refusal
from aieval.runner._driver import drive, finish
from aieval.runner._endpoints import run_endpoint
from aieval.runner._executor import Executor, LocalExecutor
from aieval.runner._inputs import LiveParts
from aieval.runner._minimums import minimums_summary
from aieval.runner._observers import load_observers, run_start
from aieval.runner._prepare import Prepared, prepare, start
from aieval.runner._ray import RayExecutor, import_ray
from aieval.runner._remote import remote_samples
from aieval.runner._result import Aggregator, RunResult
from aieval.runner._sample import SampleProcessor
from aieval.runner._spec import ExecutionSpec, RunSpec
from aieval.runner._summary import RunSummary
from aieval.runner._target import RecordedTarget
from aieval.runner._tracing import telemetry_wanted
from aieval.runner._writer import HOLD_FROM, RECORDED_HOLD
from aieval.store import PlainSamples, Store

__all__ = ["execute"]

log = logging.getLogger("aieval")


async def execute(spec: RunSpec, live: LiveParts) -> RunResult:
    """Prepare the run, drive its samples through its executor, and record how it ended."""
    started = time.perf_counter()
    started_wall = time.time()
    traced = telemetry_wanted(spec.execution.telemetry, live.tracer_provider)
    # before anything is stored: an observer may refuse the run (e.g. a missing extra)
    observers = load_observers(ObserverOptions(traced, live.tracer_provider), live.observers)
    executor, remote = _executor(spec.execution, live.executor)
    prep = prepare(spec, live)
    processor = SampleProcessor(
        prep.scorers,
        prep.target,
        model=spec.target.model,
        pass_threshold=spec.scoring.pass_threshold,
        evaluator=prep.evaluator,
        grader=spec.scoring.grader,
        secrets=prep.secrets,
        prices=spec.target.prices,
    )
    # on Ray, workers build their own processor from the spec (refused here if they cannot)
    work = remote_samples(prep, live) if remote else processor
    start(prep)
    if observers:
        observers.start(run_start(prep, started_wall))
    status, error = "completed", None
    endpoint = enter_endpoint(_endpoint_of(spec, live, prep.db))
    kept = None
    try:
        kept = await drive(
            prep,
            executor,
            work,
            progress=live.progress,
            observers=observers,
            redact_values=remote,
            feed=None if remote else processor.feed,
            hold=_hold(prep, remote),
            inline=_inline(processor, executor, remote),
            columnar=_columnar(processor, prep, executor, remote),
        )
    except (asyncio.CancelledError, KeyboardInterrupt):
        status, error = "interrupted", "interrupted before every sample finished"
        raise
    except BaseException as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        leave_endpoint(endpoint)
        await processor.aclose()
        summary = prep.aggregator.summary()
        scoring = spec.scoring
        minimums = minimums_summary(summary, scoring.min_pass_rate, scoring.min_scores)
        if minimums is not None:
            summary = summary.replace(minimums=minimums)
        stored = summary.to_dict()
        if prep.db is not None:
            error = redact_text(error, prep.secrets) if error else error
            finish(prep.db, prep.run_id, status, stored, error)
        observers.finish(status, stored, error)
    return _result(prep, status, summary, time.perf_counter() - started, kept)


def _executor(execution: ExecutionSpec, given: Executor | None) -> tuple[Executor, bool]:
    """Where the samples run (``given``, else the execution sub-spec's executor), and whether
    that is on Ray workers (the spec is shipped)."""
    if execution.ray_address is not None and execution.executor != "ray":
        raise ConfigError("ray_address: applies to executor='ray' only; add executor='ray'")
    if given is not None:
        remote = isinstance(given, RayExecutor)
        if remote:
            import_ray()
        return given, remote
    if execution.executor == "ray":
        import_ray()  # the install hint, before anything is opened or stored
        return RayExecutor(address=execution.ray_address), True
    # a buffer as deep as the concurrency: each store commit takes up to twice as many
    return LocalExecutor(execution.concurrency, buffer=execution.concurrency), False


def _result(
    prep: Prepared,
    status: str,
    summary: RunSummary,
    duration_s: float,
    kept: list[Any] | None,
) -> RunResult:
    metrics = {name: stats.mean for name, stats in summary.scorers.items()}
    return RunResult(
        id=prep.run_id,
        name=prep.spec.name,
        status=status,
        model=prep.spec.target.model,
        provider=prep.provider_name,
        dataset_hash=prep.info.version,
        metrics=metrics,
        pass_rate=summary.pass_rate,
        summary=summary,
        duration_s=duration_s,
        max_error_rate=prep.spec.scoring.max_error_rate,
        execution_changes=list(prep.execution_changes),
        _store=prep.db,
        _samples=kept,
    )


def _inline(
    processor: SampleProcessor, executor: Executor, remote: bool
) -> Callable[[tuple[int, Example]], SampleRecord | None] | None:
    """The processor's maker of recorded samples' records, for a run of recorded predictions
    batch-scored in this process by the runner's own executor (one the caller gave keeps
    every sample)."""
    if remote or processor.prescorer is None or type(executor) is not LocalExecutor:
        return None
    return processor.recorded


def _columnar(
    processor: SampleProcessor, prep: Prepared, executor: Executor, remote: bool
) -> Callable[[list[tuple[int, Example]]], PlainSamples | None] | None:
    """The maker of a chunk's plain samples as columns, for a run whose recorded samples
    :func:`_inline` finishes and nothing of which needs each sample on its own (see
    :mod:`aieval.runner._columnar`); ``None``, with the reason in the debug log, otherwise."""
    if _inline(processor, executor, remote) is None:
        return None
    why = columnar_refusal(processor)
    if why is None and (type(prep.aggregator) is not Aggregator or prep.spec.epochs > 1):
        why = "the run tallies more than the plain summary (epochs, a workflow evaluation)"
    if why is not None:
        log.debug("recorded samples take the per-sample path: %s", why)
        return None
    return ChunkGrader(processor)


def _endpoint_of(spec: RunSpec, live: LiveParts, db: Store | None) -> RunEndpoint:
    """What judges without their own endpoint inherit from this run."""
    return run_endpoint(spec, str(db.location) if db else None, named=live.provider is None)


def _hold(prep: Prepared, remote: bool) -> int:
    """How many samples may share a commit: :data:`RECORDED_HOLD` for a large run of recorded
    predictions in this process (thousands finish a second), else 1 (each event-loop step)."""
    large = prep.info.count * prep.spec.epochs >= HOLD_FROM
    return RECORDED_HOLD if large and not remote and isinstance(prep.target, RecordedTarget) else 1
