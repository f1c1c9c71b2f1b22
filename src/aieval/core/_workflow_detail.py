"""A typed, read-only view of a workflow verdict's stored detail (``Verdict.workflow``).

Reports, the command line and the workflow summary read a graded run's grade, gates, missing
criteria, score coverage, agents and steps through :class:`WorkflowDetail` rather than by key.
The stored detail itself (the workflow evaluation's JSON, as earlier versions stored it too)
stays as it is; a field it lacks, or holds in another shape, reads as empty or ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AgentDetail", "StepDetail", "ToolCallDetail", "WeightCoverage", "WorkflowDetail"]


@dataclass(frozen=True, slots=True)
class ToolCallDetail:
    """One tool call of a step: its name, whether it ran, its status (``None``: unknown)."""

    name: str
    executed: bool | None = None
    status: str | None = None

    @classmethod
    def of(cls, data: Any) -> ToolCallDetail:
        """A stored tool call (an entry that is not an object is its own name)."""
        if not isinstance(data, Mapping):
            return cls(str(data))
        executed, status = data.get("executed"), data.get("status")
        return cls(
            str(data.get("name")),
            executed if isinstance(executed, bool) else None,
            None if status is None else str(status),
        )


@dataclass(frozen=True, slots=True)
class StepDetail:
    """One step of a graded run, as ``aieval show`` lists it (``None``: unknown)."""

    name: str
    agent: str | None = None
    status: str = "None"
    duration_s: float | None = None
    model_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens: int | None = None
    tool_calls: tuple[ToolCallDetail, ...] = ()

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> StepDetail:
        """A stored ``step_details`` entry."""
        agent, calls = data.get("agent"), data.get("tool_calls")
        return cls(
            name=str(data.get("name")),
            agent=str(agent) if agent else None,
            status=str(data.get("status")),
            duration_s=_number(data.get("duration_s")),
            model_calls=_whole(data.get("model_calls")) or 0,
            input_tokens=_whole(data.get("input_tokens")),
            output_tokens=_whole(data.get("output_tokens")),
            tokens=_whole(data.get("tokens")),
            tool_calls=tuple(ToolCallDetail.of(c) for c in _items(calls)),
        )


@dataclass(frozen=True, slots=True)
class AgentDetail:
    """One agent role's roll-up over a run's steps: its steps, failed steps and retries, its
    mean step scores, and its summed duration, tokens and cost (``None`` when unknown)."""

    steps: int = 0
    failures: int = 0
    retries: int = 0
    scores: Mapping[str, float] = field(default_factory=dict, hash=False)
    duration_s: float | None = None
    tokens: float | None = None
    cost_usd: float | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> AgentDetail:
        """A stored ``agents`` entry (counts that are not numbers count 0)."""
        scores = _mapping(data.get("scores"))
        return cls(
            steps=_count(data.get("steps")),
            failures=_count(data.get("failures")),
            retries=_count(data.get("retries")),
            scores={str(k): v for k, value in scores.items() if (v := _number(value)) is not None},
            duration_s=_number(data.get("duration_s")),
            tokens=_number(data.get("tokens")),
            cost_usd=_number(data.get("cost_usd")),
        )


@dataclass(frozen=True, slots=True)
class WeightCoverage:
    """Which share (0..1) of the profile's weights a weighted score stands on, and the
    criteria left out of it."""

    share: float | None = None
    unscored: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkflowDetail:
    """What a workflow grader recorded about one run, typed.

    Attributes:
        workflow: the workflow's id (or the run's name).
        profile: the scoring profile.
        passed: the evaluation's own pass flag.
        grade: the letter grade.
        reasons: why the run did not pass; ``placement`` why it landed in its grade.
        hard_gates: ``{gate: passed}``, as evaluated (enforced or not).
        missing_criteria: the criteria without a usable score, by name.
        coverage: the share of the weights the weighted score covers, when recorded.
        latency_s: the run's duration (efficiency layer); ``retry_amplification`` its retries.
        slo: the profile's SLO per efficiency metric, as ``(good, bad)``.
        agents: the per-agent roll-up, by role.
        steps: each step, in order.
    """

    workflow: str | None = None
    profile: str | None = None
    passed: bool = False
    grade: str | None = None
    reasons: tuple[str, ...] = ()
    placement: tuple[str, ...] = ()
    hard_gates: Mapping[str, bool] = field(default_factory=dict, hash=False)
    missing_criteria: tuple[str, ...] = ()
    coverage: WeightCoverage | None = None
    latency_s: float | None = None
    retry_amplification: float | None = None
    slo: Mapping[str, tuple[float, float]] = field(default_factory=dict, hash=False)
    agents: Mapping[str, AgentDetail] = field(default_factory=dict, hash=False)
    steps: tuple[StepDetail, ...] = ()

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> WorkflowDetail:
        """The view of a stored workflow evaluation (``WorkflowEvaluation.to_dict``)."""
        efficiency = _mapping(data.get("efficiency"))
        raw = _mapping(efficiency.get("raw"))
        workflow, profile, grade = data.get("workflow"), data.get("profile"), data.get("grade")
        return cls(
            workflow=str(workflow) if workflow else None,
            profile=None if profile is None else str(profile),
            passed=bool(data.get("passed")),
            grade=None if grade is None else str(grade),
            reasons=tuple(str(r) for r in _items(data.get("reasons"))),
            placement=tuple(str(p) for p in _items(data.get("placement"))),
            hard_gates={str(k): bool(v) for k, v in _mapping(data.get("hard_gates")).items()},
            missing_criteria=tuple(
                str(m["name"])
                for m in _items(data.get("missing_criteria"))
                if isinstance(m, Mapping) and m.get("name") is not None
            ),
            coverage=_coverage(data.get("score_coverage")),
            latency_s=_number(raw.get("latency_s")),
            retry_amplification=_number(raw.get("retry_amplification")),
            slo={
                str(metric): (good, bad)
                for metric, bounds in _mapping(efficiency.get("slo")).items()
                if isinstance(bounds, Mapping)
                and (good := _number(bounds.get("good"))) is not None
                and (bad := _number(bounds.get("bad"))) is not None
            },
            agents={
                str(role): AgentDetail.of(entry)
                for role, entry in _mapping(data.get("agents")).items()
                if isinstance(entry, Mapping)
            },
            steps=tuple(
                StepDetail.of(s) for s in _items(data.get("step_details")) if isinstance(s, Mapping)
            ),
        )

    @property
    def why(self) -> tuple[str, ...]:
        """Why the run landed where it did: its reasons, else its grade's placement line."""
        return self.reasons or self.placement[:1]


def _coverage(data: Any) -> WeightCoverage | None:
    if not isinstance(data, Mapping):
        return None
    share = data.get("share")
    return WeightCoverage(
        float(share) if isinstance(share, int | float) and not isinstance(share, bool) else None,
        tuple(str(n) for n in _items(data.get("unscored"))),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Any] | tuple[Any, ...]:
    return value if isinstance(value, list | tuple) else ()


def _number(value: Any) -> float | None:
    """A finite number (not a bool) as a float, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _count(value: Any) -> int:
    """A count: a bool as 0/1, a finite number truncated, anything else 0."""
    if isinstance(value, int):  # a bool too
        return int(value)
    return 0 if _number(value) is None else int(value)
