"""Per-agent roll-up and step scores, checked against numbers worked out by hand."""

from __future__ import annotations

import pytest
from tests.support.workflows import DEFINITION, make_run, make_step

from aieval.workflows import WorkflowRun, agent_rollup, evaluate_run, step_scores

# Three agents; durations from timestamps (planner 2 s + 3 s), retries 1 + 2, one failure.
FIXTURE = make_run(
    steps=[
        make_step(
            "plan",
            agent_role="planner",
            start_time=0,
            end_time=2,
            retry_count=1,
            metadata={"tokens": 100, "cost": 0.01, "scores": {"quality": 0.6}},
        ),
        make_step(
            "replan",
            "failed",
            agent_role="planner",
            start_time=2,
            end_time=5,
            retry_count=2,
            metadata={"tokens": 50, "cost": 0.02, "scores": {"quality": 0.2}},
        ),
        make_step(
            "code",
            agent_role="coder",
            start_time=5,
            end_time=9,
            model_used="m1",
            metadata={"input_tokens": 30, "output_tokens": 20, "scores": {"tests": 1.0}},
        ),
        make_step("notes", "skipped"),
    ]
)


def test_agent_rollup_by_hand() -> None:
    agents = agent_rollup(WorkflowRun.from_dict(FIXTURE))
    planner, coder, other = agents["planner"], agents["coder"], agents["unassigned"]
    assert (planner["steps"], planner["failures"], planner["retries"]) == (2, 1, 3)
    assert planner["duration_s"] == pytest.approx(5.0)
    assert planner["tokens"] == 150 and planner["cost_usd"] == pytest.approx(0.03)
    assert planner["scores"] == {"quality": pytest.approx(0.4)}
    assert (coder["steps"], coder["failures"], coder["retries"], coder["duration_s"]) == (
        1,
        0,
        0,
        4.0,
    )
    assert coder["tokens"] == 50 and coder["models"] == ["m1"] and coder["scores"] == {"tests": 1.0}
    assert (other["steps"], other["skipped"], other["duration_s"]) == (1, 1, None)


def test_step_scores_and_payload() -> None:
    run = WorkflowRun.from_dict(FIXTURE)
    assert step_scores(run) == {
        "plan": {"quality": 0.6},
        "replan": {"quality": 0.2},
        "code": {"tests": 1.0},
    }
    ev = evaluate_run(run, workflow=DEFINITION)
    assert ev.agents["planner"]["retries"] == 3 and ev.step_scores["code"] == {"tests": 1.0}


def test_non_numeric_step_scores_are_left_out_with_a_warning_naming_step_and_key() -> None:
    run = WorkflowRun.from_dict(
        make_run(
            steps=[
                make_step("plan", agent_role="planner",
                          metadata={"scores": {"quality": "high", "speed": 0.5,
                                               "done": True, "drift": float("nan"),
                                               "nested": {"value": 0.75}}}),
                make_step("code", agent_role="coder", metadata={"scores": [0.9, 0.8]}),
            ]
        )
    )  # fmt: skip
    ev = evaluate_run(run, workflow=DEFINITION)
    assert ev.step_scores == {"plan": {"speed": 0.5, "nested": 0.75}}
    assert ev.agents["planner"]["scores"] == {"speed": 0.5, "nested": 0.75}
    payload = ev.to_dict()
    left_out = [w for w in payload["warnings"] if "metadata.scores" in w]
    assert left_out == [
        "step 'plan': metadata.scores.quality is 'high' (str), not a finite number; left out of "
        "step_scores and the agent roll-up",
        "step 'plan': metadata.scores.done is True (bool), not a finite number; left out of "
        "step_scores and the agent roll-up",
        "step 'plan': metadata.scores.drift is nan (float), not a finite number; left out of "
        "step_scores and the agent roll-up",
        "step 'code': metadata.scores is a list, not a mapping of score name to number; ignored",
    ]


def test_numeric_step_scores_give_no_warning() -> None:
    ev = evaluate_run(WorkflowRun.from_dict(FIXTURE), workflow=DEFINITION)
    assert not [w for w in ev.warnings if "metadata.scores" in w]
