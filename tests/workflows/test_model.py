"""Import of recorded WorkflowResult JSON: known, unknown and missing fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.workflows import make_run, make_step

from aieval.errors import WorkflowError
from aieval.workflows import STEP_STATUSES, StepResult, WorkflowRun, load_run, load_runs


def test_workflow_result_imports_with_unknown_fields_kept(tmp_path: Path) -> None:
    data = make_run(trace_id="t-1", engine={"name": "x"})
    data["steps"][0]["span_id"] = "s-9"
    file = tmp_path / "run.json"
    file.write_text(json.dumps(data))
    run = load_run(file)
    assert run.workflow_id == "run-1" and run.workflow_name == "review"
    assert run.extra == {"trace_id": "t-1", "engine": {"name": "x"}}
    assert run.steps[0].extra == {"span_id": "s-9"}
    assert run.duration_s == pytest.approx(5.0)
    assert run.outputs == {"report": {"issues": [3, 9]}}


def test_missing_optional_fields_take_defaults() -> None:
    run = WorkflowRun.from_dict({"workflow_id": "r", "steps": [{"step_name": "only"}]})
    step = run.steps[0]
    assert (run.status, run.outputs, run.duration_s, run.tokens, run.cost) == (
        "success",
        None,
        None,
        None,
        None,
    )
    assert (step.status, step.agent_role, step.retry_count, step.duration_s) == (
        "success",
        None,
        0,
        None,
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("SUCCESS", "success", id="upper"),
        pytest.param("StepStatus.FAILED", "failed", id="enum-repr"),
        pytest.param("error", "failed", id="alias-error"),
        pytest.param("retrying", "retrying", id="retrying"),
        pytest.param("skipped", "skipped", id="skipped"),
    ],
)
def test_step_statuses_are_normalized(raw: str, expected: str) -> None:
    assert StepResult.from_dict(make_step("s", raw)).status == expected


@pytest.mark.parametrize(
    ("step", "needle"),
    [
        pytest.param({"status": "success"}, "steps[0]: field 'step_name'", id="no-name"),
        pytest.param(make_step("a", "exploded"), "steps[0], field 'status'", id="bad-status"),
        pytest.param(make_step("a", retry_count=-1), "field 'retry_count'", id="neg-retries"),
        pytest.param(make_step("a", start_time="yesterday"), "field 'start_time'", id="bad-time"),
    ],
)
def test_bad_fields_name_the_file_and_field(
    tmp_path: Path, step: dict[str, Any], needle: str
) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(make_run(steps=[step])))
    with pytest.raises(WorkflowError) as info:
        load_run(file)
    assert str(file) in str(info.value) and needle in str(info.value)


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    file = tmp_path / "broken.json"
    file.write_text("{nope")
    with pytest.raises(WorkflowError, match=r"broken\.json: not valid JSON"):
        load_run(file)


def test_folder_of_runs_loads_sorted(tmp_path: Path) -> None:
    for name in ("b", "a"):
        (tmp_path / f"{name}.json").write_text(json.dumps(make_run(workflow_id=name)))
    assert [r.workflow_id for r in load_runs(tmp_path)] == ["a", "b"]


def test_round_trip_keeps_every_field() -> None:
    run = WorkflowRun.from_dict(make_run(trace="x"))
    again = WorkflowRun.from_dict(run.to_dict())
    assert again.to_dict() == run.to_dict()


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "step_name": st.text(min_size=1, max_size=8),
                "status": st.sampled_from(STEP_STATUSES),
                "retry_count": st.integers(0, 5),
            }
        ),
        max_size=6,
    )
)
def test_retries_sum_over_steps(steps: list[dict[str, Any]]) -> None:
    run = WorkflowRun.from_dict({"workflow_id": "r", "steps": steps})
    assert run.retries == sum(s["retry_count"] for s in steps)
    assert [s.status for s in run.steps] == [s["status"] for s in steps]
