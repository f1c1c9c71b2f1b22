"""Reports whose intervals are all closed form take their numbers from the database's sums.

With a small ``bootstrap_max_n`` the golden fixture's runs are reported from
``Store.run_sums`` and by the record path with the same closed-form methods, on each backend:
floats equal within a relative 1e-9, everything else exactly. No value list is read back on
the sums path (``sample_columns`` and ``iter_samples`` refused while it runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.report.golden.fixture import PAIRS
from tests.support.close import differences

import aieval.report._bundle as bundle
from aieval.report import build_report
from aieval.store import Store

PLAIN = [run for kind in ("ungraded", "epochs") for run in PAIRS[kind]]
SLICES = ["topic", "nested.level"]


@pytest.fixture
def store(golden_copy: str) -> Iterator[Store]:
    built = Store(golden_copy)
    try:
        yield built
    finally:
        built.close()


def _report(store: Store, run_id: str, **settings: Any) -> Any:
    data = build_report(store, run_id, slice_by=SLICES, **settings).to_dict()
    return json.loads(json.dumps(data, sort_keys=True))


def _refused(*_: Any, **__: Any) -> Any:
    raise AssertionError("the sums path read the samples back")


def _sums_path(store: Store, monkeypatch: pytest.MonkeyPatch, run_id: str) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(Store, "sample_columns", _refused)
        patch.setattr(Store, "iter_samples", _refused)
        return _report(store, run_id, bootstrap_max_n=30)


def _record_path(store: Store, monkeypatch: pytest.MonkeyPatch, run_id: str) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr(Store, "plain_run", lambda self, run: False)
        patch.setattr(bundle, "sums_report", lambda *args: None)
        return _report(store, run_id, bootstrap_max_n=30)


def test_plain_runs_from_sums_equal_the_record_path(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for run_id in PLAIN:
        summed = _sums_path(store, monkeypatch, run_id)
        assert differences(summed, _record_path(store, monkeypatch, run_id)) == [], run_id
        # the closed forms were drawn, and the parts the fixture holds came out
        assert summed["weighted_score"]["method"] != "percentile bootstrap"
        assert summed["failure_reasons"] and summed["groups"]["slices"]["topic"]
        assert bool(summed["judges"]) == (run_id in PAIRS["ungraded"])
        assert bool(summed.get("epochs")) == (run_id in PAIRS["epochs"])


def test_below_bootstrap_max_n_the_sums_are_not_used(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    called: list[str] = []
    original = Store.run_sums

    def counted(self: Store, run_id: str, slice_by: Any = ()) -> Any:
        called.append(run_id)
        return original(self, run_id, slice_by)

    monkeypatch.setattr(Store, "run_sums", counted)
    for run_id in PLAIN:
        assert _report(store, run_id)["weighted_score"]["method"] == "percentile bootstrap"
        assert _report(store, run_id, bootstrap_max_n=30, interval_method="bootstrap")
    assert called == []
