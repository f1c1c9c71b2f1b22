"""The typed parts of online scoring that every stage shares: a rule, its filter, budget and
alert policy, the typed outcome of a matched trace, sampling by trace id and windows.

A rule comes from the server's command line (``aieval serve --online rules.yaml``) or from its
API with the server's own token, never from a trace: a trace's attributes are data that a
filter reads, nothing more (docs/security.md, "Online scoring")."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

__all__ = [
    "SKIP_REASONS",
    "WINDOWS",
    "WORK_STATES",
    "AlertPolicy",
    "AttributeMatch",
    "Budget",
    "OnlineRule",
    "RuleScoring",
    "SkipReason",
    "TraceFilter",
    "WindowKind",
    "WorkState",
    "sample_point",
    "sampled",
    "window_end",
    "window_run_name",
    "window_start",
]

#: Why a matched trace was not scored: each matched trace ends scored or with one of these.
SkipReason = Literal["sampled_out", "budget_exhausted", "incomplete", "error"]
SKIP_REASONS: tuple[SkipReason, ...] = get_args(SkipReason)
#: A matched trace's state in the rule's work queue.
WorkState = Literal["pending", "claimed", "scored", "skipped"]
WORK_STATES: tuple[WorkState, ...] = get_args(WorkState)
#: The windows a rule's results are kept by (UTC hours or days).
WindowKind = Literal["hour", "day"]
WINDOWS: dict[WindowKind, int] = {"hour": 3600, "day": 86400}


@dataclass(frozen=True, slots=True)
class AttributeMatch:
    """One condition on a span attribute: it ``equals`` a value, matches ``regex`` (a full
    match, checked against the server's expression limits when the rule is read), or
    ``exists`` (``False``: is absent). Exactly one of the three is set."""

    key: str
    equals: str | int | float | bool | None = None
    regex: str | None = None
    exists: bool | None = None


@dataclass(frozen=True, slots=True)
class TraceFilter:
    """Which traces a rule looks at: a trace matches when one of its spans meets every
    condition given (none given: every trace)."""

    service_name: str | None = None
    span_name: str | None = None
    attributes: tuple[AttributeMatch, ...] = ()


@dataclass(frozen=True, slots=True)
class Budget:
    """A rule's hard spend limits per UTC hour and day (``None``: no limit on that figure).

    No model call starts once a limit is reached: calls are reserved before they start;
    tokens and cost are known only when a call ends, so those overshoot by at most the calls
    in flight (one per worker)."""

    calls_per_hour: int | None = None
    calls_per_day: int | None = None
    tokens_per_hour: int | None = None
    tokens_per_day: int | None = None
    cost_per_hour: float | None = None
    cost_per_day: float | None = None

    def limits(self, period: WindowKind) -> tuple[int | None, int | None, float | None]:
        """``(calls, tokens, cost)`` allowed per ``period``."""
        if period == "hour":
            return self.calls_per_hour, self.tokens_per_hour, self.cost_per_hour
        return self.calls_per_day, self.tokens_per_day, self.cost_per_day

    @property
    def unlimited(self) -> bool:
        """Whether no limit is set at all."""
        return all(v is None for p in WINDOWS for v in self.limits(p))


@dataclass(frozen=True, slots=True)
class AlertPolicy:
    """When a rule alerts, on its windows' ``metric`` (the pass rate, with a Wilson interval,
    or the mean score of ``scorer``, with a t interval).

    ``floor``: alert when the interval's upper bound stays below it for ``consecutive``
    windows in a row. ``baseline``: alert when a window is worse than the baseline window
    (``"previous"``: the window before it; or the start of a window, ``YYYY-MM-DDTHH``) at
    level ``alpha``. ``webhook``: where the alert is POSTed (with retries; one alert per
    incident)."""

    metric: Literal["pass_rate", "mean"] = "pass_rate"
    scorer: str | None = None
    floor: float | None = None
    consecutive: int = 3
    baseline: str | None = None
    alpha: float = 0.001
    webhook: str | None = None
    min_samples: int = 20


@dataclass(frozen=True, slots=True)
class RuleScoring:
    """What a rule applies to each sampled trace: the same settings, by the same names and
    checks, as an eval file (``scorers`` and ``default_checks`` as entries there, a
    ``workflow`` definition, a scoring ``profile``, a ``grader``, ``imports``)."""

    scorers: tuple[str | dict[str, dict[str, Any]], ...] = ()
    default_checks: tuple[str | dict[str, dict[str, Any]], ...] = ()
    workflow: str | dict[str, Any] | None = None
    profile: str | None = None
    grader: str | None = None
    imports: tuple[str, ...] = ()
    pass_threshold: float = 0.5
    enforce_hard_gates: bool = True


@dataclass(frozen=True, slots=True)
class OnlineRule:
    """One online scoring rule (docs/online.md).

    Attributes:
        name: unique; its windows are stored as runs ``online/<name>/<window>``.
        filter: the traces it looks at.
        sampling_rate: the share of matched traces scored (by trace id: see :func:`sampled`).
        scoring: what each sampled trace is scored with.
        budget: the rule's hard spend limits.
        window: results are kept per UTC ``hour`` or ``day``.
        settle_s: a trace is looked at this long after its last span arrived.
        incomplete_after_s: a trace still incomplete (``trace_complete`` fails) this long
            after its last span is skipped as ``incomplete``, not scored as a failure.
        alert: when it alerts (``None``: never).
        review: the review queue its failing or unsure items are sent to (``None``: none).
        paused: a paused rule matches nothing new and claims nothing.
    """

    name: str
    filter: TraceFilter = field(default_factory=TraceFilter)
    sampling_rate: float = 1.0
    scoring: RuleScoring = field(default_factory=RuleScoring)
    budget: Budget = field(default_factory=Budget)
    window: WindowKind = "hour"
    settle_s: float = 30.0
    incomplete_after_s: float = 600.0
    alert: AlertPolicy | None = None
    review: str | None = None
    paused: bool = False


def sample_point(trace_id: str) -> float:
    """Where ``trace_id`` falls in [0, 1): the first 64 bits of its BLAKE2b digest over 2**64
    (a digest, so ids that are not random still spread evenly)."""
    digest = hashlib.blake2b(trace_id.lower().encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def sampled(trace_id: str, rate: float) -> bool:
    """Whether ``trace_id`` is sampled at ``rate``: the same answer every time, and the traces
    sampled at a lower rate are a subset of those sampled at a higher one."""
    return sample_point(trace_id) < rate


def window_start(at: float, kind: WindowKind) -> float:
    """The start (epoch seconds, UTC) of the ``kind`` window holding time ``at``."""
    size = WINDOWS[kind]
    return float(math.floor(at / size) * size)


def window_end(start: float, kind: WindowKind) -> float:
    """The end (exclusive) of the window starting at ``start``."""
    return start + WINDOWS[kind]


def window_run_name(rule: str, start: float, kind: WindowKind) -> str:
    """The stored run of ``rule``'s window starting at ``start``: ``online/<rule>/<YYYY-MM-DD>``
    for a day, ``online/<rule>/<YYYY-MM-DDTHH>`` for an hour (UTC)."""
    moment = datetime.fromtimestamp(start, UTC)
    label = moment.strftime("%Y-%m-%d" if kind == "day" else "%Y-%m-%dT%H")
    return f"online/{rule}/{label}"
