"""The pass policy a run must meet inside a test, and the verdict with its reasons."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval._floors import at_least, shown_apart
from aieval.core import coverage_note
from aieval.errors import ConfigError
from aieval.runner import RunResult

__all__ = ["EvalFailed", "EvalPolicy", "EvalVerdict", "assert_run", "check_run", "run_eval_file"]

_SHOWN = 5


class EvalFailed(AssertionError):
    """A run missed its policy; the message holds the run's summary and every reason."""

    def __init__(self, verdict: EvalVerdict) -> None:
        super().__init__(verdict.message())
        self.verdict = verdict


@dataclass(frozen=True, slots=True)
class EvalPolicy:
    """What a run must reach for the test to pass.

    Attributes:
        min_pass_rate: share of samples that must pass (1.0: every one).
        min_metrics: per scorer, the lowest acceptable mean score.
        max_errors: how many target or scorer errors are tolerated.

    Both minimums are met by a value equal to them up to float rounding (one part in 10**9,
    :func:`aieval.stats.at_least`): ten scores of 0.1 meet a minimum of 0.1. A sample every
    scorer found not applicable ("unscored") is not passed, and a run in which a scorer scored
    no sample at all never meets a policy. The run's own minimums (an eval file's
    ``min_pass_rate`` and ``min:``, which make ``aieval run`` fail) are checked as well.
    """

    min_pass_rate: float = 1.0
    min_metrics: Mapping[str, float] = field(default_factory=dict)
    max_errors: int = 0

    def __post_init__(self) -> None:
        if not _unit(self.min_pass_rate):
            raise ConfigError(f"min_pass_rate must be in 0..1, got {self.min_pass_rate!r}")
        bad = {k: v for k, v in self.min_metrics.items() if not _unit(v)}
        if bad:
            raise ConfigError(f"min_metrics values must be in 0..1, got {bad}")
        if isinstance(self.max_errors, bool) or not isinstance(self.max_errors, int):
            raise ConfigError(f"max_errors must be an integer, got {self.max_errors!r}")
        if self.max_errors < 0:
            raise ConfigError(f"max_errors must be >= 0, got {self.max_errors!r}")

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> EvalPolicy:
        """A policy from keyword options (a marker's or a helper's); unknown keys are refused."""
        known = {"min_pass_rate", "min_metrics", "max_errors"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ConfigError(
                f"unknown aieval policy option(s): {', '.join(unknown)}; "
                f"use {', '.join(sorted(known))}"
            )
        return cls(**dict(options))


@dataclass(frozen=True, slots=True)
class EvalVerdict:
    """Whether a run met its policy, its one-line summary, and why not."""

    passed: bool
    summary: str
    reasons: list[str]

    def message(self) -> str:
        """The summary, then one line per reason (what a failed test shows)."""
        lines = [self.summary, *(f"  - {r}" for r in self.reasons)]
        return "\n".join(lines if self.reasons else [self.summary, "  policy met"])


def check_run(result: RunResult, policy: EvalPolicy | None = None) -> EvalVerdict:
    """Judge one run against ``policy`` (default: every sample passes, no errors).

    Example:
        >>> from aieval import run
        >>> from aieval.scorers import exact_match
        >>> result = run(name="doc", dataset=[{"prompt": "2+2?", "expected": "4",
        ...              "prediction": "5"}], scorers=[exact_match], store=False)
        >>> verdict = check_run(result)
        >>> verdict.passed, verdict.reasons[0]
        (False, 'pass rate 0.00 is below the required 1.00; failing: 0 (exact_match 0.00)')
    """
    rules = policy or EvalPolicy()
    reasons: list[str] = []
    rate = result.pass_rate
    if rate is None:
        reasons.append("the run has no samples")
    elif not at_least(rate, rules.min_pass_rate):
        shown, required = shown_apart(rate, rules.min_pass_rate, 2)
        reasons.append(
            f"pass rate {shown} is below the required {required}; failing: {_failing(result)}"
        )
    for name, floor in rules.min_metrics.items():
        value = result.metrics.get(name)
        if value is None:
            have = ", ".join(sorted(result.metrics)) or "none"
            reasons.append(f"metric {name!r} has no value (metrics: {have})")
        elif not at_least(value, floor):
            shown, required = shown_apart(value, floor)
            reasons.append(f"metric {name} {shown} is below the required {required}")
    if result.errors > rules.max_errors:
        reasons.append(
            f"{result.errors} error(s), more than the {rules.max_errors} allowed: {_errors(result)}"
        )
    for missed in result.missed_minimums:  # the eval's own ``min_pass_rate`` / ``min:``
        reasons.append(f"the run's own minimum was missed: {missed}")
    for name in result.unscored_scorers:
        reasons.append(
            f"scorer {name!r} scored no sample (n/a {result.not_applicable.get(name, 0)}):"
            " a run that scored nothing does not pass"
        )
    if result.status != "completed":
        reasons.append(f"the run ended {result.status!r}, not 'completed'")
    return EvalVerdict(not reasons, _summary(result), reasons)


def assert_run(
    result: RunResult | Iterable[RunResult],
    *,
    policy: EvalPolicy | None = None,
    **options: Any,
) -> None:
    """Fail the calling test (raise :class:`EvalFailed`) when a run misses the policy.

    ``options`` are :class:`EvalPolicy` fields (``min_pass_rate=``, ``min_metrics=``,
    ``max_errors=``); several runs (one per model of an eval file) are checked together.
    """
    rules = policy or EvalPolicy.of(options)
    results, wrong = runs_of(result)
    if wrong is not None:
        raise ConfigError(
            f"assert_run got {wrong}; pass the RunResult of run() (or a list of them)"
        )
    verdicts = [check_run(r, rules) for r in results]
    failed = [v for v in verdicts if not v.passed]
    if failed:
        merged = EvalVerdict(False, failed[0].summary, [x for v in failed for x in v.reasons])
        if len(failed) > 1:
            merged = EvalVerdict(False, "\n".join(v.message() for v in failed), [])
        raise EvalFailed(merged)


def runs_of(value: object) -> tuple[list[RunResult], str | None]:
    """``value`` as a list of runs, or what is wrong with it (words that follow "got").

    A run, or a non-empty list, tuple or other iterable of runs, is accepted; anything else
    (None, a string, a mapping, an item that is not a run) is described by its type and value.

    >>> runs_of("ok")[1]
    "str 'ok', not a RunResult or a list of them"
    >>> runs_of([None])[1]
    'a list whose item 0 is NoneType (None), not a RunResult'
    """
    if isinstance(value, RunResult):
        return [value], None
    if value is None:
        return [], "no run (None)"
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        return [], f"{type(value).__name__} {_brief(value)}, not a RunResult or a list of them"
    items = list(value)
    kind = type(value).__name__
    if not items:
        return [], f"an empty {kind}: no run to check"
    for index, item in enumerate(items):
        if not isinstance(item, RunResult):
            what = f"{type(item).__name__} ({_brief(item)})"
            return [], f"a {kind} whose item {index} is {what}, not a RunResult"
    return items, None


def _brief(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def run_eval_file(path: str | Path, **options: Any) -> list[RunResult]:
    """Run an eval file (YAML or JSON) as ``aieval run`` does: one result per run.

    ``options`` go to :func:`aieval.runner.run_eval` (``store=``, ``limit=``, ``models=``...).
    """
    from aieval.runner import load_eval, run_eval

    return run_eval(load_eval(path), **options)


def _summary(result: RunResult) -> str:
    samples = result.summary.samples
    rate = "n/a" if result.pass_rate is None else f"{result.pass_rate:.2f}"
    metrics = ", ".join(
        f"{name} {value:.3f}" if value is not None else f"{name} n/a"
        for name, value in result.metrics.items()
    )
    model = f" [{result.model}]" if result.model else ""
    return (
        f"aieval run {result.name!r}{model} ({result.id}): {samples} samples, pass rate {rate}"
        + coverage_note(result.low_coverage)
        + (f"; {metrics}" if metrics else "")
        + f"; errors {result.errors}"
        + (
            f"; n/a {sum(result.not_applicable.values())}"
            if any(result.not_applicable.values())
            else ""
        )
        + (f"; unscored {result.unscored}" if result.unscored else "")
    )


def _failing(result: RunResult) -> str:
    failing = [s for s in result.samples if not s.passed]
    shown = []
    for sample in failing[:_SHOWN]:
        why = sample.errors or {
            name: f"{score.value:.2f}"
            for name, score in sample.scores.items()
            if score.value is not None
        }
        detail = ", ".join(f"{k} {v}" for k, v in why.items()) or (
            "unscored: every scorer n/a" if sample.unscored else ""
        )
        shown.append(f"{sample.id} ({detail})" if detail else sample.id)
    more = f" and {len(failing) - _SHOWN} more" if len(failing) > _SHOWN else ""
    return "; ".join(shown) + more if shown else "samples not available"


def _errors(result: RunResult) -> str:
    found = [(s.id, k, v) for s in result.samples for k, v in s.errors.items()]
    shown = "; ".join(f"{sid} {where}: {message}" for sid, where, message in found[:_SHOWN])
    more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return shown + more


def _unit(value: Any) -> bool:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return ok and math.isfinite(value) and 0.0 <= value <= 1.0
