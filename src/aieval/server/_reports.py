"""The reporting bundle and the comparison, from :mod:`aieval.report` when it is installed."""

from __future__ import annotations

import importlib
from typing import Any

from aieval.store import RunRow, Store

__all__ = ["comparison", "report_bundle", "run_header"]


def report_bundle(store: Store, run_id: str) -> dict[str, Any]:
    """``build_report(store, run).to_dict()``; works while the run is still going."""
    report = _report_module()
    if report is not None:
        bundle: dict[str, Any] = report.build_report(store, run_id).to_dict()
        return bundle
    run = store.get_run(run_id)
    samples, passed = store.pass_counts(run.id)
    return {
        "kind": "report",
        "schema_version": 1,
        "run": run_header(run),
        "samples": samples,
        "pass_rate": {
            "estimate": passed / samples if samples else None,
            "passed": passed,
            "n": samples,
        },
        "warnings": ["aieval.report is not available: this bundle holds the run header only"],
    }


def comparison(store: Store, baseline: str, candidate: str) -> dict[str, Any]:
    """``compare_runs(store, baseline, candidate).to_dict()``: deltas and the decision."""
    report = _report_module()
    if report is not None:
        result: dict[str, Any] = report.compare_runs(store, baseline, candidate).to_dict()
        return result
    return {
        "kind": "comparison",
        "schema_version": 1,
        "baseline": run_header(store.get_run(baseline)),
        "candidate": run_header(store.get_run(candidate)),
        "decision": None,
        "warnings": ["aieval.report is not available: no comparison was computed"],
    }


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


def _report_module() -> Any:
    # aieval.report is optional here so the server works (with smaller bundles) without it
    try:
        return importlib.import_module("aieval.report")
    except ImportError:
        return None
