"""A run's sums computed by the database: what a report with closed-form intervals needs.

One grouped statement per part of the run, each a fixed number whatever the run's size (no
loop over samples in Python): the samples (counts, the weighted score's sums, latency, grades),
the scores (per scorer), the gates and criteria (``sample_values``), each with the order
statistics its quantiles interpolate (``_column_sums``: fine buckets, and one more statement
for the crowded ones) and, per metadata field sliced by, its groups. Only runs whose every
sample has its verdict in the typed columns of schema version 8 are summed so
(:meth:`SumsReader.sums_ready`); :meth:`SumsReader.run_sums` returns ``None`` for the others,
which are read one record at a time.

Counts are exact. Float sums add in the database's order, not the record path's: they equal
numpy's on the same values within a relative 1e-12 (documented in :class:`ValueSums`); minima,
maxima, histogram counts and quantiles are exact (the quantiles are numpy's linear
interpolation between the same two order statistics).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aieval.errors import StoreError
from aieval.stats import QUANTILE_POINTS
from aieval.store._column_sums import (
    BINS,
    OrderStats,
    ValueSums,
    column_sums,
    sums_of_groups,
)
from aieval.store._rollups import (
    LATENCY_BUCKETS,
    SCORE_BUCKETS,
    SCORE_SEEK,
    RollupReader,
    RunTotals,
    latency_source,
    scores_source,
)

__all__ = [
    "CriterionSums",
    "GateSums",
    "LatencySums",
    "RunSums",
    "ScorerSums",
    "SliceSums",
    "SumsReader",
    "ValueSums",
    "missing_slice",
]

log = logging.getLogger("aieval")

#: a column without values
_EMPTY = ValueSums(0, 0.0, 0.0, None, None, 0, (0,) * BINS, None)
#: the quantile points of a latency row (``report._bundle._latency``)
_LATENCY_POINTS = (("p50", 0.5), ("p95", 0.95))
#: a slice group's key when the field is absent or null (``report._bundle.MISSING``)
missing_slice = "(missing)"
#: what the slice query gives a sample whose metadata is not readable JSON (never a JSON text)
_UNREADABLE = "!"


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


class SumsReader(RollupReader):
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

    def keep_rollups(self, run_id: str) -> None:
        """Build the rollups of a run that ended (one scan), with the order statistics its
        report's quantiles read. Never fails: a store that cannot take them (read-only, full)
        is left as it is, and the run's next report scans it."""
        if not self._rollups_usable():
            return
        try:
            self.rebuild_rollups(run_id)
            self.run_sums(run_id)  # finds the order statistics, and keeps them
        except Exception as exc:
            log.warning("the rollups of run %s are left to its next report: %s", run_id, exc)

    def run_sums(self, run_id: str, slice_by: Sequence[str] = ()) -> RunSums | None:
        """The run's sums, or ``None`` when its samples are not all in the typed columns
        (:meth:`sums_ready`) or a slice field's metadata is not readable JSON in some sample:
        the caller then reads the run one record at a time.

        Args:
            run_id: the run (its exact id).
            slice_by: metadata fields (dotted paths) to group the samples by.
        """
        kept = self.ensure_rollups(run_id)
        orders = {} if kept is None else self.kept_order_stats(run_id)
        totals = self._sample_totals(run_id, kept, orders)
        if totals is None:
            return None
        slices: dict[str, tuple[SliceSums, ...]] = {}
        for name in slice_by:
            groups = self._slice(run_id, name, kept)
            if groups is None:
                return None
            slices[name] = groups
        samples, passed, errors, graded, epochs, weighted, latency, grades, first = totals
        return RunSums(
            samples=samples,
            passed=passed,
            target_errors=errors,
            graded=graded,
            epochs=epochs,
            weighted=weighted,
            latency=latency,
            grades=grades,
            scorers=self._scorers(run_id, first, kept, orders),
            criteria=(criteria := self._values(run_id, first))[0],
            gates=criteria[1],
            slices=slices,
        )

    # -- the samples --------------------------------------------------------------------------

    def _sample_totals(
        self, run_id: str, kept: RunTotals | None, orders: dict[str, OrderStats]
    ) -> tuple[int, int, int, int, int, ValueSums, LatencySums, dict[str, int], Any] | None:
        """The samples' counts and sums (``None`` when a sample is not in the typed columns:
        :meth:`sums_ready`), and the run's first ``idx``: from the run's rollups ``kept``, or
        (without them) in one pass."""
        row = self._totals_row(run_id) if kept is None else _totals_of(kept)
        if _int(row[14]):
            return None
        samples, passed, errors, graded, epochs, weighted_n = (_int(row[k]) for k in range(6))
        weighted = ValueSums(
            n=weighted_n,
            total=_float(row[6]),
            squares=_float(row[7]),
            minimum=_least([row[8]]),
            maximum=_most([row[9]]),
        )
        # grouped by grade only when some sample has one (a plain run has none: no sort)
        grades = (
            {
                str(grade): _int(count)
                for grade, count in self._read(
                    "SELECT grade, COUNT(*) FROM samples WHERE run_id = ? AND grade IS NOT NULL"
                    " GROUP BY grade",
                    (run_id,),
                )
            }
            if _int(row[13])
            else {}
        )
        postgres = self.location.backend == "postgres"
        columns = (
            column_sums(self._read, postgres, latency_source(), (run_id,), _LATENCY_POINTS,
                        **LATENCY_BUCKETS)
            if kept is None
            else self._kept_groups(
                run_id, "latency", latency_source(), _LATENCY_POINTS, orders.get("latency", {}),
                scale=LATENCY_BUCKETS["scale"], cap=LATENCY_BUCKETS["cap"],
            )
        )  # fmt: skip
        latency_sums = columns.get("")
        points = latency_sums[1].quantiles if latency_sums is not None else None
        latency = LatencySums(
            n=_int(row[10]),
            total=_float(row[11]),
            p50=points["p50"] if points else None,
            p95=points["p95"] if points else None,
            maximum=_most([row[12]]),
        )
        return samples, passed, errors, graded, epochs, weighted, latency, grades, row[15]

    def _totals_row(self, run_id: str) -> tuple[Any, ...]:
        """The run's totals in one pass over its samples (a run without rollups)."""
        row = self._read_one(
            "SELECT COUNT(*), SUM(verdict_passed),"
            " SUM(CASE WHEN error IS NULL THEN 0 ELSE 1 END),"
            " SUM(CASE WHEN verdict_plain = 0 THEN 1 ELSE 0 END), COUNT(epoch),"
            " COUNT(weighted_score), SUM(weighted_score), SUM(weighted_score * weighted_score),"
            " MIN(weighted_score), MAX(weighted_score),"
            " COUNT(latency_s), SUM(latency_s), MAX(latency_s), COUNT(grade),"
            " SUM(CASE WHEN verdict_values IS NULL OR verdict_passed IS NULL"
            " OR verdict_plain IS NULL THEN 1 ELSE 0 END), MIN(idx)"
            " FROM samples WHERE run_id = ?",
            (run_id,),
        )
        assert row is not None  # an aggregate without GROUP BY has its one row
        return row

    # -- the scores ---------------------------------------------------------------------------

    def _scorers(
        self, run_id: str, first: Any, kept: RunTotals | None, orders: dict[str, OrderStats]
    ) -> tuple[ScorerSums, ...]:
        # a score's code: see ``scores_source``; the groups from the rollups when kept
        columns = (
            self._columns(scores_source(), (run_id,), QUANTILE_POINTS)
            if kept is None
            else self._kept_groups(
                run_id,
                "scores",
                scores_source(),
                QUANTILE_POINTS,
                orders.get("scores", {}),
                scale=SCORE_BUCKETS["scale"],
                # PostgreSQL's viewer index on (run_id, scorer, value) finds each one at once
                seek=SCORE_SEEK if self.location.backend == "postgres" else None,
            )
        )
        found = {
            name: ScorerSums(
                name=name,
                values=values,
                not_applicable=codes.get(1, 0),
                errors=codes.get(2, 0),
            )
            for name, (codes, values) in columns.items()
        }
        order = self._first_seen(
            "SELECT sc.scorer FROM samples s JOIN scores sc ON sc.run_id = s.run_id"
            " AND sc.sample_id = s.sample_id WHERE s.run_id = ?",
            "sc.rowid",
            run_id,
            first,
            set(found),
            None if kept is None else kept.first_sample,
        )
        return tuple(found[name] for name in order)

    # -- the gates and criteria ---------------------------------------------------------------

    def _values(
        self, run_id: str, first: Any
    ) -> tuple[tuple[CriterionSums, ...], tuple[GateSums, ...]]:
        rows = self._read(
            "SELECT kind, name, COUNT(*), SUM(CASE WHEN flag = 0 THEN 1 ELSE 0 END),"
            " MIN(floor), MAX(floor), SUM(value)"
            " FROM sample_values WHERE run_id = ? AND kind IN ('gate', 'criterion', 'missing')"
            " GROUP BY kind, name",
            (run_id,),
        )
        if not rows:
            return (), ()
        criteria = {str(row[1]): row for row in rows if row[0] == "criterion"}
        missing = {str(row[1]): row for row in rows if row[0] == "missing"}
        values = (
            self._columns(
                "SELECT name AS g, 0 AS c, value AS v FROM sample_values WHERE run_id = ?"
                " AND kind = 'criterion' AND value IS NOT NULL",
                (run_id,),
                QUANTILE_POINTS,
            )
            if criteria
            else {}
        )
        gates = {
            str(row[1]): GateSums(str(row[1]), failures=_int(row[3]), n=_int(row[2]))
            for row in rows
            if row[0] == "gate"
        }
        names = self._first_seen(
            "SELECT v.kind || ':' || v.name FROM samples s JOIN sample_values v"
            " ON v.run_id = s.run_id AND v.sample_id = s.sample_id"
            " AND v.kind IN ('gate', 'criterion', 'missing') WHERE s.run_id = ?",
            "v.ord",
            run_id,
            first,
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
                values=values[name][1] if name in values else _EMPTY,
                errors=int(_float(lost[6])) if lost is not None else 0,
                floor=None if high is None else float(high),
                floors_agree=low == high,
                floor_violations=_int(row[3]) if row is not None else 0,
            )
        ordered_gates = tuple(gates[name] for kind, _, name in order if kind == "gate")
        return tuple(out.values()), ordered_gates

    # -- slices -------------------------------------------------------------------------------

    def _slice(
        self, run_id: str, path: str, kept: RunTotals | None = None
    ) -> tuple[SliceSums, ...] | None:
        """The groups of metadata field ``path``, or ``None`` when some sample's metadata is not
        JSON the database reads as Python does (the record path then decides). With the run's
        rollups ``kept``, read from them when they hold this slice, else kept there once
        grouped (only the first report sliced by a field reads every sample's metadata)."""
        rows = None if kept is None else self.kept_slice(run_id, path, kept.samples)
        if rows is None:
            rows = self._slice_rows(run_id, path)
            if rows is None:
                return None
            if kept is not None and all(row[0] != _UNREADABLE for row in rows):
                self.keep_slice(run_id, path, kept.samples, rows)
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

    def _slice_rows(self, run_id: str, path: str) -> list[tuple[Any, ...]] | None:
        """The slice's statement's rows ``key text, grade, samples, passed, weighted n, weighted
        total`` (``None``: a field the database cannot read as Python does)."""
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
        return rows

    # -- helpers ------------------------------------------------------------------------------

    def _kept_groups(
        self,
        run_id: str,
        part: str,
        source: str,
        points: Sequence[tuple[str, float]],
        kept: OrderStats,
        **buckets: Any,
    ) -> dict[str, tuple[dict[int, int], ValueSums]]:
        """``part``'s groups from the run's rollups, with the order statistics ``kept`` for
        them (those not kept yet are found, then kept: the next report reads them at once)."""
        order = {name: (n, dict(ranks)) for name, (n, ranks) in kept.items()}
        out = sums_of_groups(
            self._read,
            self.location.backend == "postgres",
            source,
            (run_id,),
            self.rollup_rows(run_id, part),
            points,
            order=order,
            **buckets,
        )
        if order != kept:
            self.keep_order_stats(run_id, part, order)
        return out

    def _columns(
        self,
        source: str,
        args: tuple[Any, ...],
        points: Sequence[tuple[str, float]],
        **buckets: Any,
    ) -> dict[str, tuple[dict[int, int], ValueSums]]:
        return column_sums(
            self._read, self.location.backend == "postgres", source, args, points, **buckets
        )

    def _first_seen(
        self,
        select: str,
        within: str,
        run_id: str,
        first: Any,
        names: set[str],
        first_sample: str | None = None,
    ) -> list[str]:
        """``names`` in the order the record path meets them: the first sample (in dataset order,
        ``first`` its ``idx``) that has each, then the order that sample lists them
        (``within``). Reads the samples in that order only until every name is seen (at once,
        when the first sample has them)."""
        if not names:
            return []
        order: dict[str, None] = {}
        if first_sample is not None:  # the rollups know the first sample: one key lookup
            for (name,) in self._read(
                f"{select} AND s.sample_id = ? ORDER BY {within}", (run_id, first_sample)
            ):
                order.setdefault(str(name), None)
        elif first is not None:
            for (name,) in self._read(
                f"{select} AND s.idx = ? ORDER BY s.sample_id, {within}", (run_id, first)
            ):
                order.setdefault(str(name), None)
        if not names.issubset(order):
            for (name,) in self._read(f"{select} ORDER BY s.idx, s.sample_id, {within}", (run_id,)):
                order.setdefault(str(name), None)
        return [name for name in order if name in names]


def _totals_of(kept: RunTotals) -> tuple[Any, ...]:
    """The rollups' totals in the order of :meth:`SumsReader._totals_row`."""
    return (
        kept.samples, kept.passed, kept.target_errors, kept.graded, kept.epochs,
        kept.weighted_n, kept.weighted_total, kept.weighted_squares, kept.weighted_min,
        kept.weighted_max, kept.latency_n, kept.latency_total, kept.latency_max, kept.grade_n,
        kept.untyped, kept.first_idx,
    )  # fmt: skip


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
