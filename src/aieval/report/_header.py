"""The run header shared by reports and comparisons, and small JSON helpers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aieval.errors import RunNotFoundError
from aieval.report._intervals import WILSON
from aieval.stats import wilson_interval
from aieval.store import RunRow, Store

__all__ = ["pass_rate", "resolve_run", "run_header"]

#: Bumped when a key of a report or comparison dict changes meaning or disappears.
SCHEMA_VERSION = 1


def resolve_run(store: Store, run: str | RunRow, *, exclude: str | None = None) -> RunRow:
    """The stored run for ``run`` (an id, id prefix, name, or a :class:`RunRow`)."""
    if isinstance(run, RunRow):
        return run
    if not isinstance(run, str) or not run:
        raise RunNotFoundError(f"a run reference must be a run id or name, got {run!r}")
    return store.get_run(run, exclude=exclude)


def run_header(run: RunRow) -> dict[str, Any]:
    """The ``run`` block of a report: identity, model, dataset, timing and workflow."""
    duration = None
    if run.started_at is not None and run.finished_at is not None:
        duration = max(0.0, run.finished_at - run.started_at)
    workflow = run.config.get("workflow")
    return {
        "id": run.id,
        "name": run.name,
        "status": run.status,
        "model": run.model,
        "provider": run.provider,
        "dataset": run.dataset,
        "dataset_hash": run.dataset_hash,
        "n_examples": run.n_examples,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "duration_s": duration,
        "git_sha": run.git_sha,
        "workflow": _workflow(workflow) if isinstance(workflow, Mapping) else None,
    }


def pass_rate(passed: int, n: int, confidence: float) -> dict[str, Any]:
    """``{"estimate", "low", "high", "passed", "n", "method"}`` with a Wilson interval at any
    size (nulls when n=0)."""
    if n == 0:
        return {"estimate": None, "low": None, "high": None, "passed": 0, "n": 0, "method": None}
    ci = wilson_interval(passed, n, confidence=confidence)
    return {
        "estimate": ci.estimate,
        "low": ci.low,
        "high": ci.high,
        "passed": passed,
        "n": n,
        "method": WILSON,
    }


def _workflow(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": config.get("id"),
        "version": config.get("version"),
        "profile": config.get("profile"),
    }
