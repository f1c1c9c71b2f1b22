"""The scorer that runs one completion of one problem in the sandbox."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from aieval._types import Example, Score
from aieval.code._problems import CodeProblem, build_program
from aieval.code._testsource import check_runnable, with_prompt_definitions
from aieval.errors import ConfigError, DatasetError, ScorerError
from aieval.sandbox import SandboxLimits, execute_async, require_code_execution
from aieval.scorers import scorer

__all__ = ["code_passes", "sandbox_failure_tally"]

log = logging.getLogger("aieval.code")
#: Sandbox failures after which the run warns (then again at 10, 100, 1000...).
WARN_AFTER = 3


class _Tally:
    """Sandbox failures counted so far, shared by the executions of one evaluation."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def add(self) -> int:
        with self._lock:
            self.count += 1
            return self.count


_PROCESS_TALLY = _Tally()
_tally: ContextVar[_Tally | None] = ContextVar("aieval_code_sandbox_failures", default=None)


@contextmanager
def sandbox_failure_tally() -> Iterator[None]:
    """Count sandbox failures apart from other evaluations (executions elsewhere, e.g. on Ray
    workers, count per process)."""
    token = _tally.set(_Tally())
    try:
        yield
    finally:
        _tally.reset(token)


def _sandbox_failed(task_id: str, detail: str) -> ScorerError:
    count = (_tally.get() or _PROCESS_TALLY).add()
    if count == WARN_AFTER or (count > WARN_AFTER and str(count).strip("0") == "1"):
        log.warning(
            "code evaluation: %d executions so far had no verdict because the sandbox failed "
            "(latest, %s: %s); they are errors, not failed candidates: see docs/sandbox.md",
            count,
            task_id,
            detail,
        )
    return ScorerError(f"sandbox_error: {detail}")


@scorer(name="code_passes")
async def code_passes(
    prediction: Any,
    expected: Any,
    *,
    example: Example | None = None,
    allow_code_execution: bool = False,
    limits: SandboxLimits | Mapping[str, Any] | None = None,
) -> Score:
    """1.0 when the completion passes the problem's tests in the sandbox, else 0.0.

    The row carries the problem (fields ``task_id``, ``prompt``, ``tests``, ``entry_point``),
    as :func:`aieval.code.evaluate_code` lays it out. The tests call the candidate's entry
    point; prompt functions they call (HumanEval/38's ``encode_cyclic``) are the prompt's own,
    run beside the tests, never the candidate's. ``metadata`` holds the sandbox status
    (``passed``, ``failed``, ``timeout``, ``memory_limit``, ``error``), the detail and timing.
    When the sandbox itself fails before the candidate runs (``sandbox_error``), there is no
    verdict to score: it raises :class:`~aieval.errors.ScorerError` (``sandbox_error: <cause>``),
    so the run counts the sample as an error, never as a failed candidate, and warns once a
    few executions have failed so.
    ``limits`` may be a mapping of :class:`~aieval.sandbox.SandboxLimits` fields, so the scorer
    can be described in JSON (a run spec shipped to Ray workers).
    """
    require_code_execution(allow_code_execution, what="code_passes")
    fields = example.fields if example is not None else {}
    tests = fields.get("tests")
    where = f"code_passes: row {example.id!r}" if example is not None else "code_passes"
    if not isinstance(tests, str | list) or not tests:
        raise DatasetError(f"{where} has no 'tests' field")
    problem = CodeProblem(
        task_id=str(fields.get("task_id", "")),
        prompt=str(fields.get("prompt", "")),
        tests=tests if isinstance(tests, str) else tuple(tests),
        entry_point=fields.get("entry_point"),
    )
    check_runnable(problem.tests, problem.entry_point, where)
    program = build_program(problem, "" if prediction is None else str(prediction))
    # the prompt's helpers the tests call (HumanEval/38's encode_cyclic) come from the prompt
    tests_run = with_prompt_definitions(problem.prompt, problem.entry_point, problem.tests)
    result = await execute_async(
        program, tests_run, entry_point=problem.entry_point, limits=_limits(limits)
    )
    if result.sandbox_failed:
        raise _sandbox_failed(problem.task_id, result.detail)
    return Score(
        value=1.0 if result.passed else 0.0,
        raw=result.tests_passed / result.tests_total if result.tests_total else 0.0,
        reason=result.detail,
        metadata={
            "status": result.status,
            "task_id": problem.task_id,
            "tests_passed": result.tests_passed,
            "tests_total": result.tests_total,
            "duration_s": round(result.duration_s, 4),
            "isolation": result.isolation,
        },
    )


def _limits(limits: SandboxLimits | Mapping[str, Any] | None) -> SandboxLimits:
    if isinstance(limits, Mapping):
        try:
            return SandboxLimits(**limits)
        except TypeError as exc:
            raise ConfigError(f"code_passes: limits: {exc}") from None
    return limits or SandboxLimits()
