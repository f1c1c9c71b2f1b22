"""Absolute minimums a run must reach (``min_pass_rate``, ``min_scores``), for CI gates.

Checked once the run ends, on its summary: the numbers are stored with it
(``summary.minimums``) and :attr:`~aieval.runner.RunResult.missed_minimums` lists each one
missed; ``aieval run`` exits 4 when one is. A run that scored nothing never meets a minimum: a
pass rate or a mean that does not exist (no sample passed and no scorer scored one; a scorer
with no score) is below every minimum, 0 included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aieval._floors import at_least
from aieval.errors import ConfigError
from aieval.runner._summary import (
    PASS_RATE,
    MinimumCheck,
    MinimumsSummary,
    MissedMinimum,
    RunSummary,
)

__all__ = ["PASS_RATE", "MissedMinimum", "check_minimum_names", "minimums_summary"]


def check_minimum_names(minimums: Mapping[str, float], scorers: Iterable[str]) -> None:
    """Refuse a minimum for a scorer the run does not have (named, with the run's scorers).

    Raises:
        ConfigError: ``min: no scorer named 'x' in this run (its scorers: a, b)``.
    """
    known = list(scorers)
    for name in minimums:
        if name not in known:
            listed = ", ".join(known) or "none"
            raise ConfigError(
                f"min: no scorer named {name!r} in this run (its scorers: {listed}); a minimum "
                "names a scorer of the run"
            )


def minimums_summary(
    summary: RunSummary, min_pass_rate: float | None, min_scores: Mapping[str, float]
) -> MinimumsSummary | None:
    """What the run's summary holds about its minimums (``None`` when none was set)."""
    if min_pass_rate is None and not min_scores:
        return None
    checks: list[tuple[str, float, float | None]] = []
    scorers = summary.scorers
    # no sample passed and no scorer scored one: the run scored nothing, and its pass rate of
    # 0.0 (or none, without samples) meets no minimum, not even 0
    scored = summary.passed or any(s.count for s in scorers.values())
    if min_pass_rate is not None:
        checks.append((PASS_RATE, min_pass_rate, summary.pass_rate if scored else None))
    for name, minimum in min_scores.items():
        stats = scorers.get(name)
        checks.append((name, minimum, None if stats is None else stats.mean))
    return MinimumsSummary(
        min_pass_rate,
        dict(min_scores),
        tuple(
            MinimumCheck(metric, minimum, value, value is not None and at_least(value, minimum))
            for metric, minimum, value in checks
        ),
    )
