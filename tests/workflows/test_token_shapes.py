"""Every shape a run log writes ``tokens_used`` in loads: an integer, null, or a usage object
``{"input": 615, "output": 324}`` with an optional ``total``; what is really wrong is refused
with its path. Runs and steps built in Python are checked the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.workflows import load_log, run_log

from aieval.errors import WorkflowError
from aieval.workflows import StepResult, WorkflowRun, evaluate_run


def test_a_usage_object_fills_input_output_and_the_total(tmp_path: Path) -> None:
    run = load_log(tmp_path, run_log({"tokens_used": {"input": 615, "output": 324}}))
    step = run.steps[0]
    assert step.metadata["input_tokens"] == 615 and step.metadata["output_tokens"] == 324
    assert step.tokens == 939 and run.tokens == 939
    assert (run.input_tokens, run.output_tokens) == (615, 324)
    again = WorkflowRun.from_dict(run.to_dict())
    assert again.steps[0].metadata == step.metadata and again.tokens == 939


def test_a_usage_object_with_a_total_keeps_the_total(tmp_path: Path) -> None:
    usage = {"input": 10, "output": 5, "total": 20}  # e.g. cached or reasoning tokens besides
    step = load_log(tmp_path, run_log({"tokens_used": usage})).steps[0]
    assert step.metadata["tokens_used"] == 20 and step.tokens == 20
    assert (step.metadata["input_tokens"], step.metadata["output_tokens"]) == (10, 5)


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        pytest.param(None, None, id="null"),
        pytest.param(420, 420, id="integer"),
        pytest.param({}, None, id="empty-object"),
        pytest.param({"input": 7, "output": None}, 7, id="one-part"),
    ],
)
def test_the_other_shapes_load(tmp_path: Path, value: Any, tokens: int | None) -> None:
    assert load_log(tmp_path, run_log({"tokens_used": value})).steps[0].tokens == tokens


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        pytest.param({"input": "615", "output": 1}, "tokens_used.input", id="text"),
        pytest.param({"input": 1, "output": -2}, "tokens_used.output", id="negative"),
        pytest.param({"input": 1, "output": 2.5}, "tokens_used.output", id="fraction"),
        pytest.param({"input": 1, "total": True}, "tokens_used.total", id="boolean"),
    ],
)
def test_a_bad_part_is_refused_with_its_path(tmp_path: Path, usage: Any, field: str) -> None:
    with pytest.raises(WorkflowError, match=rf"log\.json, steps\[0\], field '{field}'"):
        load_log(tmp_path, run_log({"tokens_used": usage}))


def test_an_unknown_key_of_a_usage_object_is_refused(tmp_path: Path) -> None:
    message = r"steps\[0\], field 'tokens_used': unknown key 'prompt'"
    with pytest.raises(WorkflowError, match=message):
        load_log(tmp_path, run_log({"tokens_used": {"prompt": 3, "output": 1}}))


def test_a_total_below_its_parts_is_refused(tmp_path: Path) -> None:
    usage = {"input": 615, "output": 324, "total": 900}
    with pytest.raises(WorkflowError, match=r"field 'tokens_used.total' \(900 tokens\) is less"):
        load_log(tmp_path, run_log({"tokens_used": usage}))
    with pytest.raises(WorkflowError, match=r"'metadata.tokens' \(5 tokens\) is less"):
        load_log(tmp_path, run_log({"metadata": {"tokens": 5, "input_tokens": 6}}))


def test_a_part_given_twice_must_agree(tmp_path: Path) -> None:
    step = {"tokens_used": {"input": 5, "output": 1}, "metadata": {"input_tokens": 6}}
    with pytest.raises(WorkflowError) as info:
        load_log(tmp_path, run_log(step))
    message = str(info.value)
    assert "steps[0]" in message and "'tokens_used.input'" in message
    assert "'metadata.input_tokens'" in message and "(5 vs 6 tokens)" in message
    same = {"tokens_used": {"input": 5, "output": 1}, "metadata": {"input_tokens": 5}}
    assert load_log(tmp_path, run_log(same)).steps[0].tokens == 6


def test_a_usage_object_in_metadata_and_at_run_level_is_read(tmp_path: Path) -> None:
    nested = load_log(tmp_path, run_log({"metadata": {"tokens_used": {"input": 2, "output": 3}}}))
    assert nested.steps[0].metadata == {"input_tokens": 2, "output_tokens": 3}
    run = load_log(tmp_path, run_log(tokens_used={"input": 40, "output": 2, "total": 42}))
    assert run.tokens == 42 and (run.input_tokens, run.output_tokens) == (40, 2)
    with pytest.raises(WorkflowError, match=r"'tokens_used.total' and 'metadata.tokens_used'"):
        load_log(tmp_path, run_log(tokens_used={"total": 42}, metadata={"tokens_used": 41}))


def test_steps_and_runs_built_in_python_are_checked_too() -> None:
    step = StepResult("draft", metadata={"tokens_used": {"input": 2, "output": 3}})
    assert step.tokens == 5 and step.metadata["input_tokens"] == 2
    run = WorkflowRun("r1", steps=[step], metadata={"cost": 0.5})
    assert evaluate_run(run, profile="B").agents["unassigned"]["tokens"] == 5
    with pytest.raises(WorkflowError, match=r"step 'draft', field 'metadata.tokens'"):
        StepResult("draft", metadata={"tokens": "300"})
    with pytest.raises(WorkflowError, match=r"run 'r1', field 'metadata.tokens_used.output'"):
        WorkflowRun("r1", metadata={"tokens_used": {"output": -1}})
    with pytest.raises(WorkflowError, match=r"run 'r1', field 'metadata.cost'"):
        WorkflowRun("r1", metadata={"cost": -1})
