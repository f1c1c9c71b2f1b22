"""The reporting bundle and the comparison, as :mod:`aieval.report` builds them."""

from __future__ import annotations

from typing import Any

from aieval.report import build_report, compare_runs, run_header
from aieval.store import Store

__all__ = ["comparison", "report_bundle", "run_header"]


def report_bundle(store: Store, run_id: str) -> dict[str, Any]:
    """``build_report(store, run).to_dict()``; works while the run is still going."""
    return build_report(store, run_id).to_dict()


def comparison(store: Store, baseline: str, candidate: str) -> dict[str, Any]:
    """``compare_runs(store, baseline, candidate).to_dict()``: deltas and the decision."""
    return compare_runs(store, baseline, candidate).to_dict()
