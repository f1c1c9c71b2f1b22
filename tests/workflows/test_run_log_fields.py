"""Run logs: token counts are validated like durations, and a value given twice must agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.workflows import load_log, run_log

from aieval.errors import WorkflowError

_BAD = {"numeric-text": "300", "boolean": True, "negative": -300, "list": [3]}


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        *(
            pytest.param(f, v, id=f"{f}-{k}")
            for f in ("tokens_used", "duration_ms")
            for k, v in _BAD.items()
        ),
        pytest.param("tokens_used", 1.5, id="tokens_used-fraction"),
    ],
)
def test_a_bad_token_count_is_refused_like_a_bad_duration(
    tmp_path: Path, field: str, bad: Any
) -> None:
    with pytest.raises(WorkflowError, match=rf"steps\[0\], field '{field}'") as info:
        load_log(tmp_path, run_log({field: bad}))
    assert "log.json" in str(info.value)


@pytest.mark.parametrize("key", ["tokens", "tokens_used", "total_tokens", "input_tokens"])
def test_a_bad_token_count_in_metadata_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(WorkflowError, match=rf"steps\[0\], field 'metadata.{key}'"):
        load_log(tmp_path, run_log({"metadata": {key: "300"}}))
    with pytest.raises(WorkflowError, match=rf"field 'metadata.{key}'"):
        load_log(tmp_path, run_log(metadata={key: -1}))


def test_good_token_counts_load(tmp_path: Path) -> None:
    run = load_log(tmp_path, run_log({"tokens_used": 10}))
    assert run.tokens == 10 and run.steps[0].tokens == 10
    whole = load_log(tmp_path, run_log({"tokens_used": 300.0}))  # an integral float is that integer
    assert whole.tokens == 300 and isinstance(whole.steps[0].metadata["tokens_used"], int)
    assert load_log(tmp_path, run_log({"tokens_used": 0})).tokens == 0


def test_tokens_given_twice_must_agree(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError) as info:
        load_log(tmp_path, run_log({"tokens_used": 10, "metadata": {"tokens_used": 99}}))
    message = str(info.value)
    assert "steps[0]" in message and "'tokens_used'" in message
    assert "'metadata.tokens_used'" in message and "10" in message and "99" in message
    same = load_log(tmp_path, run_log({"tokens_used": 10, "metadata": {"tokens_used": 10}}))
    assert same.tokens == 10


def test_token_totals_under_two_names_must_agree(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match=r"'metadata.tokens' and 'metadata.total_tokens'"):
        load_log(tmp_path, run_log(metadata={"tokens": 5, "total_tokens": 7}))


def test_a_run_level_tokens_used_is_read_and_checked(tmp_path: Path) -> None:
    run = load_log(tmp_path, run_log(tokens_used=40))
    assert run.tokens == 40 and run.metadata["tokens_used"] == 40
    with pytest.raises(WorkflowError, match=r"field 'tokens_used'"):
        load_log(tmp_path, run_log(tokens_used="40"))
    with pytest.raises(WorkflowError, match=r"'tokens_used' and 'metadata.tokens_used'"):
        load_log(tmp_path, run_log(tokens_used=40, metadata={"tokens_used": 41}))


def test_durations_given_twice_must_agree(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match=r"steps\[0\].*'duration_s' and 'duration_ms'"):
        load_log(tmp_path, run_log({"duration_s": 2.0, "duration_ms": 5}))
    with pytest.raises(WorkflowError, match=r"'duration_s' and 'total_duration_ms'"):
        load_log(tmp_path, run_log(duration_s=9.0))
    agree = load_log(tmp_path, run_log({"duration_s": 0.005}, duration_s=1.5))
    assert agree.duration_s == 1.5 and agree.steps[0].duration_s == 0.005


def test_two_names_for_one_measured_field_must_agree(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError, match=r"'overall_status' and 'status'"):
        load_log(tmp_path, run_log(overall_status="failed"))
    with pytest.raises(WorkflowError, match=r"'final_output' and 'outputs'"):
        load_log(tmp_path, run_log(final_output={"a": 1}, outputs={"a": 2}))
    same = load_log(tmp_path, run_log(overall_status="success"))
    assert same.status == "success"


@pytest.mark.parametrize("key", ["cost", "cost_usd", "total_cost", "duration_s", "duration_ms"])
@pytest.mark.parametrize(
    "bad", ["0.25", -1, float("nan"), True], ids=["text", "neg", "nan", "bool"]
)
def test_a_bad_cost_or_duration_in_metadata_is_refused(tmp_path: Path, key: str, bad: Any) -> None:
    """These are read as the run's cost and duration: a bad value was silently ignored."""
    with pytest.raises(WorkflowError, match=rf"steps\[0\], field 'metadata.{key}'"):
        load_log(tmp_path, run_log({"metadata": {key: bad}}))
    with pytest.raises(WorkflowError, match=rf"field 'metadata.{key}'"):
        load_log(tmp_path, run_log(metadata={key: bad}))


def test_a_good_cost_in_metadata_is_read(tmp_path: Path) -> None:
    run = load_log(tmp_path, run_log({"metadata": {"cost_usd": 0.25}}))
    assert run.steps[0].cost == 0.25
