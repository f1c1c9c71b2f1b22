"""Running tallies the reporting bundle fills in one pass over a run's samples."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval._floors import at_most
from aieval._records import SampleRecord
from aieval.core import ROW_CHECK_PREFIX, AgentDetail, Verdict
from aieval.report._header import pass_rate
from aieval.report._samples import ExampleNumbers
from aieval.store import RunRow

__all__ = [
    "AgentTally",
    "ColumnTally",
    "GroupTally",
    "JudgeTally",
    "ReasonTally",
    "column_row",
    "grade_counts",
    "reason_text",
    "run_warnings",
]

GRADES = ("A", "B", "C", "D", "F")
_MAX_IDS = 5
_MAX_REASON = 300


@dataclass(slots=True)
class ColumnTally:
    """Normalized values of one criterion or scorer, with its errors, its n/a samples (a
    scorer's ``Score(None)`` without an error), the invalid samples it was n/a on (counted
    apart: an invalid conversation says nothing about the scorer) and floor violations."""

    kind: str
    values: list[float] = field(default_factory=list)
    errors: int = 0
    not_applicable: int = 0
    invalid: int = 0
    floor: float | None = None
    floor_violations: int = 0


@dataclass(slots=True)
class GroupTally:
    """Samples, passes, weighted scores and grades of one group (workflow, slice value)."""

    samples: int = 0
    passed: int = 0
    weighted_sum: float = 0.0
    weighted_n: int = 0
    grades: Counter[str] = field(default_factory=Counter)
    #: invalid samples (a conversation whose simulated user failed fidelity): out of the rate
    invalid: int = 0

    def add(self, ex: ExampleNumbers, invalid: bool = False) -> None:
        """Count one example (``invalid``: counted apart, out of the group's pass rate)."""
        self.samples += 1
        self.invalid += invalid
        self.passed += ex.passed
        if ex.weighted_score is not None:
            self.weighted_sum += ex.weighted_score
            self.weighted_n += 1
        if ex.graded and ex.grade in GRADES:
            self.grades[ex.grade] += 1

    def to_dict(self, key: str, graded: bool, confidence: float) -> dict[str, Any]:
        """The group's entry in ``groups``."""
        return {
            "key": key,
            "samples": self.samples,
            "pass_rate": self._rate(confidence),
            "weighted_score_mean": (
                self.weighted_sum / self.weighted_n if self.weighted_n else None
            ),
            "grades": grade_counts(self.grades) if graded else None,
        }

    def _rate(self, confidence: float) -> dict[str, Any]:
        """The group's pass rate over its valid samples, with the invalid ones' count (if any)."""
        rate = pass_rate(self.passed, self.samples - self.invalid, confidence)
        return {**rate, "invalid": self.invalid} if self.invalid else rate


@dataclass(slots=True)
class JudgeTally:
    """Parse failures and swapped-order inconsistencies of one judge scorer.

    ``malformed`` counts the samples whose score rests on malformed verdicts (the score's
    ``unreadable``), whether stored with their 0.0 or, by older runs, as an error.
    """

    n: int = 0
    verdicts: int = 0
    parse_failures: int = 0
    malformed: int = 0
    pairwise: bool = False
    inconsistent: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    inconsistent_ties: int = 0

    def add(self, metadata: Mapping[str, Any], unreadable: str | None = None) -> None:
        """Count one sample's judge metadata (``unreadable``: why its verdict could not be
        read)."""
        failures = _count(metadata.get("parse_failures"))
        self.n += 1
        self.parse_failures += failures
        self.verdicts += max(failures, _verdicts(metadata))
        self.malformed += bool(unreadable)
        if "inconsistent" in metadata:
            self.pairwise = True
            self.inconsistent += _count(metadata.get("inconsistent"))
            outcome = str(metadata.get("outcome"))
            self.outcomes[outcome] += 1
            flipped = bool(metadata.get("inconsistent")) and not metadata.get("adjudicated")
            self.inconsistent_ties += flipped and outcome == "tie"

    def to_dict(self, threshold: float) -> dict[str, Any]:
        """The judge's entry in ``judges``; warns above ``threshold``."""
        parse_rate = self.parse_failures / self.verdicts if self.verdicts else 0.0
        inconsistency = self.inconsistent / self.n if self.pairwise and self.n else None
        warnings = []
        if not at_most(parse_rate, threshold):
            warnings.append(f"{parse_rate:.1%} of verdicts were malformed")
        if inconsistency is not None and not at_most(inconsistency, threshold):
            warnings.append(
                f"{inconsistency:.1%} of pairwise verdicts changed when the order was swapped"
            )
        decided = self.outcomes["win"] + self.outcomes["loss"]
        return {
            "n": self.n,
            "parse_failures": self.parse_failures,
            "parse_failure_rate": parse_rate,
            "malformed": self.malformed,
            "inconsistent": self.inconsistent,
            "inconsistency_rate": inconsistency,
            "warning": "; ".join(warnings) + f" (above {threshold:.0%})" if warnings else None,
            **(
                {
                    "wins": self.outcomes["win"],
                    "losses": self.outcomes["loss"],
                    "ties": self.outcomes["tie"],
                    "inconsistent_ties": self.inconsistent_ties,
                    "win_rate": self.outcomes["win"] / decided if decided else None,
                }
                if self.pairwise
                else {}
            ),
        }


@dataclass(slots=True)
class AgentTally:
    """One agent role summed over the samples it appeared in."""

    runs: int = 0
    steps: int = 0
    failures: int = 0
    retries: int = 0
    duration_s: float | None = None
    tokens: float | None = None
    cost_usd: float | None = None
    scores: dict[str, list[float]] = field(default_factory=dict)

    def add(self, entry: AgentDetail) -> None:
        """Count one sample's roll-up of this agent."""
        self.runs += 1
        self.steps += entry.steps
        self.failures += entry.failures
        self.retries += entry.retries
        self.duration_s = _add(self.duration_s, entry.duration_s)
        self.tokens = _add(self.tokens, entry.tokens)
        self.cost_usd = _add(self.cost_usd, entry.cost_usd)
        for name, value in entry.scores.items():
            self.scores.setdefault(name, []).append(value)

    def to_dict(self, name: str) -> dict[str, Any]:
        """The agent's entry in ``groups.agents``."""
        return {
            "name": name,
            "runs": self.runs,
            "steps": self.steps,
            "failures": self.failures,
            "retries": self.retries,
            "duration_s": self.duration_s,
            "tokens": int(self.tokens) if self.tokens is not None else None,
            "cost_usd": self.cost_usd,
            "scores": {k: sum(v) / len(v) for k, v in sorted(self.scores.items())},
        }


@dataclass(slots=True)
class ReasonTally:
    """Why samples did not pass, grouped by (kind, key, reason)."""

    counts: dict[tuple[str, str, str], list[Any]] = field(default_factory=dict)

    def add(self, kind: str, key: str, reason: str, sample_id: str) -> None:
        """Count one reason of one failed sample."""
        entry = self.counts.setdefault((kind, key, reason_text(reason)), [0, []])
        entry[0] += 1
        if len(entry[1]) < _MAX_IDS and sample_id not in entry[1]:
            entry[1].append(sample_id)

    def collect(self, sample: SampleRecord, verdict: Verdict) -> None:
        """Record the reasons of a sample that did not pass, as its verdict gives them."""
        for reason in verdict.reasons:
            self.add(reason.kind, reason.key, reason.text, sample.id)

    def top(self, limit: int = 10) -> list[dict[str, Any]]:
        """The ``limit`` most frequent reasons."""
        ranked = sorted(self.counts.items(), key=lambda item: (-item[1][0], item[0]))
        return [
            {"kind": k, "key": key, "reason": r, "count": c, "sample_ids": list(ids)}
            for (k, key, r), (c, ids) in ranked[:limit]
        ]


def reason_text(reason: str) -> str:
    """A reason as the report lists it: whitespace collapsed, at most 300 characters."""
    text = " ".join(reason.split())
    return text[: _MAX_REASON - 1] + "…" if len(text) > _MAX_REASON else text


def grade_counts(counter: Mapping[str, int]) -> dict[str, int]:
    """``{"A": n, ..., "F": n}``, every letter present."""
    return {g: int(counter.get(g, 0)) for g in GRADES}


def _verdicts(metadata: Mapping[str, Any]) -> int:
    for key in ("verdicts", "orders"):
        value = metadata.get(key)
        if isinstance(value, list) and value:
            return len(value)
    samples = metadata.get("samples")
    return samples if isinstance(samples, int) and samples > 0 else 1


def _count(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    return int(value) if isinstance(value, int | float) and math.isfinite(value) else 0


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _add(total: float | None, value: Any) -> float | None:
    number = _number(value)
    if number is None:
        return total
    return number if total is None else total + number


def column_row(
    name: str,
    kind: str,
    *,
    samples: int,
    n: int,
    errors: int,
    not_applicable: int,
    block: Mapping[str, Any] | None,
    quantiles: Any,
    histogram: Any,
    floor: float | None = None,
    floor_violations: int = 0,
    invalid: int = 0,
) -> dict[str, Any]:
    """A report's row of one criterion or scorer, from its counts and interval ``block``.

    Every scorer scores every sample: one with no score at all (its target failed) is a
    missing score, counted with its errors, so ``n + errors + n/a (+ invalid)`` is the number
    of samples; a row's own check counts on the rows that carry it only. ``invalid`` (the
    samples of invalid conversations, n/a for that reason) is in the row only when some are.
    """
    if kind == "scorer" and not name.startswith(ROW_CHECK_PREFIX):
        errors = max(samples - n - not_applicable - invalid, errors)
    return {
        "name": name,
        "kind": kind,
        "n": n,
        "errors": errors,
        "not_applicable": not_applicable,
        **({"invalid": invalid} if invalid else {}),
        "mean": block["mean"] if block else None,
        "std": block["std"] if block else None,
        "low": block["low"] if block else None,
        "high": block["high"] if block else None,
        "method": block["method"] if block else None,
        "quantiles": quantiles,
        "histogram": histogram,
        "floor": floor,
        "floor_violations": floor_violations,
    }


def run_warnings(
    row: RunRow,
    *,
    samples: int,
    weighted_n: int,
    target_errors: int,
    scorers: Iterable[tuple[str, int, int]],
    judges: Mapping[str, JudgeTally],
    judge_rate: float,
    invalid: int = 0,
) -> list[str]:
    """A report's warnings: the run unfinished or short of samples, samples without a weighted
    score or failed in the target, ``scorers`` (``(name, values, n/a)``) that scored no sample,
    judges over ``judge_rate`` of malformed or inconsistent verdicts. The ``invalid`` samples
    (invalid conversations) are no scorer's n/a nor error."""
    warnings = []
    if row.status != "completed":
        warnings.append(f"run {row.id} is {row.status}: the report covers stored samples only")
    if samples == 0:
        warnings.append(f"run {row.id} has no stored samples")
    elif row.n_examples is not None and samples < row.n_examples:
        warnings.append(f"{samples} of {row.n_examples} examples have a stored sample")
    if samples - weighted_n:
        warnings.append(
            f"{samples - weighted_n} samples have no weighted score (nothing was scored)"
        )
    if target_errors:
        warnings.append(f"{target_errors} samples failed in the target (scored 0)")
    for name, values, not_applicable in scorers:
        if not_applicable and not values:  # not ok: aieval run exits 3
            warnings.append(
                f"scorer {name} scored no sample ({not_applicable} n/a,"
                f" {samples - invalid - not_applicable} errors or missing)"
            )
    for name, judge in sorted(judges.items()):
        note = judge.to_dict(judge_rate)["warning"]
        if note:
            warnings.append(f"judge {name}: {note}")
    return warnings
