"""A recorded step's ``metadata.model_calls``: checked at load, and the run's tokens and cost
unknown while a call that answered reported none."""

from __future__ import annotations

from typing import Any

import pytest

from aieval.errors import WorkflowError
from aieval.workflows import WorkflowRun, agent_rollup


def _run(*calls: dict[str, Any]) -> WorkflowRun:
    step = {"step_name": "a", "metadata": {"model_calls": list(calls)}}
    return WorkflowRun.from_dict({"run_id": "r", "steps": [step]}, source="runs.json")


def test_calls_that_all_reported_give_the_totals() -> None:
    run = _run(
        {"model": "m", "input_tokens": 5, "output_tokens": 1, "cost": 0.25},
        {"model": "m", "input_tokens": 7, "output_tokens": 2, "cost": 0.5},
    )
    # the step's own sums are not given: the calls are the record, the totals are known
    assert (run.input_tokens, run.output_tokens, run.tokens, run.cost) == (12, 3, 15, 0.75)


def test_a_call_without_usage_or_cost_makes_them_unknown() -> None:
    run = _run(
        {"input_tokens": 5, "output_tokens": 1, "cost": 0.25},
        {"model": "m"},
        {"error": "timed out"},  # a failed call reports nothing and is no unknown part
    )
    assert (run.input_tokens, run.output_tokens, run.tokens, run.cost) == (None,) * 4


@pytest.mark.parametrize(
    ("call", "message"),
    [
        pytest.param({"input_tokens": 2**64}, r"model_calls\[0\]\.input_tokens", id="huge"),
        pytest.param({"output_tokens": -1}, r"model_calls\[0\]\.output_tokens", id="negative"),
        pytest.param({"cost": "free"}, r"model_calls\[0\]\.cost", id="cost-text"),
        pytest.param({"tokens": 3}, r"unknown key\(s\) tokens", id="unknown-key"),
    ],
)
def test_a_malformed_call_is_refused_naming_the_field(call: dict[str, Any], message: str) -> None:
    with pytest.raises(WorkflowError, match=message) as caught:
        _run(call)
    assert "runs.json" in str(caught.value)


def test_an_agent_whose_call_reported_no_usage_has_unknown_tokens_and_cost() -> None:
    steps = [
        {"step_name": "a", "agent_role": "coder", "metadata": {"model_calls": [
            {"input_tokens": 5, "output_tokens": 1, "cost": 0.25}]}},
        {"step_name": "b", "agent_role": "coder", "metadata": {"model_calls": [{"model": "m"}]}},
        {"step_name": "c", "agent_role": "writer", "metadata": {"model_calls": [
            {"input_tokens": 7, "output_tokens": 2, "cost": 0.5}]}},
    ]  # fmt: skip
    rollup = agent_rollup(WorkflowRun.from_dict({"run_id": "r", "steps": steps}))
    assert (rollup["coder"]["tokens"], rollup["coder"]["cost_usd"]) == (None, None)
    assert (rollup["writer"]["tokens"], rollup["writer"]["cost_usd"]) == (9, 0.5)
