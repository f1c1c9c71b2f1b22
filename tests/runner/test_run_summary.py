"""The run summary is a frozen typed object: read by attribute, stored as the same JSON as
before, built tolerantly from any stored summary, and still readable by key with a warning."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import aieval
from aieval import Store, run
from aieval.runner import RunSummary
from aieval.scorers import exact_match, token_f1

ROWS = [{"id": f"r{i}", "prompt": "p", "expected": "a b", "prediction": p}
        for i, p in enumerate(["a b", "a b", "a", "zzz"])]  # fmt: skip

#: what this run stored before the summary was typed (key order included)
STORED = json.loads(
    '{"samples": 4, "passed": 2, "unscored": 0, "pass_rate": 0.5, "target_errors": 0,'
    ' "errored_samples": 0, "error_rate": 0.0, "top_errors": [], "scorers": {"exact_match":'
    ' {"mean": 0.5, "std": 0.5773502691896257, "count": 4, "errors": 0, "missing": 0,'
    ' "not_applicable": 0}, "token_f1": {"mean": 0.6666666666666666, "std": 0.4714045207910318,'
    ' "count": 4, "errors": 0, "missing": 0, "not_applicable": 0}}, "latency_s": {"mean": null,'
    ' "p50": null, "p95": null, "max": null}, "retries": 0, "cached": 0, "cache": {"calls": 0,'
    ' "cached": 0, "share": null}, "input_tokens": 0, "output_tokens": 0, "tokens": {"input": 0,'
    ' "output": 0, "total": 0, "target": {"input": 0, "output": 0, "total": 0}, "judges":'
    ' {"input": 0, "output": 0, "total": 0}}, "cost": null, "unpriced_samples": 0, "minimums":'
    ' {"min_pass_rate": 0.75, "min": {"exact_match": 0.5}, "met": false, "checks": [{"metric":'
    ' "pass_rate", "minimum": 0.75, "value": 0.5, "met": false}, {"metric": "exact_match",'
    ' "minimum": 0.5, "value": 0.5, "met": true}], "missed": [{"metric": "pass_rate",'
    ' "minimum": 0.75, "value": 0.5}]}}'
)


def _run(tmp_path: Path) -> Any:
    return run(
        name="m", dataset=ROWS, scorers=[exact_match, token_f1], min_pass_rate=0.75,
        min_scores={"exact_match": 0.5}, store=tmp_path / "r.db",
    )  # fmt: skip


def test_the_summary_is_typed_and_stored_as_the_same_json(tmp_path: Path) -> None:
    result = _run(tmp_path)
    summary = result.summary
    assert isinstance(summary, RunSummary) and aieval.RunSummary is RunSummary
    assert (summary.samples, summary.passed, summary.pass_rate) == (4, 2, 0.5)
    assert summary.scorers["exact_match"].count == 4 and summary.scorers["exact_match"].mean == 0.5
    assert summary.minimums is not None and not summary.minimums.met
    assert [m.metric for m in summary.minimums.missed] == ["pass_rate"]
    assert summary.epochs is None and summary.evaluation is None
    stored = Store(tmp_path / "r.db").get_run(result.id).metrics
    assert json.dumps(stored) == json.dumps(STORED)  # same keys, same order, same numbers
    assert json.dumps(summary.to_dict()) == json.dumps(STORED)
    assert result.to_dict()["summary"] == STORED
    assert RunSummary.from_dict(stored) == summary  # and it reads back to the same object
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.samples = 5  # type: ignore[misc]


def test_a_summary_stored_by_an_older_version_reads_without_a_crash() -> None:
    old = {
        "samples": 3, "passed": 1, "pass_rate": 1 / 3, "target_errors": 1,
        "scorers": {"exact": {"mean": 0.5, "std": None, "count": 2, "errors": 1},
                    "junk": "not a mapping"},
        "latency_s": {"p50": 0.2, "p95": "fast"},
        "input_tokens": 12, "output_tokens": 3, "cost": float("nan"),
        "top_errors": [{"message": "target: boom", "count": 1}, "junk"],
        "minimums": {"checks": [{"metric": "pass_rate", "minimum": 0.5, "value": 1 / 3}]},
    }  # fmt: skip
    summary = RunSummary.from_dict(old)
    assert (summary.samples, summary.target_errors, summary.unscored) == (3, 1, 0)
    assert list(summary.scorers) == ["exact"]  # an unreadable entry is left out
    assert summary.scorers["exact"].not_applicable is None  # unknown, not 0
    assert summary.latency_s.p50 == 0.2 and summary.latency_s.p95 is None
    assert summary.tokens is None and summary.cache is None and summary.cost is None
    assert [(e.message, e.count) for e in summary.top_errors] == [("target: boom", 1)]
    assert summary.minimums is not None and not summary.minimums.met
    assert RunSummary.from_dict(None) == RunSummary() == RunSummary.from_dict("junk")


def test_reading_by_key_still_works_with_a_deprecation_warning(tmp_path: Path) -> None:
    summary = _run(tmp_path).summary
    with pytest.warns(DeprecationWarning, match=r"read its attribute"):
        assert summary["samples"] == 4
    with pytest.warns(DeprecationWarning):
        assert summary["scorers"]["exact_match"]["count"] == 4  # as docs/judges.md showed
    with pytest.warns(DeprecationWarning):
        assert summary.get("epochs") is None and summary.get("epochs", {}) == {}
    with pytest.warns(DeprecationWarning):
        assert "minimums" in summary
