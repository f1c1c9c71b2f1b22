"""The reporting bundle and the comparison, as :mod:`aieval.report` builds them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from aieval.report import build_report, compare_runs, run_header
from aieval.store import Store

__all__ = ["BundleCache", "comparison", "report_bundle", "run_header"]

_CACHED_BUNDLES = 8


def report_bundle(store: Store, run_id: str) -> dict[str, Any]:
    """``build_report(store, run).to_dict()``; works while the run is still going."""
    return build_report(store, run_id).to_dict()


class BundleCache:
    """Reports of finished runs, kept while their status and sample count are unchanged.

    A report of 100,000 samples takes seconds to build; a finished run's report only changes
    when the run is resumed (its status or sample count then changes, and it is rebuilt).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bundles: OrderedDict[str, tuple[tuple[str, int], dict[str, Any]]] = OrderedDict()

    def forget(self, run_id: str) -> None:
        """Drop the run's bundle (its header or samples were replaced by an upload)."""
        with self._lock:
            self._bundles.pop(run_id, None)

    def get(self, store: Store, run_id: str) -> dict[str, Any]:
        """The run's bundle, built afresh for a running run or a changed one."""
        run = store.get_run(run_id)
        version = (run.status, store.count_samples(run.id))
        with self._lock:
            cached = self._bundles.get(run.id)
            if cached is not None and cached[0] == version:
                self._bundles.move_to_end(run.id)
                return cached[1]
        bundle = report_bundle(store, run.id)
        if run.status != "running":
            with self._lock:
                self._bundles[run.id] = (version, bundle)
                while len(self._bundles) > _CACHED_BUNDLES:
                    self._bundles.popitem(last=False)
        return bundle


def comparison(store: Store, baseline: str, candidate: str) -> dict[str, Any]:
    """``compare_runs(store, baseline, candidate).to_dict()``: deltas and the decision."""
    return compare_runs(store, baseline, candidate).to_dict()
