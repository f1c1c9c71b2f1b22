"""A graded or workflow run's figures beyond its gates and criteria, summed by the database.

What a report reads from each graded verdict's detail (its workflow, the share of the weights
its weighted score covers, the criteria left out of it, the per-agent roll-up) is written as
rows of ``sample_values`` (``_verdict_columns.graded_figures``) beside the gates and criteria.
Three grouped statements sum them, whatever the run's size: the graded samples per workflow
and grade, the figures per kind and name, and the first sample of each unscored criterion (the
report lists them in the order it meets them). Runs with a graded sample stored before these
rows were written (``verdict_values`` below ``FIGURES_VALUES``) get ``None`` and keep the
record path.

Counts are exact; float sums are added in the database's order (within a relative 1e-12 of
the record path's), minima exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aieval.store._connection import Connection
from aieval.store._verdict_columns import FIGURES_VALUES

__all__ = ["AgentSums", "CoverageSums", "GradedSums", "GradedSumsReader", "WorkflowSums"]

_AGENT_KINDS = (
    "agent",
    "agent_failures",
    "agent_retries",
    "agent_duration",
    "agent_tokens",
    "agent_cost",
    "agent_score",
)


@dataclass(frozen=True, slots=True)
class WorkflowSums:
    """The graded samples of one workflow name ('' for those whose evaluation names none: the
    run's workflow): samples, passes, weighted scores and grades."""

    name: str
    samples: int
    passed: int
    weighted_n: int
    weighted_total: float
    grades: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CoverageSums:
    """The share of the weights the graded samples' weighted scores cover (those that have
    both): how many, their sum and least, and each criterion left out with its count, in the
    order the record path meets them."""

    n: int
    total: float
    minimum: float | None
    unscored: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class AgentSums:
    """One agent role over the graded samples it appears in (``report._tally.AgentTally``):
    a sum is ``None`` when no sample knows it; ``scores`` maps each step score to its
    ``(count, total)``."""

    name: str
    runs: int
    steps: int
    failures: int
    retries: int
    duration_s: float | None
    tokens: float | None
    cost_usd: float | None
    scores: dict[str, tuple[int, float]]


@dataclass(frozen=True, slots=True)
class GradedSums:
    """A run's graded figures (see the module docstring). ``graded`` counts the samples a report
    counts as graded (every sample with a grade among them); ``grades`` their grades."""

    graded: int
    grades: dict[str, int]
    workflows: tuple[WorkflowSums, ...]
    coverage: CoverageSums
    agents: tuple[AgentSums, ...]


class GradedSumsReader(Connection):
    """The reads of :mod:`aieval.store._graded_sums`."""

    def graded_sums(self, run_id: str) -> GradedSums | None:
        """The run's graded figures, or ``None`` when a graded sample was stored without them
        (before they were written, or with a figure the rows cannot hold exactly)."""
        row = self._read_one(
            "SELECT COUNT(*) FROM samples WHERE run_id = ? AND verdict_plain = 0"
            " AND (verdict_values IS NULL OR verdict_values < ?)",
            (run_id, FIGURES_VALUES),
        )
        if row is None or int(row[0]):
            return None
        groups = self._read(
            "SELECT v.name, s.grade, COUNT(*), SUM(s.verdict_passed),"
            " COUNT(s.weighted_score), SUM(s.weighted_score)"
            " FROM sample_values v JOIN samples s ON s.run_id = v.run_id"
            " AND s.sample_id = v.sample_id WHERE v.run_id = ? AND v.kind = 'workflow'"
            " GROUP BY v.name, s.grade",
            (run_id,),
        )
        graded, grades, workflows = _workflows(groups)
        if not graded:
            return GradedSums(0, {}, (), CoverageSums(0, 0.0, None, ()), ())
        kinds = ("coverage", "unscored", *_AGENT_KINDS)
        figures = self._read(
            "SELECT kind, name, COUNT(*), SUM(value), MIN(value), SUM(flag) FROM sample_values"
            f" WHERE run_id = ? AND kind IN ({', '.join('?' for _ in kinds)}) GROUP BY kind, name",
            (run_id, *kinds),
        )
        coverage = [r for r in figures if r[0] == "coverage"]
        unscored = {str(r[1]): int(_float(r[3])) for r in figures if r[0] == "unscored"}
        return GradedSums(
            graded=graded,
            grades=grades,
            workflows=workflows,
            coverage=CoverageSums(
                n=int(coverage[0][2]) if coverage else 0,
                total=_float(coverage[0][3]) if coverage else 0.0,
                minimum=None if not coverage or coverage[0][4] is None else float(coverage[0][4]),
                unscored=tuple((n, unscored[n]) for n in self._unscored_order(run_id, unscored)),
            ),
            agents=_agents([r for r in figures if r[0] in _AGENT_KINDS]),
        )

    def _unscored_order(self, run_id: str, names: dict[str, int]) -> list[str]:
        """The unscored criteria in the order the record path meets them: by their first
        sample in dataset order, then as that sample lists them (one row per name)."""
        if not names:
            return []
        rows = self._read(
            "SELECT name, idx, sample_id, ord FROM (SELECT v.name, s.idx, s.sample_id, v.ord,"
            " ROW_NUMBER() OVER (PARTITION BY v.name ORDER BY s.idx, s.sample_id, v.ord) AS k"
            " FROM sample_values v JOIN samples s ON s.run_id = v.run_id"
            " AND s.sample_id = v.sample_id WHERE v.run_id = ? AND v.kind = 'unscored') t"
            " WHERE k = 1 ORDER BY idx, sample_id, ord",
            (run_id,),
        )
        return [str(r[0]) for r in rows]


def _workflows(
    rows: list[tuple[Any, ...]],
) -> tuple[int, dict[str, int], tuple[WorkflowSums, ...]]:
    """The graded count, grades and groups of the workflow rows grouped by (name, grade)."""
    graded = 0
    grades: dict[str, int] = {}
    groups: dict[str, list[Any]] = {}
    for name, grade, samples, passed, weighted_n, weighted_total in rows:
        count = int(samples)
        graded += count
        group = groups.setdefault(str(name), [0, 0, 0, 0.0, {}])
        group[0] += count
        group[1] += int(passed or 0)
        group[2] += int(weighted_n or 0)
        group[3] += _float(weighted_total)
        if grade is None:
            continue
        grades[str(grade)] = grades.get(str(grade), 0) + count
        group[4][str(grade)] = group[4].get(str(grade), 0) + count
    return (
        graded,
        grades,
        tuple(WorkflowSums(k, g[0], g[1], g[2], g[3], g[4]) for k, g in sorted(groups.items())),
    )


def _agents(rows: list[tuple[Any, ...]]) -> tuple[AgentSums, ...]:
    """The agents of the figure rows grouped by (kind, name), sorted by role."""
    by_kind = {(str(r[0]), str(r[1])): r for r in rows}
    scores: dict[str, dict[str, tuple[int, float]]] = {}
    for (kind, name), r in by_kind.items():
        if kind == "agent_score":
            role, score = json.loads(name)
            scores.setdefault(str(role), {})[str(score)] = (int(r[2]), _float(r[3]))

    def total(kind: str, role: str) -> float | None:
        found = by_kind.get((kind, role))
        return None if found is None else _float(found[3])

    def flags(kind: str, role: str) -> int:
        found = by_kind.get((kind, role))
        return 0 if found is None else int(found[5] or 0)

    return tuple(
        AgentSums(
            name=role,
            runs=int(r[2]),
            steps=flags("agent", role),
            failures=flags("agent_failures", role),
            retries=flags("agent_retries", role),
            duration_s=total("agent_duration", role),
            tokens=total("agent_tokens", role),
            cost_usd=total("agent_cost", role),
            scores=scores.get(role, {}),
        )
        for (kind, role), r in sorted(by_kind.items())
        if kind == "agent"
    )


def _float(value: Any) -> float:
    return 0.0 if value is None else float(value)
