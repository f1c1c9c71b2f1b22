"""Capture step timing, retries and failures of a Python workflow while it runs.

Inside a run, the runner installs a recorder; ``with step("review", agent_role="reviewer")``
in the user's code records the step's timing, status, retries and error. Outside a run the
context manager only times the block, so the same code works in production.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aieval.workflows._model import StepResult

__all__ = ["StepHandle", "recording", "step"]

_CURRENT: contextvars.ContextVar[list[StepResult] | None] = contextvars.ContextVar(
    "aieval_workflow_steps", default=None
)


@dataclass(slots=True)
class StepHandle:
    """What the code inside a ``step`` block may set: outputs, model, retries, metadata."""

    outputs: Any = None
    model_used: str | None = None
    retry_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)


@contextmanager
def step(
    name: str,
    *,
    agent_role: str | None = None,
    tier: int | str | None = None,
    inputs: Any = None,
) -> Iterator[StepHandle]:
    """Record one step of the running workflow; an exception marks it failed and propagates.

    Example:
        >>> with recording() as steps:
        ...     with step("plan", agent_role="planner") as s:
        ...         s.outputs = {"plan": "ok"}
        >>> steps[0].name, steps[0].status, steps[0].agent_role
        ('plan', 'success', 'planner')
    """
    handle = StepHandle()
    started = time.time()
    status, error, error_type = "success", None, None
    try:
        yield handle
    except BaseException as exc:
        status, error, error_type = "failed", str(exc) or type(exc).__name__, type(exc).__name__
        raise
    finally:
        steps = _CURRENT.get()
        if steps is not None:
            steps.append(
                StepResult(
                    name=name,
                    status="success" if status == "success" else "failed",
                    agent_role=agent_role,
                    tier=tier,
                    model_used=handle.model_used,
                    inputs=inputs,
                    outputs=handle.outputs,
                    error=error,
                    error_type=error_type,
                    start_time=started,
                    end_time=time.time(),
                    retry_count=handle.retry_count,
                    metadata=dict(handle.metadata),
                )
            )


@contextmanager
def recording() -> Iterator[list[StepResult]]:
    """Collect the steps recorded by :func:`step` in this context (and threads copying it)."""
    steps: list[StepResult] = []
    token = _CURRENT.set(steps)
    try:
        yield steps
    finally:
        _CURRENT.reset(token)
