"""Absolute minimums a run must reach (``min_pass_rate``, ``min_scores``), for CI gates.

Checked once the run ends, on its summary: the numbers are stored with it
(``summary["minimums"]``) and :attr:`~aieval.runner.RunResult.missed_minimums` lists each one
missed; ``aieval run`` exits 4 when one is. A run that scored nothing never meets a minimum: a
pass rate or a mean that does not exist (no sample passed and no scorer scored one; a scorer
with no score) is below every minimum, 0 included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from aieval._floors import at_least
from aieval.errors import ConfigError

__all__ = ["MissedMinimum", "check_minimum_names", "minimums_summary", "missed_minimums"]

#: The metric name of ``min_pass_rate`` in a :class:`MissedMinimum`.
PASS_RATE = "pass_rate"


@dataclass(frozen=True, slots=True)
class MissedMinimum:
    """One minimum a run did not reach.

    Attributes:
        metric: ``"pass_rate"``, or the scorer whose mean score was below its minimum.
        minimum: the least value asked for (0..1).
        value: the run's value; ``None`` when it has none (nothing passed or scored).
    """

    metric: str
    minimum: float
    value: float | None

    def __str__(self) -> str:
        what = "pass rate" if self.metric == PASS_RATE else f"{self.metric} mean score"
        if self.value is None:
            return f"{what}: none (nothing scored), minimum {self.minimum:g}"
        return f"{what} {self.value:.4g} below its minimum {self.minimum:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "minimum": self.minimum, "value": self.value}


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
    summary: Mapping[str, Any], min_pass_rate: float | None, min_scores: Mapping[str, float]
) -> dict[str, Any] | None:
    """What the run's summary stores about its minimums (``None`` when none was set)."""
    if min_pass_rate is None and not min_scores:
        return None
    checks: list[tuple[str, float, float | None]] = []
    scorers = summary.get("scorers") or {}
    # no sample passed and no scorer scored one: the run scored nothing, and its pass rate of
    # 0.0 (or none, without samples) meets no minimum, not even 0
    scored = summary.get("passed") or any((s or {}).get("count") for s in scorers.values())
    if min_pass_rate is not None:
        checks.append((PASS_RATE, min_pass_rate, summary.get("pass_rate") if scored else None))
    for name, minimum in min_scores.items():
        checks.append((name, minimum, (scorers.get(name) or {}).get("mean")))
    rows: list[dict[str, Any]] = [
        {"metric": metric, "minimum": minimum, "value": value,
         "met": value is not None and at_least(value, minimum)}
        for metric, minimum, value in checks
    ]  # fmt: skip
    return {
        "min_pass_rate": min_pass_rate,
        "min": dict(min_scores),
        "met": all(row["met"] for row in rows),
        "checks": rows,
        "missed": [
            MissedMinimum(row["metric"], row["minimum"], row["value"]).to_dict()
            for row in rows
            if not row["met"]
        ],
    }


def missed_minimums(summary: Mapping[str, Any]) -> list[MissedMinimum]:
    """The minimums a stored summary records as missed (empty without minimums)."""
    stored = summary.get("minimums") or {}
    return [
        MissedMinimum(str(m["metric"]), float(m["minimum"]), m.get("value"))
        for m in stored.get("missed") or []
    ]
