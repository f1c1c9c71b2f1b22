"""A store written by aieval at commit 1160002 (before verdicts were stored) is read through the
one adapter, and reported and compared with the numbers that version printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from aieval import Store
from aieval.report import build_report, compare_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "stores"
#: The report and comparison dicts the old version printed when it wrote the store.
EXPECTED = json.loads((FIXTURES / "v1160002.expected.json").read_text(encoding="utf-8"))
#: Figures whose definition changed since, on purpose: a run's tokens count its judges' calls
#: too, an unknown cost is null rather than 0, and the comparison no longer estimates how many
#: examples non-inferiority would need; the rows of the decision's metrics (weighted score, pass
#: rate) carry the decision rule's one-sided bounds, not a percentile bootstrap.
CHANGED_SINCE = (
    ".tokens.input", ".tokens.output", ".tokens.total", ".cost", ".n_needed",
    ".metrics[0].low", ".metrics[0].high", ".metrics[1].low", ".metrics[1].high",
)  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Any:
    copy = tmp_path / "old.db"  # opening migrates in place: never the committed file
    shutil.copyfile(FIXTURES / "v1160002.db", copy)
    opened = Store(str(copy))
    yield opened
    opened.close()


def _numbers(value: Any, path: str = "") -> dict[str, Any]:
    """Every number and flag in ``value``, by its path (lists of dicts by position)."""
    if isinstance(value, dict):
        found: dict[str, Any] = {}
        for key, item in value.items():
            found.update(_numbers(item, f"{path}.{key}"))
        return found
    if isinstance(value, list):
        found = {}
        for i, item in enumerate(value):
            found.update(_numbers(item, f"{path}[{i}]"))
        return found
    if isinstance(value, bool | int | float) or value is None:
        return {path: value}
    return {}


def _same_numbers(old: dict[str, Any], new: dict[str, Any]) -> None:
    expected = {k: v for k, v in _numbers(old).items() if not k.endswith(CHANGED_SINCE)}
    got = _numbers(new)
    missing = sorted(set(expected) - set(got))
    assert not missing, f"no longer reported: {missing[:10]}"
    differ = {
        k: (v, got[k])
        for k, v in expected.items()
        if got[k] != v and not (isinstance(v, float) and got[k] == pytest.approx(v, abs=1e-9))
    }
    assert not differ, differ


@pytest.mark.parametrize("run_id", sorted(EXPECTED["reports"]))
def test_each_old_run_is_reported_with_the_old_numbers(store: Store, run_id: str) -> None:
    report = build_report(store, run_id).to_dict()
    _same_numbers(EXPECTED["reports"][run_id], report)


def test_the_old_plain_runs_compare_with_the_old_decision(store: Store) -> None:
    old = EXPECTED["comparisons"]["plain-v1..plain-v2"]
    new = compare_runs(store, "plain-v1", "plain-v2").to_dict()
    _same_numbers(old, new)
    assert new["decision"]["outcome"] == old["decision"]["outcome"] == "block"
    assert [r["outcome"] for r in new["decision"]["rules"]] == [
        r["outcome"] for r in old["decision"]["rules"]
    ]


def test_old_samples_read_as_verdicts_and_typed_unreadable_scores(store: Store) -> None:
    plain = list(store.iter_samples("plain-v1"))
    assert all(s.verdict is not None and s.verdict.grader == "threshold" for s in plain)
    assert [s.passed for s in plain] == [s.verdict.passed for s in plain if s.verdict]
    malformed = [s for s in plain if s.scores["llm_judge"].malformed]
    assert [s.id for s in malformed] == ["sq-0002", "sq-0003", "sq-0011"]
    for sample in malformed:
        judge = sample.scores["llm_judge"]
        assert judge.unreadable == "verdict is not a single JSON object"
        assert "unreadable" not in judge.metadata
        assert sample.verdict is not None
        assert ("malformed", "llm_judge") in {(r.kind, r.key) for r in sample.verdict.reasons}
    graded = list(store.iter_samples("workflow-support_agent"))
    assert all(s.verdict is not None and s.verdict.grader == "workflow" for s in graded)
    assert all("evaluation" not in s.extra for s in graded)
    first = graded[0].verdict
    assert first is not None and first.workflow is not None
    assert first.grade == first.workflow["grade"]
    assert first.weighted_score == first.workflow["weighted_score"]
    assert first.gate_map == first.workflow["hard_gates"]


def test_the_old_store_is_migrated_to_the_current_schema(store: Store) -> None:
    from aieval.store._schema import SCHEMA_VERSION

    version = store._read("SELECT value FROM meta WHERE key = 'schema_version'")[0][0]
    columns = {row[1] for row in store._read("PRAGMA table_info(samples)")}
    run_columns = {row[1] for row in store._read("PRAGMA table_info(runs)")}
    assert int(version) == SCHEMA_VERSION == 13
    assert store._read("SELECT COUNT(*) FROM judge_certificates") == [(0,)]  # added by 12
    assert {"verdict", "weighted_score", "verdict_passed", "verdict_plain"} <= columns
    # added by 8, NULL in the rows stored before: their runs keep the record path
    assert {"grade", "epoch", "verdict_values", "promotion_score"} <= columns
    assert store._read("SELECT COUNT(*) FROM samples WHERE verdict_values IS NOT NULL") == [(0,)]
    assert store._read("SELECT COUNT(*) FROM sample_values") == [(0,)]
    assert {"ordered_at", "pushed_by"} <= run_columns
    assert store._read("SELECT COUNT(*) FROM received_requests") == [(0,)]  # added by 6
