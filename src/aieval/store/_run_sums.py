"""A run's sums computed by the database: what a report with closed-form intervals needs.

One grouped statement per part of the run, each a fixed number whatever the run's size (no
loop over samples in Python): the samples (counts, the weighted score's sums, latency, grades),
the scores (per scorer), the gates and criteria (``sample_values``), the order statistics the
quantiles interpolate (one window query per table) and, per metadata field sliced by, its
groups. Only runs whose every sample has its verdict in the typed columns of schema version 8
are summed so (:meth:`RunSums.ready`); :meth:`SumsReader.run_sums` returns ``None`` for the
others, which are read one record at a time.

Counts are exact. Float sums add in the database's order, not the record path's: they equal
numpy's on the same values within a relative 1e-12 (documented in :class:`ValueSums`); minima,
maxima, histogram counts and quantiles are exact (the quantiles are numpy's linear
interpolation between the same two order statistics).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aieval.errors import StoreError
from aieval.stats import QUANTILE_POINTS
from aieval.store._connection import Connection

__all__ = [
    "BINS",
    "CriterionSums",
    "GateSums",
    "LatencySums",
    "RunSums",
    "ScorerSums",
    "SliceSums",
    "SumsReader",
    "ValueSums",
    "missing_slice",
    "numpy_quantiles",
]

#: the histogram's bins on [0, 1], as ``aieval.stats.histogram(values, bins=10)``
BINS = 10
#: numpy's bin edges for them (``np.histogram`` compares against these very floats)
_EDGES: tuple[float, ...] = tuple(float(e) for e in np.linspace(0.0, 1.0, BINS + 1))
#: the quantile points of a latency row (``report._bundle._latency``)
_LATENCY_POINTS = (("p50", 0.5), ("p95", 0.95))
#: a slice group's key when the field is absent or null (``report._bundle.MISSING``)
missing_slice = "(missing)"
#: what the slice query gives a sample whose metadata is not readable JSON (never a JSON text)
_UNREADABLE = "!"


@dataclass(frozen=True, slots=True)
class ValueSums:
    """The values of one column (a scorer's, a criterion's, the weighted score's).

    ``total`` and ``squares`` (the sum of the values and of their squares) are added in the
    database's order: they equal numpy's sums of the same values within a relative 1e-12.
    ``non_binary`` counts the values other than 0 and 1 (none: a 0/1 rate). ``histogram``
    counts the values in 10 equal bins on [0, 1] exactly as ``aieval.stats.histogram`` does
    (numpy's edges, the last bin closed; values outside [0, 1] not counted); ``quantiles`` are
    ``aieval.stats.quantiles`` of the values, to the last digit. Both are empty/``None`` for
    the weighted score (0..100), which the report shows without them.
    """

    n: int
    total: float
    squares: float
    minimum: float | None
    maximum: float | None
    non_binary: int = 0
    histogram: tuple[int, ...] = ()
    quantiles: dict[str, float] | None = None

    @property
    def mean(self) -> float | None:
        """The mean (``None`` without values)."""
        return self.total / self.n if self.n else None

    @property
    def variance(self) -> float | None:
        """The sample variance (ddof 1; ``None`` below two values), from the sums: its absolute
        error is about ``1e-16 * mean**2`` (``sum of squares - n * mean**2`` cancels), far
        below what a report shows for values on [0, 1] or 0..100."""
        if self.n < 2:
            return None
        return max(0.0, (self.squares - self.total * self.total / self.n) / (self.n - 1))

    @property
    def binary(self) -> bool:
        """Whether every value is 0 or 1 (a rate: Wilson's interval applies)."""
        return self.non_binary == 0


@dataclass(frozen=True, slots=True)
class ScorerSums:
    """One scorer's scores: its values, its failures (no value, or an error) and its n/a ones
    (no value, no error), as the report counts them. ``n + errors + not_applicable`` is the
    number of samples that have a score of it."""

    name: str
    values: ValueSums
    errors: int
    not_applicable: int


@dataclass(frozen=True, slots=True)
class CriterionSums:
    """One graded criterion: its normalized values, the samples whose evaluation listed it
    missing (``errors``, each listing counted) and its floor violations. ``floor`` is its
    critical floor when every sample that has one agrees (``floors_agree``); else the highest."""

    name: str
    values: ValueSums
    errors: int
    floor: float | None
    floors_agree: bool
    floor_violations: int


@dataclass(frozen=True, slots=True)
class GateSums:
    """One hard gate: the samples that checked it and those where it failed."""

    name: str
    failures: int
    n: int


@dataclass(frozen=True, slots=True)
class LatencySums:
    """The samples' latency (those that have one): as ``report._bundle._latency`` gives it,
    the mean within a relative 1e-12, the rest exact."""

    n: int
    total: float
    p50: float | None
    p95: float | None
    maximum: float | None

    @property
    def mean(self) -> float | None:
        """The mean latency (``None`` without any)."""
        return self.total / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class SliceSums:
    """One group of a slice: its samples, passes, weighted scores and grades."""

    key: str
    samples: int
    passed: int
    weighted_n: int
    weighted_total: float
    grades: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunSums:
    """A run's report numbers as the database summed them (see the module docstring).

    ``scorers``, ``criteria`` and ``gates`` are in the order the record path meets them: by
    their first sample in dataset order ``(idx, sample_id)``, then as that sample lists them.
    ``graded`` counts the samples whose verdict is not plain (a grade, gates, criteria or a
    workflow evaluation); ``epochs`` the samples that carry an epoch. ``slices`` maps each
    field sliced by to its groups, sorted by key.
    """

    samples: int
    passed: int
    target_errors: int
    graded: int
    epochs: int
    weighted: ValueSums
    latency: LatencySums
    grades: dict[str, int]
    scorers: tuple[ScorerSums, ...]
    criteria: tuple[CriterionSums, ...]
    gates: tuple[GateSums, ...]
    slices: dict[str, tuple[SliceSums, ...]]


class SumsReader(Connection):
    """A run's sums, by the database (see the module docstring)."""

    def sums_ready(self, run_id: str) -> bool:
        """Whether every stored sample of the run has its verdict in the typed columns of
        schema version 8 (written since then, or copied by ``import_run``): its sums are then
        computed in SQL. A run with a sample stored before keeps the record path."""
        row = self._read_one(
            "SELECT COUNT(*) FROM samples WHERE run_id = ? AND (verdict_values IS NULL"
            " OR verdict_passed IS NULL OR verdict_plain IS NULL)",
            (run_id,),
        )
        return row is not None and int(row[0]) == 0

    def run_sums(self, run_id: str, slice_by: Sequence[str] = ()) -> RunSums | None:
        """The run's sums, or ``None`` when its samples are not all in the typed columns
        (:meth:`sums_ready`) or a slice field's metadata is not readable JSON in some sample:
        the caller then reads the run one record at a time.

        Args:
            run_id: the run (its exact id).
            slice_by: metadata fields (dotted paths) to group the samples by.
        """
        if not self.sums_ready(run_id):
            return None
        totals = self._sample_totals(run_id)
        slices: dict[str, tuple[SliceSums, ...]] = {}
        for name in slice_by:
            groups = self._slice(run_id, name)
            if groups is None:
                return None
            slices[name] = groups
        samples, passed, errors, graded, epochs, weighted, latency, grades = totals
        return RunSums(
            samples=samples,
            passed=passed,
            target_errors=errors,
            graded=graded,
            epochs=epochs,
            weighted=weighted,
            latency=latency,
            grades=grades,
            scorers=self._scorers(run_id),
            criteria=(criteria := self._values(run_id))[0],
            gates=criteria[1],
            slices=slices,
        )

    # -- the samples --------------------------------------------------------------------------

    def _sample_totals(
        self, run_id: str
    ) -> tuple[int, int, int, int, int, ValueSums, LatencySums, dict[str, int]]:
        rows = self._read(
            "SELECT grade, COUNT(*), SUM(verdict_passed),"
            " SUM(CASE WHEN error IS NULL THEN 0 ELSE 1 END),"
            " SUM(CASE WHEN verdict_plain = 0 THEN 1 ELSE 0 END), COUNT(epoch),"
            " COUNT(weighted_score), SUM(weighted_score), SUM(weighted_score * weighted_score),"
            " MIN(weighted_score), MAX(weighted_score),"
            " COUNT(latency_s), SUM(latency_s), MAX(latency_s)"
            " FROM samples WHERE run_id = ? GROUP BY grade",
            (run_id,),
        )
        ints = [sum(_int(row[k]) for row in rows) for k in range(1, 7)]
        samples, passed, errors, graded, epochs, weighted_n = ints
        latency_n = sum(_int(row[11]) for row in rows)
        weighted = ValueSums(
            n=weighted_n,
            total=_fsum(row[7] for row in rows),
            squares=_fsum(row[8] for row in rows),
            minimum=_least(row[9] for row in rows),
            maximum=_most(row[10] for row in rows),
        )
        points = self._order_points(
            "SELECT '' AS g, latency_s AS v FROM samples WHERE run_id = ?"
            " AND latency_s IS NOT NULL",
            (run_id,),
            {"": latency_n},
            _LATENCY_POINTS,
        ).get("", {})
        latency = LatencySums(
            n=latency_n,
            total=_fsum(row[12] for row in rows),
            p50=points.get("p50"),
            p95=points.get("p95"),
            maximum=_most(row[13] for row in rows),
        )
        grades = {str(row[0]): _int(row[1]) for row in rows if row[0] is not None}
        return samples, passed, errors, graded, epochs, weighted, latency, grades

    # -- the scores ---------------------------------------------------------------------------

    def _scorers(self, run_id: str) -> tuple[ScorerSums, ...]:
        # a score's value counts when it has no error ('' is none), as the report counts it
        usable = "CASE WHEN value IS NOT NULL AND (error IS NULL OR error = '') THEN value END"
        rows = self._read(
            "SELECT scorer, SUM(CASE WHEN value IS NULL AND error IS NULL THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN value IS NULL AND error IS NOT NULL THEN 1"
            " WHEN value IS NOT NULL AND error IS NOT NULL AND error <> '' THEN 1 ELSE 0 END),"
            f" {_value_columns('v', self._literal)}"
            f" FROM (SELECT scorer, value, error, {usable} AS v FROM scores WHERE run_id = ?) t"
            " GROUP BY scorer",
            (run_id,),
        )
        counts = {str(row[0]): _int(row[3]) for row in rows}
        points = self._order_points(
            f"SELECT scorer AS g, v FROM (SELECT scorer, {usable} AS v FROM scores"
            " WHERE run_id = ?) u WHERE v IS NOT NULL",
            (run_id,),
            counts,
            QUANTILE_POINTS,
        )
        found = {
            str(row[0]): ScorerSums(
                name=str(row[0]),
                values=_value_sums(row[3:], points.get(str(row[0]))),
                not_applicable=_int(row[1]),
                errors=_int(row[2]),
            )
            for row in rows
        }
        order = self._first_seen(
            "SELECT sc.scorer FROM samples s JOIN scores sc ON sc.run_id = s.run_id"
            " AND sc.sample_id = s.sample_id WHERE s.run_id = ?",
            "sc.rowid",
            run_id,
            set(found),
        )
        return tuple(found[name] for name in order)

    # -- the gates and criteria ---------------------------------------------------------------

    def _values(self, run_id: str) -> tuple[tuple[CriterionSums, ...], tuple[GateSums, ...]]:
        rows = self._read(
            "SELECT kind, name, COUNT(*), SUM(CASE WHEN flag = 0 THEN 1 ELSE 0 END),"
            " MIN(floor), MAX(floor),"
            f" {_value_columns('value', self._literal)}"
            " FROM sample_values WHERE run_id = ? GROUP BY kind, name",
            (run_id,),
        )
        if not rows:
            return (), ()
        criteria = {str(row[1]): row for row in rows if row[0] == "criterion"}
        missing = {str(row[1]): row for row in rows if row[0] == "missing"}
        points = self._order_points(
            "SELECT name AS g, value AS v FROM sample_values WHERE run_id = ?"
            " AND kind = 'criterion' AND value IS NOT NULL",
            (run_id,),
            {name: _int(row[6]) for name, row in criteria.items()},
            QUANTILE_POINTS,
        )
        gates = {
            str(row[1]): GateSums(str(row[1]), failures=_int(row[3]), n=_int(row[2]))
            for row in rows
            if row[0] == "gate"
        }
        names = self._first_seen(
            "SELECT v.kind || ':' || v.name FROM samples s JOIN sample_values v"
            " ON v.run_id = s.run_id AND v.sample_id = s.sample_id WHERE s.run_id = ?",
            "v.ord",
            run_id,
            {f"{row[0]}:{row[1]}" for row in rows},
        )
        order = [name.partition(":") for name in names]
        out: dict[str, CriterionSums] = {}
        for kind, _, name in order:
            if kind not in ("criterion", "missing") or name in out:
                continue
            row, lost = criteria.get(name), missing.get(name)
            low, high = (row[4], row[5]) if row is not None else (None, None)
            out[name] = CriterionSums(
                name=name,
                values=_value_sums(row[6:] if row is not None else None, points.get(name)),
                errors=int(_float(lost[7])) if lost is not None else 0,
                floor=None if high is None else float(high),
                floors_agree=low == high,
                floor_violations=_int(row[3]) if row is not None else 0,
            )
        ordered_gates = tuple(gates[name] for kind, _, name in order if kind == "gate")
        return tuple(out.values()), ordered_gates

    # -- slices -------------------------------------------------------------------------------

    def _slice(self, run_id: str, path: str) -> tuple[SliceSums, ...] | None:
        """The groups of metadata field ``path``, or ``None`` when some sample's metadata is not
        JSON the database reads as Python does (the record path then decides)."""
        parts = path.split(".")
        if any(not p or '"' in p or "\\" in p for p in parts):
            return None  # a key the JSON path syntax cannot spell: the record path groups it
        if self.location.backend == "postgres":
            key = (
                "CASE WHEN metadata IS NULL THEN NULL ELSE (metadata::json #> ?::text[])::text END"
            )
            args: tuple[Any, ...] = (parts, run_id)
        else:
            json_path = "$" + "".join(f'."{p}"' for p in parts)
            key = (
                "CASE WHEN metadata IS NULL THEN NULL WHEN json_valid(metadata)"
                f" THEN metadata -> ? ELSE '{_UNREADABLE}' END"
            )
            args = (json_path, run_id)
        try:
            rows = self._read(
                "SELECT k, grade, COUNT(*), SUM(verdict_passed), COUNT(weighted_score),"
                f" SUM(weighted_score) FROM (SELECT {key} AS k, grade, verdict_passed,"
                " weighted_score FROM samples WHERE run_id = ?) t GROUP BY k, grade",
                args,
            )
        except StoreError:
            if self.location.backend == "postgres":
                return None  # PostgreSQL refuses a metadata text that is not JSON
            raise
        groups: dict[str, list[Any]] = {}
        for text, grade, samples, passed, weighted_n, weighted_total in rows:
            if text == _UNREADABLE:
                return None
            group = groups.setdefault(_slice_key(text), [0, 0, 0, [], {}])
            group[0] += _int(samples)
            group[1] += _int(passed)
            group[2] += _int(weighted_n)
            group[3].append(weighted_total)
            if grade is not None:
                group[4][str(grade)] = group[4].get(str(grade), 0) + _int(samples)
        return tuple(
            SliceSums(key, g[0], g[1], g[2], _fsum(g[3]), g[4]) for key, g in sorted(groups.items())
        )

    # -- helpers ------------------------------------------------------------------------------

    def _literal(self, literal: float) -> str:
        """A float literal the backend compares as that very double."""
        text = repr(literal)
        return f"CAST({text} AS DOUBLE PRECISION)" if self.location.backend == "postgres" else text

    def _order_points(
        self,
        select: str,
        args: tuple[Any, ...],
        counts: dict[str, int],
        points: Sequence[tuple[str, float]],
    ) -> dict[str, dict[str, float]]:
        """Numpy's linear-interpolation quantiles at ``points`` of each group's values, from
        the two order statistics each needs: ``select`` gives ``(group, value)`` rows, and one
        window query numbers each group's values in order and keeps only the ranks needed."""
        plans = {g: _plan(n, points) for g, n in counts.items() if n > 0}
        if not plans:
            return {}
        ranks = sorted({r for plan in plans.values() for _, lo, hi, _ in plan for r in (lo, hi)})
        marks = ", ".join("?" * len(ranks))
        rows = self._read(
            "SELECT g, r, v FROM (SELECT g, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v) - 1"
            f" AS r FROM ({select}) s) t WHERE r IN ({marks})",
            (*args, *ranks),
        )
        found: dict[str, dict[int, float]] = {}
        for group, rank, value in rows:
            found.setdefault(str(group), {})[int(rank)] = float(value)
        out: dict[str, dict[str, float]] = {}
        for group, plan in plans.items():
            stats = found.get(group, {})
            if any(lo not in stats or hi not in stats for _, lo, hi, _ in plan):
                raise StoreError(f"the order statistics of {group!r} changed while read")
            out[group] = {name: _lerp(stats[lo], stats[hi], gamma) for name, lo, hi, gamma in plan}
        return out

    def _first_seen(self, select: str, within: str, run_id: str, names: set[str]) -> list[str]:
        """``names`` in the order the record path meets them: the first sample (in dataset order)
        that has each, then the order that sample lists them (``within``). Reads the samples in
        that order only until every name is seen (at once, when the first sample has them)."""
        if not names:
            return []
        order: dict[str, None] = {}
        first = self._read_one(
            "SELECT MIN(idx) FROM samples WHERE run_id = ?",
            (run_id,),
        )
        if first is not None and first[0] is not None:
            for (name,) in self._read(
                f"{select} AND s.idx = ? ORDER BY s.sample_id, {within}", (run_id, first[0])
            ):
                order.setdefault(str(name), None)
        if not names.issubset(order):
            for (name,) in self._read(f"{select} ORDER BY s.idx, s.sample_id, {within}", (run_id,)):
                order.setdefault(str(name), None)
        return [name for name in order if name in names]


def numpy_quantiles(
    sorted_values: Sequence[float], points: Sequence[tuple[str, float]]
) -> dict[str, float]:
    """``np.quantile`` (linear) of already sorted values at ``points``, the way the sums compute
    it from two order statistics each (for tests and for callers holding sorted values)."""
    return {
        name: _lerp(float(sorted_values[lo]), float(sorted_values[hi]), gamma)
        for name, lo, hi, gamma in _plan(len(sorted_values), points)
    }


def _plan(n: int, points: Sequence[tuple[str, float]]) -> list[tuple[str, int, int, float]]:
    """Per point: the two ranks (0-based) numpy interpolates between and the weight, computed
    with numpy's own float operations (``(n - 1) * q``, its floor, the bounds it clamps)."""
    q = np.asarray([p for _, p in points], dtype=float)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    plan = []
    for (name, _), v, lo, g in zip(
        points, virtual.tolist(), previous.tolist(), gamma.tolist(), strict=True
    ):
        if v >= n - 1:
            plan.append((name, n - 1, n - 1, g))
        elif v < 0:
            plan.append((name, 0, 0, g))
        else:
            plan.append((name, int(lo), int(lo) + 1, g))
    return plan


def _lerp(a: float, b: float, t: float) -> float:
    """numpy's ``_lerp``: ``a + (b - a) * t``, from ``b`` when ``t >= 0.5`` (its exact ops)."""
    diff = b - a
    if t >= 0.5:
        return float(b - diff * (1 - t))
    return float(a + diff * t)


def _value_columns(v: str, literal: Any) -> str:
    """The aggregate columns of a :class:`ValueSums` over expression ``v``: n, sum, sum of
    squares, min, max, values other than 0 and 1, then the histogram's bins."""
    bins = []
    for i in range(BINS):
        upper = (
            f"{v} <= {literal(_EDGES[i + 1])}"
            if i == BINS - 1
            else f"{v} < {literal(_EDGES[i + 1])}"
        )
        bins.append(f"SUM(CASE WHEN {v} >= {literal(_EDGES[i])} AND {upper} THEN 1 ELSE 0 END)")
    return (
        f"COUNT({v}), SUM({v}), SUM({v} * {v}), MIN({v}), MAX({v}),"
        f" SUM(CASE WHEN {v} <> 0 AND {v} <> 1 THEN 1 ELSE 0 END), " + ", ".join(bins)
    )


def _value_sums(row: Sequence[Any] | None, quantiles: dict[str, float] | None) -> ValueSums:
    if row is None or _int(row[0]) == 0:
        return ValueSums(0, 0.0, 0.0, None, None, 0, (0,) * BINS, None)
    return ValueSums(
        n=_int(row[0]),
        total=_float(row[1]),
        squares=_float(row[2]),
        minimum=float(row[3]),
        maximum=float(row[4]),
        non_binary=_int(row[5]),
        histogram=tuple(_int(c) for c in row[6 : 6 + BINS]),
        quantiles=quantiles,
    )


def _slice_key(text: str | None) -> str:
    """The slice key of a field's JSON text, as ``report._bundle._slice_key`` makes it."""
    if text is None:
        return missing_slice
    value = json.loads(text)
    if value is None:
        return missing_slice
    return value if isinstance(value, str) else str(value)


def _int(value: Any) -> int:
    return 0 if value is None else int(value)


def _float(value: Any) -> float:
    return 0.0 if value is None else float(value)


def _fsum(values: Iterable[Any]) -> float:
    return math.fsum(float(v) for v in values if v is not None)


def _least(values: Iterable[Any]) -> float | None:
    found = [float(v) for v in values if v is not None]
    return min(found) if found else None


def _most(values: Iterable[Any]) -> float | None:
    found = [float(v) for v in values if v is not None]
    return max(found) if found else None
