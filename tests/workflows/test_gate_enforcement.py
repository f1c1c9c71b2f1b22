"""enforce_hard_gates, the stored workflow_run step list, and the pre-run compatibility check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.server import EXAMPLES

from aieval import run
from aieval.errors import ConfigError, IncompatibleDatasetError
from aieval.grading import band
from aieval.runner import check_eval, parse_eval, run_eval
from aieval.store import Store
from aieval.workflows import evaluate_run, load_run

RUNS = EXAMPLES / "code_review_runs"
DEFINITION = EXAMPLES / "code_review.yaml"


def graded(tmp_path: Path, enforce: bool) -> dict[str, dict[str, Any]]:
    result = run(
        name="cr",
        dataset=RUNS,
        scorers=[],
        workflow=DEFINITION,
        enforce_hard_gates=enforce,
        store=tmp_path / f"{enforce}.db",
    )
    return {s.id: {**s.extra, "evaluation": s.verdict.workflow} for s in result.samples}


def test_unenforced_gates_are_reported_but_do_not_force_f(tmp_path: Path) -> None:
    enforced = graded(tmp_path, True)
    relaxed = graded(tmp_path, False)
    gated = [k for k, v in enforced.items() if not all(v["evaluation"]["hard_gates"].values())]
    assert gated, "the examples hold runs that fail a hard gate"
    for key in enforced:
        on, off = enforced[key]["evaluation"], relaxed[key]["evaluation"]
        assert on["hard_gates_enforced"] is True and off["hard_gates_enforced"] is False
        assert on["hard_gates"] == off["hard_gates"]
        assert on["gate_failures"] == off["gate_failures"]
        if key not in gated:
            assert (on["grade"], on["passed"]) == (off["grade"], off["passed"])
    for key in gated:
        on, off = enforced[key]["evaluation"], relaxed[key]["evaluation"]
        assert on["grade"] == "F" and on["passed"] is False
        failed = [g["name"] for g in off["gate_failures"]]
        assert all(any(name in w for w in off["warnings"]) for name in failed)
    # without enforcement the grade follows the criteria alone
    freed = [
        relaxed[k]["evaluation"]
        for k in gated
        if not relaxed[k]["evaluation"]["floor_violations"]
        and relaxed[k]["evaluation"]["weighted_score"] >= relaxed[k]["evaluation"]["pass_threshold"]
    ]
    assert freed, "a run whose only problem is a gate"
    for ev in freed:
        assert ev["passed"] is True and ev["grade"] == band(ev["weighted_score"])


def test_evaluate_run_without_enforcement_matches_a_gate_free_grade() -> None:
    recorded = load_run(RUNS / "cr-003-review-failed.json")
    on = evaluate_run(recorded, workflow=DEFINITION)
    off = evaluate_run(recorded, workflow=DEFINITION, enforce_hard_gates=False)
    assert not all(on.hard_gates.values())
    assert on.hard_gates == off.hard_gates and off.hard_gates_enforced is False
    assert [g.name for g in on.gate_failures] == [g.name for g in off.gate_failures]
    assert on.grade == "F" and not on.passed


def test_workflow_samples_store_a_compact_step_list(tmp_path: Path) -> None:
    extras = graded(tmp_path, True)
    for name, extra in extras.items():
        recorded = json.loads((RUNS / f"{name}.json").read_text(encoding="utf-8"))
        compact = extra["workflow_run"]
        assert [s["name"] for s in compact["steps"]] == [s["step_name"] for s in recorded["steps"]]
        for step, raw in zip(compact["steps"], recorded["steps"], strict=True):
            assert step["status"] == load_run(RUNS / f"{name}.json").step(step["name"]).status
            assert step["agent"] == raw.get("agent_role")
            assert step["retries"] == raw.get("retry_count", 0)
            calls = (raw.get("metadata") or {}).get("tool_calls") or []
            calls += (raw.get("output_data") or {}).get("tool_calls") or [] if isinstance(
                raw.get("output_data"), dict) else []  # fmt: skip
            assert step["tool_calls"] == len(calls)


def rows_without(field: str) -> list[dict[str, Any]]:
    return [
        {"id": "a", "input": {"language": "python"}, "run": {"workflow_id": "a"}},
        {"id": "b", "input": {"code_file": "b.py"}, "run": {"workflow_id": "b"}},
        {"id": "c", "input": {}, "run": {"workflow_id": "c"}},
    ]


def test_incompatible_dataset_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    config = parse_eval(
        {"name": "cr", "dataset": {"rows": rows_without("code_file")},
         "workflow": str(DEFINITION)}
    )  # fmt: skip
    with pytest.raises(IncompatibleDatasetError) as caught:
        check_eval(config)
    assert caught.value.missing_inputs == ["code_file"]
    assert caught.value.rows == {"code_file": ["a", "c"]}
    assert isinstance(caught.value, ConfigError)
    db = tmp_path / "runs.db"
    with pytest.raises(IncompatibleDatasetError):
        run_eval(config, store=db)
    assert Store(db).count_runs() == 0


def test_check_eval_accepts_what_runs(tmp_path: Path) -> None:
    config = parse_eval({"name": "cr", "dataset": str(RUNS), "workflow": str(DEFINITION)})
    check_eval(config)
    (result,) = run_eval(config, store=tmp_path / "runs.db")
    assert result.status == "completed"


def test_eval_file_field_reaches_the_run(tmp_path: Path) -> None:
    config = parse_eval(
        {"name": "cr", "dataset": str(RUNS), "workflow": str(DEFINITION),
         "enforce_hard_gates": False}
    )  # fmt: skip
    (result,) = run_eval(config, store=tmp_path / "runs.db", run_id="chosen-id-1")
    assert result.id == "chosen-id-1"
    store = Store(tmp_path / "runs.db")
    assert store.get_run("chosen-id-1").config["workflow"]["hard_gates_enforced"] is False
    assert all(
        s.verdict.workflow["hard_gates_enforced"] is False
        for s in store.iter_samples("chosen-id-1")
    )


def test_run_id_needs_exactly_one_run(tmp_path: Path) -> None:
    rows = [{"id": "a", "prompt": "q", "expected": "x", "predictions": {"m1": "x", "m2": "y"}}]
    config = parse_eval(
        {"name": "two", "dataset": {"rows": rows}, "models": ["m1", "m2"],
         "scorers": ["exact_match"]}
    )  # fmt: skip
    with pytest.raises(ConfigError, match="run_id"):
        run_eval(config, store=tmp_path / "runs.db", run_id="x")
