"""The reporting bundle and the comparison, as :mod:`aieval.report` builds them."""

from __future__ import annotations

from typing import Any

from aieval.report import build_report, compare_runs
from aieval.store import RunRow, Store

__all__ = ["comparison", "report_bundle", "run_header"]


def report_bundle(store: Store, run_id: str) -> dict[str, Any]:
    """``build_report(store, run).to_dict()``; works while the run is still going."""
    return build_report(store, run_id).to_dict()


def comparison(store: Store, baseline: str, candidate: str) -> dict[str, Any]:
    """``compare_runs(store, baseline, candidate).to_dict()``: deltas and the decision."""
    return compare_runs(store, baseline, candidate).to_dict()


def run_header(run: RunRow) -> dict[str, Any]:
    """A run's header, as in the bundle's ``run`` key."""
    started, finished = run.started_at, run.finished_at
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
        "started_at": started,
        "finished_at": finished,
        "duration_s": finished - started if started is not None and finished is not None else None,
        "git_sha": run.git_sha,
        "workflow": {k: workflow.get(k) for k in ("id", "version", "profile")}
        if isinstance(workflow, dict)
        else None,
    }
