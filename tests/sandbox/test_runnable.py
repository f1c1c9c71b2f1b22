"""Tests that call nothing would pass any program: execute() and passes_tests refuse them."""

import pytest

from aieval import run
from aieval.errors import DatasetError
from aieval.sandbox import execute
from aieval.scorers.code import passes_tests

CHECK_ONLY = "def check(candidate):\n    assert candidate(2, 3) == 5\n"
WRONG = "def add(a, b):\n    return a - b\n"


def test_execute_refuses_a_check_without_an_entry_point() -> None:
    with pytest.raises(DatasetError, match="entry_point") as caught:
        execute(WRONG, CHECK_ONLY)
    assert "check(candidate)" in str(caught.value)


def test_execute_still_runs_a_check_with_its_entry_point_and_asserts_without_one() -> None:
    assert execute(WRONG, CHECK_ONLY, entry_point="add").status == "failed"
    assert execute(WRONG, "assert add(1, 1) == 2").status == "failed"


def test_passes_tests_records_the_row_as_an_error_not_a_pass() -> None:
    rows = [{"id": "r1", "prompt": "add", "prediction": WRONG, "tests": CHECK_ONLY}]
    scorer = passes_tests.with_options(allow_code_execution=True)
    result = run(name="check-only", dataset=rows, scorers=[scorer], store=False)
    score = result.samples[0].scores["passes_tests"]
    assert score.value is None
    assert score.error is not None and "entry_point" in score.error
    assert not result.samples[0].passed
