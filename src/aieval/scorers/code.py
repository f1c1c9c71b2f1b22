"""Functional correctness of generated code: run the candidate against its tests in the sandbox.

The scorer ``passes_tests`` takes the program from the prediction (the first fenced code block
when there is one, else the whole text) and the tests from the dataset row: the field named by
``tests_field`` (``tests`` by default; top-level or under ``metadata``), else ``expected``. With
an ``entry_point`` field the tests are HumanEval's ``check(candidate)``; without one they are
MBPP-style asserts (a list of snippets counts each as one test).

Running model output needs the explicit opt-in of :mod:`aieval.sandbox`: pass
``allow_code_execution=True`` (in an eval file: ``- passes_tests: {allow_code_execution: true}``)
or set ``AIEVAL_ALLOW_CODE_EXECUTION=1``. Several generations of one problem, scored this way,
give pass@k through :func:`aieval.stats.pass_at_k_from_outcomes`.

Example:
    >>> extract_code("Here:\\n```python\\ndef f():\\n    return 1\\n```\\nDone.")
    'def f():\\n    return 1\\n'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from aieval._types import Example, Score
from aieval.errors import ConfigError, DatasetError, ScorerError
from aieval.sandbox import execute_async, require_code_execution
from aieval.scorers._scorer import scorer

__all__ = ["extract_code", "passes_tests"]

_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
_PYTHON_TAGS = frozenset({"", "py", "python", "python3"})


def extract_code(text: str) -> str:
    """The program in a model's answer: its first Python (or untagged) fenced block, else all
    of it."""
    for match in _FENCE.finditer(text):
        if match.group(1).lower() in _PYTHON_TAGS:
            return match.group(2)
    return text


@scorer(name="passes_tests")
async def passes_tests(
    prediction: Any,
    expected: Any,
    *,
    example: Example | None = None,
    allow_code_execution: bool = False,
    tests_field: str = "tests",
    entry_point_field: str = "entry_point",
    timeout: float = 5.0,
    memory_mb: int = 512,
) -> Score:
    """1.0 when the generated program passes every test, else 0.0 (``raw`` is the share of
    test snippets that passed; ``reason`` the failing assertion or the limit hit).

    When the sandbox fails before the program runs (``sandbox_error``) there is no verdict: it
    raises :class:`~aieval.errors.ScorerError` with the cause, an error of the sample, not a 0.
    """
    require_code_execution(allow_code_execution, what="passes_tests")
    tests = _field(example, tests_field)
    if tests is None:
        tests = expected
    if isinstance(tests, str):
        source: str | list[str] = tests
    elif isinstance(tests, Sequence) and tests and all(isinstance(t, str) for t in tests):
        source = list(tests)
    else:
        where = f"row {example.id!r}" if example is not None else "this row"
        raise DatasetError(
            f"passes_tests: {where} has no tests: give a {tests_field!r} field (test source or "
            "a list of snippets) or put the tests in 'expected'"
        )
    entry_point = _field(example, entry_point_field)
    if entry_point is not None and not isinstance(entry_point, str):
        raise ConfigError(f"passes_tests: field {entry_point_field!r} must be a function name")
    result = await execute_async(
        extract_code("" if prediction is None else str(prediction)),
        source,
        entry_point=entry_point,
        timeout=timeout,
        memory_mb=memory_mb,
    )
    if result.sandbox_failed:
        raise ScorerError(f"sandbox_error: {result.detail}")
    share = result.tests_passed / result.tests_total if result.tests_total else 0.0
    return Score(
        value=1.0 if result.status == "passed" else 0.0,
        raw=share,
        reason=result.detail,
        metadata={
            "status": result.status,
            "tests_passed": result.tests_passed,
            "tests_total": result.tests_total,
            "duration_s": round(result.duration_s, 4),
        },
    )


def _field(example: Example | None, name: str) -> Any:
    if example is None:
        return None
    value = example.fields.get(name)
    if value is None and isinstance(example.metadata, Mapping):
        value = example.metadata.get(name)
    return value
