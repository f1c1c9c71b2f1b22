"""One column's sums, histogram and exact quantiles per group, from one grouped statement.

A source query gives rows ``(g, c, v)``: the group (a scorer, a criterion), an outcome code
(0: a value that counts, others counted only) and the value. One grouped statement counts the
codes and, for the values, sums them, sums their squares, takes min and max, counts those other
than 0 and 1, bins them into the histogram's 10 bins (numpy's edges and rule) and into fine
buckets ``floor(v * scale)`` (monotone in ``v``) with each bucket's count, min and max. A
quantile's order statistic is then found in its bucket: when the bucket holds one distinct
value (a 0/1 scorer's, a rounded score's) that is it; otherwise a second statement numbers, in
order, only the values of the few buckets needed. No sort of the whole column, and no value
read back to Python but those order statistics.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from aieval.errors import StoreError

__all__ = [
    "BINS",
    "OrderStats",
    "ValueSums",
    "column_sums",
    "grouped_sql",
    "numpy_quantiles",
    "sums_of_groups",
]

#: the histogram's bins on [0, 1], as ``aieval.stats.histogram(values, bins=10)``
BINS = 10
#: numpy's bin edges for them (``np.histogram`` compares against these very floats)
_EDGES: tuple[float, ...] = tuple(float(e) for e in np.linspace(0.0, 1.0, BINS + 1))

Read = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
#: per group: its count of values, and the values at some of their ranks (0-based, in order)
OrderStats = dict[str, tuple[int, dict[int, float]]]


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


@dataclass(slots=True)
class _Group:
    codes: dict[int, int]
    n: int
    totals: list[float]
    squares: list[float]
    minimum: float | None
    maximum: float | None
    non_binary: int
    histogram: list[int]
    #: bucket -> [count, min, max]
    buckets: dict[int, list[Any]]


def column_sums(
    read: Read,
    postgres: bool,
    source: str,
    args: Sequence[Any],
    points: Sequence[tuple[str, float]],
    *,
    scale: int = 1024,
    cap: float = 4.0,
    histogram: bool = True,
) -> dict[str, tuple[dict[int, int], ValueSums]]:
    """Per group of ``source`` (rows ``g, c, v``): how many rows of each code, and the
    :class:`ValueSums` of its code-0 values with the quantiles at ``points``.

    ``scale`` and ``cap`` set the buckets: ``floor(v * scale)`` for ``0 <= v < cap`` (one more
    below 0, one at and above ``cap``), fine enough that a bucket holds few distinct values.
    Without ``histogram`` the bins are left empty (latency's, in seconds).
    """
    rows = read(grouped_sql(postgres, source, scale=scale, cap=cap, histogram=histogram), args)
    return sums_of_groups(read, postgres, source, args, rows, points, scale=scale, cap=cap)


def grouped_sql(
    postgres: bool, source: str, *, scale: int = 1024, cap: float = 4.0, histogram: bool = True
) -> str:
    """The grouped statement of :func:`column_sums` over ``source``: rows ``g, c, qb, hb, n,
    sum, sum of squares, min, max, non-binary count`` (also what a run's rollups add up, by
    batch: one expression for the buckets and bins, so writer and reader cannot drift)."""
    bucket = _bucket("v", postgres, scale, cap)
    bins = _bin("v", postgres) if histogram else "CAST(NULL AS INTEGER)"
    inner = f"SELECT g, c, v, {bucket} AS qb, {bins} AS hb FROM ({source}) s"
    group = "g, c, qb, hb"
    if not postgres:
        # SQLite sorts the rows to group them: by one integer standing for (c, qb, hb), in the
        # same order (NULL first), not by three (a fifth less CPU). c, qb and hb are then the
        # group's own (equal in all its rows); each group's rows are summed in the same order
        width = int(cap * scale) + 11  # qb + 10 in 0..width - 1 (NULL as -9); hb + 1 in 0..10
        key = f"(c * {width} + COALESCE(qb, -9) + 10) * 16 + COALESCE(hb, -1) + 1"
        inner = f"SELECT g, c, v, qb, hb, {key} AS k FROM ({inner}) b"
        group = "g, k"
    return (
        "SELECT g, c, qb, hb, COUNT(*) AS n, SUM(v) AS s, SUM(v * v) AS q, MIN(v) AS lo,"
        " MAX(v) AS hi, SUM(CASE WHEN v <> 0 AND v <> 1 THEN 1 ELSE 0 END) AS o"
        # the buckets of every row with a value (only code 0's are read): the code is an
        # expression of the source, not evaluated again for them
        f" FROM ({inner}) t GROUP BY {group}"
    )


def sums_of_groups(
    read: Read,
    postgres: bool,
    source: str,
    args: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    points: Sequence[tuple[str, float]],
    *,
    scale: int = 1024,
    cap: float = 4.0,
    seek: str | None = None,
    order: OrderStats | None = None,
) -> dict[str, tuple[dict[int, int], ValueSums]]:
    """:func:`column_sums` from the rows of :func:`grouped_sql` (read now, or added up in a
    run's rollups: a bucket or bin the rollups keep as a number where SQL gave NULL is read
    back the same), with the order statistics ``source`` is asked for; or, given ``seek``
    (a query of one group's code-0 value at an offset within a value range, in order, on
    ``args`` then group, low, high and offset: answered by an index), by one seek each.

    ``order`` holds order statistics known already (a run's rollups keep them): those of a
    group whose count of values is the same are not asked again. It is then updated with
    every group's, so the caller may keep them."""
    groups: dict[str, _Group] = {}
    for g, c, qb, hb, count, total, squares, low, high, other in rows:
        group = groups.setdefault(str(g), _Group({}, 0, [], [], None, None, 0, [0] * BINS, {}))
        k = int(count)
        group.codes[int(c)] = group.codes.get(int(c), 0) + k
        if int(c) != 0:
            continue
        group.n += k
        group.totals.append(float(total))
        group.squares.append(float(squares))
        low, high = float(low), float(high)
        group.minimum = low if group.minimum is None else min(group.minimum, low)
        group.maximum = high if group.maximum is None else max(group.maximum, high)
        group.non_binary += int(other)
        if hb is not None and 0 <= int(hb) < BINS:
            group.histogram[int(hb)] += k
        held = group.buckets.setdefault(int(qb), [0, low, high])
        held[0] += k
        held[1], held[2] = min(held[1], low), max(held[2], high)
    known = order if order is not None else {}
    found = _order_statistics(read, postgres, source, args, groups, points, scale, cap, seek, known)
    if order is not None:
        order.clear()
        order.update((name, (groups[name].n, ranks)) for name, ranks in found.items())
    out: dict[str, tuple[dict[int, int], ValueSums]] = {}
    for name, group in groups.items():
        stats = found.get(name, {})
        quantiles = (
            {p: _lerp(stats[lo], stats[hi], t) for p, lo, hi, t in _plan(group.n, points)}
            if group.n
            else None
        )
        out[name] = (
            group.codes,
            ValueSums(
                n=group.n,
                total=math.fsum(group.totals),
                squares=math.fsum(group.squares),
                minimum=group.minimum,
                maximum=group.maximum,
                non_binary=group.non_binary,
                histogram=tuple(group.histogram),
                quantiles=quantiles,
            ),
        )
    return out


def _order_statistics(
    read: Read,
    postgres: bool,
    source: str,
    args: Sequence[Any],
    groups: dict[str, _Group],
    points: Sequence[tuple[str, float]],
    scale: int,
    cap: float,
    seek: str | None = None,
    known: OrderStats | None = None,
) -> dict[str, dict[int, float]]:
    """The order statistics (0-based ranks) the quantiles of each group need (those ``known``
    for the group's count of values taken as they are)."""
    found: dict[str, dict[int, float]] = {}
    wanted: dict[tuple[str, int], dict[int, int]] = {}  # (group, bucket) -> offset: rank
    for name, group in groups.items():
        if not group.n:
            continue
        ranks = sorted({r for _, lo, hi, _ in _plan(group.n, points) for r in (lo, hi)})
        known_n, known_ranks = (known or {}).get(name, (-1, {}))
        if known_n == group.n and all(r in known_ranks for r in ranks):
            found[name] = {r: known_ranks[r] for r in ranks}
            continue
        before = 0
        it = iter(ranks)
        rank = next(it, None)
        for b in sorted(group.buckets):
            count, low, high = group.buckets[b]
            while rank is not None and rank < before + count:
                if low == high:
                    found.setdefault(name, {})[rank] = low
                else:
                    wanted.setdefault((name, b), {})[rank - before] = rank
                rank = next(it, None)
            before += count
    if not wanted:
        return found
    if seek is not None:
        for (name, b), held in wanted.items():
            low, high = groups[name].buckets[b][1:]
            for offset, rank in held.items():
                value = read(seek, [*args, name, low, high, offset])
                if not value:
                    raise StoreError(f"the values of {name!r} changed while they were read")
                found.setdefault(name, {})[rank] = float(value[0][0])
        return found
    bucket = _bucket("v", postgres, scale, cap)
    # a bucket's values lie between its min and max: that range is tested before the bucket's
    # expression, so only the wanted buckets' rows are bucketed and sorted
    within = " OR ".join("(g = ? AND v >= ? AND v <= ?)" for _ in wanted)
    where = " OR ".join("(g = ? AND qb = ?)" for _ in wanted)
    bounds = [x for (name, b) in wanted for x in (name, *groups[name].buckets[b][1:])]
    offsets = sorted({o for held in wanted.values() for o in held})
    marks = ", ".join("?" * len(offsets))
    rows = read(
        "SELECT g, qb, r, v FROM (SELECT g, qb, v, ROW_NUMBER() OVER (PARTITION BY g, qb"
        f" ORDER BY v) - 1 AS r FROM (SELECT g, v, {bucket} AS qb FROM ({source}) s"
        f" WHERE c = 0 AND ({within})) t WHERE {where}) u WHERE r IN ({marks})",
        [*args, *bounds, *(x for key in wanted for x in key), *offsets],
    )
    for g, qb, r, v in rows:
        rank = wanted.get((str(g), int(qb)), {}).get(int(r))
        if rank is not None:
            found.setdefault(str(g), {})[rank] = float(v)
    for (name, _), held in wanted.items():
        if any(rank not in found.get(name, {}) for rank in held.values()):
            raise StoreError(f"the values of {name!r} changed while they were read")
    return found


def _bucket(v: str, postgres: bool, scale: int, cap: float) -> str:
    """``floor(v * scale)`` on ``[0, cap)``, -1 below, ``cap * scale`` at and above (and for
    PostgreSQL's NaN, which sorts above every number): monotone in ``v``."""
    top = int(cap * scale)
    inner = (
        f"CAST(floor({v} * {scale}) AS BIGINT)" if postgres else f"CAST({v} * {scale} AS INTEGER)"
    )
    return (
        f"CASE WHEN {v} < 0 THEN -1 WHEN {v} >= {cap!r} OR NOT {v} = {v} THEN {top}"
        f" ELSE {inner} END"
    )


def _bin(v: str, postgres: bool) -> str:
    """The histogram bin of ``v`` as ``np.histogram`` finds it: the edges it is at or above
    (the last bin closed); NULL outside [0, 1]."""
    edge = (lambda e: f"CAST({e!r} AS DOUBLE PRECISION)") if postgres else repr

    def search(low: int, high: int) -> str:
        # the bin among low..high by halving (four comparisons a value, not nine): the edges
        # are increasing, so this is the count of inner edges at or below the value
        if low == high:
            return str(low)
        middle = (low + high + 1) // 2
        return (
            f"CASE WHEN {v} >= {edge(_EDGES[middle])} THEN {search(middle, high)}"
            f" ELSE {search(low, middle - 1)} END"
        )

    return f"CASE WHEN {v} >= 0 AND {v} <= 1 THEN {search(0, BINS - 1)} END"


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
