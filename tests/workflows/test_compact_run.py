"""compact_run: the step list the viewer's timeline draws."""

from __future__ import annotations

from typing import Any

import pytest

from aieval.workflows import WorkflowRun
from aieval.workflows._runner import compact_run


def _step(name: str, start: str | None, end: str | None) -> dict[str, Any]:
    return {"step_name": name, "status": "success", "start_time": start, "end_time": end}


@pytest.mark.parametrize(
    ("run_start", "steps", "offsets"),
    [
        pytest.param(
            "2026-03-02T09:00:00+00:00",
            [
                _step("plan", "2026-03-02T09:00:01+00:00", "2026-03-02T09:00:02+00:00"),
                _step("a", "2026-03-02T09:00:02+00:00", "2026-03-02T09:00:05+00:00"),
                _step("b", "2026-03-02T09:00:02.500000+00:00", "2026-03-02T09:00:04+00:00"),
            ],
            [1.0, 2.0, 2.5],
            id="offsets-from-run-start-parallel-steps-overlap",
        ),
        pytest.param(
            None,
            [
                _step("plan", "2026-03-02T09:00:01+00:00", "2026-03-02T09:00:02+00:00"),
                _step("act", "2026-03-02T09:00:03+00:00", "2026-03-02T09:00:04+00:00"),
            ],
            [0.0, 2.0],
            id="no-run-start-first-step-is-origin",
        ),
        pytest.param(
            None,
            [_step("plan", None, None), _step("act", "2026-03-02T09:00:03+00:00", None)],
            [None, 0.0],
            id="unrecorded-start-is-none",
        ),
    ],
)
def test_steps_carry_their_start_offset(
    run_start: str | None, steps: list[dict[str, Any]], offsets: list[float | None]
) -> None:
    run = WorkflowRun.from_dict({"workflow_id": "r", "start_time": run_start, "steps": steps})
    compact = compact_run(run)
    assert [s["start_s"] for s in compact["steps"]] == pytest.approx(offsets)
    assert [s["name"] for s in compact["steps"]] == [s["step_name"] for s in steps]
