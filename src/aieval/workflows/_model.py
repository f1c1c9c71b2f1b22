"""The workflow run model: a run's overall status, final outputs, timings and steps.

Runs recorded by agentic workflow engines as JSON (``workflow_id``, ``workflow_name``, ``steps``,
``overall_status``, ``final_output``, ``start_time``, ``end_time``, ``metadata``) load directly:
unknown fields are kept in ``extra``, missing optional ones take their defaults. Run logs that
flatten a result (``run_id``, ``status``, per-step ``tokens_used``, ``duration_ms``, ``input`` and
``output``, run ``total_duration_ms``) load too. ``to_dict`` writes the ``WorkflowResult`` shape
back: integer tiers stay integers and absent fields are omitted rather than written as ``null``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from aieval._files import readable
from aieval._json import loads_strict
from aieval.errors import WorkflowError
from aieval.workflows._model_calls import checked_model_calls, token_total, unpriced
from aieval.workflows._reading import (
    UNRESOLVED_KEYS,
    checked_amounts,
    count,
    mapping,
    opt_str,
    output_names,
    pick,
    recorded_duration,
    tier,
)
from aieval.workflows._tokens import token_metadata

__all__ = ["STEP_STATUSES", "StepResult", "StepStatus", "WorkflowRun", "load_run", "load_runs"]

StepStatus = Literal["pending", "running", "success", "failed", "skipped", "retrying"]

#: Every status a step can have.
STEP_STATUSES: tuple[str, ...] = get_args(StepStatus)

_STATUS_ALIASES = {
    "succeeded": "success",
    "completed": "success",
    "ok": "success",
    "error": "failed",
    "failure": "failed",
    "timeout": "failed",
    "timed_out": "failed",
    "cancelled": "failed",
    "canceled": "failed",
    "queued": "pending",
    "in_progress": "running",
}
_MAX_RUN_BYTES = 50_000_000

_STEP_KEYS = {
    "name": ("name", "step_name", "step", "id"),
    "status": ("status",),
    "agent_role": ("agent_role", "agent", "role"),
    "tier": ("tier", "model_tier"),
    "model_used": ("model_used", "model"),
    "inputs": ("inputs", "input_data", "input"),
    "outputs": ("outputs", "output_data", "output"),
    "error": ("error",),
    "error_type": ("error_type",),
    "start_time": ("start_time", "started_at"),
    "end_time": ("end_time", "ended_at", "finished_at"),
    "retry_count": ("retry_count", "retries"),
    "metadata": ("metadata",),
    "duration_s": ("duration_s",),
    "duration_ms": ("duration_ms",),
    "tokens_used": ("tokens_used",),
}
_RUN_KEYS = {
    "workflow_id": ("workflow_id", "id"),
    "run_id": ("run_id",),
    "workflow_name": ("workflow_name", "name", "workflow"),
    "version": ("version", "workflow_version"),
    "status": ("overall_status", "status"),
    "outputs": ("final_output", "outputs", "final_outputs"),
    "start_time": ("start_time", "started_at"),
    "end_time": ("end_time", "ended_at", "finished_at"),
    "metadata": ("metadata",),
    "inputs": ("inputs", "input"),
    "error": ("error",),
    "steps": ("steps",),
    "duration_s": ("duration_s",),
    "duration_ms": ("total_duration_ms", "duration_ms"),
    "tokens_used": ("tokens_used",),
}


@dataclass(slots=True)
class StepResult:
    """One step of a workflow run.

    Attributes:
        name: the step's name, unique within the run.
        status: ``pending``, ``running``, ``success``, ``failed``, ``skipped`` or ``retrying``.
        agent_role: the agent that ran it (``reviewer``, ``planner``, ...), if any.
        tier: the model tier used (an integer level such as ``2``, or a name such as
            ``tier1`` or ``fast``), if any; an integer stays an integer.
        model_used: the model that served it, if any.
        inputs: what the step received.
        outputs: what it produced.
        error: the error message when it failed.
        error_type: the error's class or category.
        start_time: start, as a UTC timestamp in seconds.
        end_time: end, as a UTC timestamp in seconds.
        retry_count: how many times it was retried.
        metadata: anything else; ``tokens``/``tokens_used``/``input_tokens``/``output_tokens``,
            ``cost`` (USD), ``scores`` (step-level scores) and ``tool_calls`` are read by the
            evaluation. A run log's step-level ``tokens_used`` (a total, or an object of
            ``input``/``output``/``total`` tokens) is read into these keys.
        extra: fields of the source record that this model does not know.
        recorded_duration_s: the duration the source recorded (``duration_s``, or
            ``duration_ms`` / 1000), used when start and end times are not both known.
    """

    name: str
    status: StepStatus = "success"
    agent_role: str | None = None
    tier: int | str | None = None
    model_used: str | None = None
    inputs: Any = None
    outputs: Any = None
    error: str | None = None
    error_type: str | None = None
    start_time: float | None = None
    end_time: float | None = None
    retry_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    recorded_duration_s: float | None = None

    def __post_init__(self) -> None:
        self.metadata = _metadata(self.metadata, None, f"step {self.name!r}")

    @property
    def duration_s(self) -> float | None:
        """End minus start in seconds, else the recorded duration (or ``metadata.duration_s``)."""
        return _duration(self.start_time, self.end_time, self.recorded_duration_s, self.metadata)

    @property
    def tokens(self) -> int | None:
        """Tokens used by the step: ``metadata.tokens`` or input plus output tokens."""
        return _tokens(self.metadata)

    @property
    def cost(self) -> float | None:
        """Cost in USD: ``metadata.cost`` (or ``cost_usd``)."""
        return _number(self.metadata, "cost", "cost_usd")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "step") -> StepResult:
        """Build a step from a recorded JSON object; errors name ``where`` and the field."""
        if not isinstance(data, Mapping):
            raise WorkflowError(f"{where}: a step must be an object, got {type(data).__name__}")
        got, extra, names = pick(data, _STEP_KEYS, where)
        name = got.get("name")
        if not isinstance(name, str | int) or name == "":
            raise WorkflowError(f"{where}: field 'step_name' (or 'name') is required")
        # run logs lift tokens_used out of the step's metadata; it goes back there
        metadata = _metadata(got.get("metadata"), got.get("tokens_used"), where)
        return cls(
            name=str(name),
            status=parse_status(got.get("status", "success"), f"{where}, field 'status'"),
            agent_role=opt_str(got.get("agent_role")),
            tier=tier(got.get("tier"), f"{where}, field 'tier'"),
            model_used=opt_str(got.get("model_used")),
            inputs=got.get("inputs"),
            outputs=got.get("outputs"),
            error=opt_str(got.get("error")),
            error_type=opt_str(got.get("error_type")),
            start_time=parse_time(got.get("start_time"), f"{where}, field 'start_time'"),
            end_time=parse_time(got.get("end_time"), f"{where}, field 'end_time'"),
            retry_count=count(got.get("retry_count", 0), f"{where}, field 'retry_count'"),
            metadata=metadata,
            extra=extra,
            recorded_duration_s=recorded_duration(got, where, names),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data in the recorded-run shape (``step_name``, ``input_data``...); fields
        with no value are omitted."""
        known = {
            "step_name": self.name,
            "status": self.status,
            "agent_role": self.agent_role,
            "tier": self.tier,
            "model_used": self.model_used,
            "input_data": self.inputs,
            "output_data": self.outputs,
            "error": self.error,
            "error_type": self.error_type,
            "start_time": _iso(self.start_time),
            "end_time": _iso(self.end_time),
            "retry_count": self.retry_count,
            "duration_s": self.duration_s,
            "metadata": self.metadata,
        }
        return {**_present(known), **self.extra}


@dataclass(slots=True)
class WorkflowRun:
    """One run of a workflow (single-turn, DAG, single-agent or multi-agent).

    Attributes:
        workflow_id: the run's (or workflow's) id.
        workflow_name: the workflow's name.
        version: the workflow version, if recorded.
        status: the overall status (``success``, ``failed``, ``partial``...).
        outputs: the final outputs by name (``None`` when the run produced none).
        steps: the steps, in execution order.
        start_time: start, as a UTC timestamp in seconds.
        end_time: end, as a UTC timestamp in seconds.
        metadata: anything else; ``scores``, ``unresolved_outputs``, ``gates`` and ``inputs``
            are read by the evaluation.
        inputs: the inputs the run received, if recorded.
        error: why the run failed, when it did.
        extra: fields of the source record that this model does not know.
        recorded_duration_s: the duration the source recorded (``duration_s``, or
            ``total_duration_ms`` / 1000), used when start and end times are not both known.
        run_id: the run's own id when the source records one (``run_id``) beside the
            ``workflow_id``; a record with only a ``run_id`` uses it as ``workflow_id`` too.

    Example:
        >>> run = WorkflowRun.from_dict({"workflow_id": "r1", "workflow_name": "review",
        ...     "overall_status": "success", "final_output": {"summary": "ok"},
        ...     "steps": [{"step_name": "lint", "status": "success"}], "trace_id": "t-9"})
        >>> run.status, run.steps[0].name, run.extra
        ('success', 'lint', {'trace_id': 't-9'})
    """

    workflow_id: str
    workflow_name: str = ""
    version: str | None = None
    status: str = "success"
    outputs: dict[str, Any] | None = None
    steps: list[StepResult] = field(default_factory=list)
    start_time: float | None = None
    end_time: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    recorded_duration_s: float | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        self.metadata = _metadata(self.metadata, None, f"run {self.workflow_id!r}")

    @property
    def duration_s(self) -> float | None:
        """End minus start in seconds, else the recorded duration (or ``metadata.duration_s``),
        else the steps' span."""
        own = _duration(self.start_time, self.end_time, self.recorded_duration_s, self.metadata)
        if own is not None:
            return own
        starts = [s.start_time for s in self.steps if s.start_time is not None]
        ends = [s.end_time for s in self.steps if s.end_time is not None]
        return max(ends) - min(starts) if starts and ends else None

    @property
    def retries(self) -> int:
        """Retries summed over the steps."""
        return sum(s.retry_count for s in self.steps)

    @property
    def tokens(self) -> int | None:
        """Tokens over the run: ``metadata`` totals, else the steps' sum (``None``: unknown)."""
        own = _tokens(self.metadata)
        if own is not None:
            return own
        if self._unreported_calls:
            return None
        known = [t for t in (s.tokens for s in self.steps) if t is not None]
        return sum(known) if known else None

    @property
    def _unreported_calls(self) -> bool:
        """Whether a model call of a step (``metadata.model_calls``) reported no tokens: the
        steps' sums are then only part of the run's tokens, which are unknown."""
        totals = (token_total(s.metadata) for s in self.steps)
        return any(t is not None and not t.complete for t in totals)

    @property
    def input_tokens(self) -> int | None:
        """Prompt tokens: ``metadata.input_tokens``, else the steps' sum (``None``: unknown,
        also when a step's model call reported none)."""
        if _number(self.metadata, "input_tokens") is None and self._unreported_calls:
            return None
        total = _own_or_sum(
            self.metadata, (_number(s.metadata, "input_tokens") for s in self.steps), "input_tokens"
        )
        return None if total is None else int(total)

    @property
    def output_tokens(self) -> int | None:
        """Completion tokens: ``metadata.output_tokens``, else the steps' sum."""
        if _number(self.metadata, "output_tokens") is None and self._unreported_calls:
            return None
        total = _own_or_sum(
            self.metadata,
            (_number(s.metadata, "output_tokens") for s in self.steps),
            "output_tokens",
        )
        return None if total is None else int(total)

    @property
    def cost(self) -> float | None:
        """Cost in USD: ``metadata.cost``, else the steps' sum (``None``: unknown, also when a
        step's model call that answered reported no cost)."""
        names = ("cost", "cost_usd", "total_cost")
        if _number(self.metadata, *names) is None and any(unpriced(s.metadata) for s in self.steps):
            return None
        return _own_or_sum(
            self.metadata, (s.cost for s in self.steps), "cost", "cost_usd", "total_cost"
        )

    def step(self, name: str) -> StepResult | None:
        """The step named ``name``, if the run has one."""
        return next((s for s in self.steps if s.name == name), None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<run>") -> WorkflowRun:
        """Build a run from a recorded ``WorkflowResult`` object; errors name source and field."""
        if not isinstance(data, Mapping):
            raise WorkflowError(f"{source}: a run must be a JSON object, got {type(data).__name__}")
        got, extra, names = pick(data, _RUN_KEYS, source)
        steps_raw = got.get("steps") or []
        if not isinstance(steps_raw, list):
            raise WorkflowError(f"{source}: field 'steps' must be a list")
        steps = [
            StepResult.from_dict(s, where=f"{source}, steps[{i}]") for i, s in enumerate(steps_raw)
        ]
        metadata = _metadata(got.get("metadata"), got.get("tokens_used"), source)
        for key in UNRESOLVED_KEYS:  # read by the required_outputs_present gate
            output_names(metadata.get(key), f"{source}, field 'metadata.{key}'")
        inputs = got.get("inputs", metadata.get("inputs"))
        outputs = got.get("outputs")
        if outputs is not None and not isinstance(outputs, Mapping):
            outputs = {"output": outputs}  # single-turn runs record one bare answer
        run_id = opt_str(got.get("run_id")) or None
        workflow_id = opt_str(got.get("workflow_id")) or run_id
        return cls(
            workflow_id=workflow_id or Path(source).stem,
            run_id=run_id,
            workflow_name=str(got.get("workflow_name") or ""),
            version=opt_str(got.get("version")),
            status=_run_status(got.get("status", "success")),
            outputs=dict(outputs) if outputs is not None else None,
            steps=steps,
            start_time=parse_time(got.get("start_time"), f"{source}, field 'start_time'"),
            end_time=parse_time(got.get("end_time"), f"{source}, field 'end_time'"),
            metadata=metadata,
            inputs=dict(inputs) if isinstance(inputs, Mapping) else None,
            error=opt_str(got.get("error")),
            extra=extra,
            recorded_duration_s=recorded_duration(got, source, names),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data in the recorded ``WorkflowResult`` shape; fields with no value are
        omitted (that schema refuses ``null`` for ``final_output`` or ``start_time``)."""
        known = {
            "workflow_id": self.workflow_id,
            "run_id": self.run_id,
            "workflow_name": self.workflow_name,
            "version": self.version,
            "overall_status": self.status,
            "final_output": self.outputs,
            "steps": [s.to_dict() for s in self.steps],
            "start_time": _iso(self.start_time),
            "end_time": _iso(self.end_time),
            "duration_s": self.duration_s,
            "inputs": self.inputs,
            "error": self.error,
            "metadata": self.metadata,
        }
        return {**_present(known), **self.extra}


def load_run(path: str | Path) -> WorkflowRun:
    """Read one recorded run (a ``WorkflowResult`` JSON file).

    Raises:
        WorkflowError: unreadable file, invalid JSON, or a bad field (names file and field).
    """
    file = readable(path, "run log")
    if not file.is_file():
        raise WorkflowError(f"{file}: run log not found")
    if file.stat().st_size > _MAX_RUN_BYTES:
        raise WorkflowError(f"{file}: run log is larger than {_MAX_RUN_BYTES} bytes")
    try:
        data = loads_strict(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise WorkflowError(f"{file}: not valid JSON: {exc}") from None
    return WorkflowRun.from_dict(data, source=str(file))


def load_runs(folder: str | Path) -> list[WorkflowRun]:
    """Read every ``*.json`` run log of a folder, sorted by file name."""
    directory = readable(folder, "run logs")
    if not directory.is_dir():
        raise WorkflowError(f"{directory}: not a folder of run logs")
    files = [readable(f, f"run log {f.name}") for f in sorted(directory.glob("*.json"))]
    if not files:
        raise WorkflowError(f"{directory}: holds no *.json run logs")
    return [load_run(f) for f in files]


def parse_status(value: Any, where: str) -> StepStatus:
    """A step status from text or a str-valued enum (``StepStatus.SUCCESS`` works too)."""
    raw = str(getattr(value, "value", value)).strip().lower()
    raw = raw.removeprefix("stepstatus.")
    raw = _STATUS_ALIASES.get(raw, raw)
    if raw not in STEP_STATUSES:
        raise WorkflowError(
            f"{where}: unknown status {value!r}; use one of {', '.join(STEP_STATUSES)}"
        )
    return cast(StepStatus, raw)


def _run_status(value: Any) -> str:
    raw = str(getattr(value, "value", value)).strip().lower()
    return _STATUS_ALIASES.get(raw, raw)


def parse_time(value: Any, where: str) -> float | None:
    """A timestamp from epoch seconds or ISO 8601 text (naive times are taken as UTC)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise WorkflowError(f"{where}: expected a time, got {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise WorkflowError(f"{where}: expected a finite time, got {value!r}")
        return float(value)
    if isinstance(value, str):
        try:
            stamp = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise WorkflowError(f"{where}: {value!r} is not an ISO 8601 time") from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.UTC)
        return stamp.timestamp()
    raise WorkflowError(f"{where}: expected a time, got {type(value).__name__}")


def _metadata(raw: Any, tokens_used: Any, where: str) -> dict[str, Any]:
    """A record's metadata with its amounts and token counts checked and a top-level
    ``tokens_used`` moved in (see :func:`token_metadata`)."""
    metadata = checked_amounts(mapping(raw, f"{where}, field 'metadata'"), where)
    return checked_model_calls(token_metadata(metadata, tokens_used, where), where)


def _iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat()


def _present(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without its ``None`` values: an absent known field is left out, never ``null``
    (fields the model does not know are written back as the source had them)."""
    return {k: v for k, v in data.items() if v is not None}


def _duration(
    start: float | None, end: float | None, recorded: float | None, metadata: Mapping[str, Any]
) -> float | None:
    if start is not None and end is not None:
        return max(0.0, end - start)
    if recorded is not None:
        return recorded
    seconds = _number(metadata, "duration_s")
    if seconds is not None:
        return seconds
    millis = _number(metadata, "duration_ms")
    return millis / 1000 if millis is not None else None


def _tokens(metadata: Mapping[str, Any]) -> int | None:
    total = _number(metadata, "tokens", "total_tokens", "tokens_used")
    if total is not None:
        return int(total)
    parts = [_number(metadata, "input_tokens"), _number(metadata, "output_tokens")]
    known = [p for p in parts if p is not None]
    return int(sum(known)) if known else None


def _own_or_sum(
    metadata: Mapping[str, Any], per_step: Iterable[float | None], *names: str
) -> float | None:
    """The run's own total under one of ``names``, else the sum of the steps' known values."""
    own = _number(metadata, *names)
    if own is not None:
        return own
    known = [v for v in per_step if v is not None]
    return sum(known) if known else None


def _number(metadata: Mapping[str, Any], *names: str) -> float | None:
    for name in names:
        value = metadata.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None
