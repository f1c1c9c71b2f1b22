"""A run's rollups: the partial sums its report reads, built once when the run ends.

``run_totals`` holds one row per run: the samples' counts and sums (those of
:meth:`SumsReader._sample_totals` and :meth:`ReportSumsReader.report_sums`) and the count of
judged scores. ``run_rollups`` holds, per part (``scores``, ``latency``), the rows of
:func:`~aieval.store._column_sums.grouped_sql`: per group, code, fine bucket and histogram bin,
the count, sum, sum of squares, min, max and non-binary count. ``run_order_stats`` keeps the
order statistics the report's quantiles interpolate, and ``run_slices`` the slices a report
asked for (schema version 11: both kept the first time they are computed).

A run's row in ``run_totals`` is what makes its rollups valid, and only while the run's sample
count equals the one it holds (:meth:`RollupReader.run_totals`). They are built by one scan of
the run when it ends (``Store.finish_run``: :meth:`RollupReader.rebuild_rollups`, with the
statements of :func:`delta_statements`), not by each batch: a writer pays nothing for them
(docs/architecture.md, "Sums in the database", says why). A run without valid rollups (still
running, killed, stored before version 10) is summed by a scan when read; one that is not
running has that scan stored as its rollups, in one transaction that holds its writers off. An
import adding samples to a run here adds their deltas in its own transaction
(:func:`batch_statements`), with the very statements the scan uses, so bucket and bin edges
cannot drift.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aieval.store._backend import Execute
from aieval.store._column_reads import CallTotals
from aieval.store._column_sums import OrderStats, grouped_sql
from aieval.store._connection import Connection
from aieval.store._location import StoreLocation
from aieval.store._open import open_backend
from aieval.store._owner import owner_gone
from aieval.store._rollup_schema import CALL_TOTALS, FLOATS, JUDGED, OWN_USAGE, TOTALS
from aieval.store._untrusted import UntrustedSqliteBackend

__all__ = [
    "LATENCY_BUCKETS",
    "SCORE_BUCKETS",
    "SCORE_SEEK",
    "RollupReader",
    "RunTotals",
    "add_batch",
    "batch_statements",
    "delta_statements",
    "latency_source",
    "reasons_key",
    "scores_source",
]

log = logging.getLogger("aieval")

Statement = tuple[str, tuple[Any, ...]]

#: the tables of a run's rollups (``run_totals`` last: its row makes the others valid)
_TABLES = ("run_rollups", "run_reason_firsts", "run_order_stats", "run_slices", "run_totals")
#: the scores' buckets in the rollups: 1/64 wide (a batch upserts a row per bucket a value
#: falls in, so the 1/1024 of a scan would cost twice the write; a rank in a bucket of more
#: than one distinct value is read from the run's values, by the index on PostgreSQL)
SCORE_BUCKETS: dict[str, Any] = {"scale": 64}
#: latency's buckets: 1/64 s up to four and a half hours (longer ones share the last), no bins
LATENCY_BUCKETS: dict[str, Any] = {"scale": 64, "cap": 16384.0, "histogram": False}


def scores_source(within: str = "") -> str:
    """The scores as rows ``g, c, v``: a score's code is 0 for a value that counts, 1 n/a (no
    value, no error), 2 failed (no value, or an error; '' is none), as the report counts them.
    ``within`` narrows the run's rows (a batch's samples)."""
    return (
        "SELECT scorer AS g, CASE WHEN value IS NULL THEN (CASE WHEN error IS NULL THEN 1"
        " ELSE 2 END) WHEN error IS NULL OR error = '' THEN 0 ELSE 2 END AS c, value AS v"
        f" FROM scores WHERE run_id = ?{within}"
    )


#: a scorer's code-0 value at an offset within a value range, in order (``sums_of_groups``'
#: ``seek``): PostgreSQL answers it from ``scores_table_value``
SCORE_SEEK = (
    "SELECT value FROM scores WHERE run_id = ? AND scorer = ? AND value >= ? AND value <= ?"
    " AND (error IS NULL OR error = '') ORDER BY value LIMIT 1 OFFSET ?"
)


def latency_source(within: str = "") -> str:
    """The samples' latencies as rows ``g, c, v`` (one group, code 0)."""
    return (
        "SELECT '' AS g, 0 AS c, latency_s AS v FROM samples WHERE run_id = ?"
        f"{within} AND latency_s IS NOT NULL"
    )


@dataclass(frozen=True, slots=True)
class RunTotals:
    """A run's row of ``run_totals`` (see the module docstring), as read back."""

    samples: int
    passed: int
    target_errors: int
    graded: int
    epochs: int
    weighted_n: int
    weighted_total: float
    weighted_squares: float
    weighted_min: float | None
    weighted_max: float | None
    latency_n: int
    latency_total: float
    latency_max: float | None
    grade_n: int
    untyped: int
    first_idx: int | None
    not_plain: int
    cost_n: int
    cost_total: float
    weighted_zeros: int
    weighted_hundreds: int
    own_input: int
    own_output: int
    own_calls: int
    own_unreported: int
    retries: int
    cached_samples: int
    unpriced: int
    target_input: int
    target_output: int
    target_calls: int
    target_unreported: int
    judge_input: int
    judge_output: int
    judge_calls: int
    judge_unreported: int
    answered_calls: int
    cached_calls: int
    judged: int
    #: the run's first sample in dataset order (``None`` without samples)
    first_sample: str | None = None

    def call_totals(self) -> CallTotals:
        """The run's :class:`~aieval.store.CallTotals`, as ``ColumnReader.call_totals`` sums
        them."""
        return CallTotals(
            target_input_tokens=self.own_input + self.target_input,
            target_output_tokens=self.own_output + self.target_output,
            target_calls=self.own_calls + self.target_calls,
            target_unreported=self.own_unreported + self.target_unreported,
            judge_input_tokens=self.judge_input,
            judge_output_tokens=self.judge_output,
            judge_calls=self.judge_calls,
            judge_unreported=self.judge_unreported,
            answered_calls=self.answered_calls,
            cached_calls=self.cached_calls,
            retries=self.retries,
            cached_samples=self.cached_samples,
            unpriced=self.unpriced,
        )


def _combine(name: str, how: str) -> str:
    old, new = f"run_totals.{name}", f"d.{name}"
    if how == "sum":
        return f"{name} = {old} + COALESCE({new}, 0)"
    better = "<=" if how == "min" else ">="
    return (
        f"{name} = CASE WHEN {new} IS NULL OR ({old} IS NOT NULL AND {old} {better} {new})"
        f" THEN {old} ELSE {new} END"
    )


def _keep(how: str, col: str) -> str:
    """The least (``<=``) or greatest (``>=``) of a rollup's ``col`` and a batch's, NULL-safe."""
    old, new = f"run_rollups.{col}", f"excluded.{col}"
    return (
        f"CASE WHEN {new} IS NULL OR ({old} IS NOT NULL AND {old} {how} {new})"
        f" THEN {old} ELSE {new} END"
    )


#: ``run_rollups``' columns, in the order the rows of a part are selected
_ROLLUP_COLUMNS = "run_id, part, g, c, qb, hb, n, total, squares, low, high, other"


def _part_rows(part: str, postgres: bool, source: str, buckets: dict[str, Any]) -> str:
    """The rows of ``run_rollups`` for ``part`` over ``source`` (on run id, then its args)."""
    grouped = grouped_sql(postgres, source, **buckets)
    return (
        f"SELECT ?, '{part}', g, c, COALESCE(qb, -9), COALESCE(hb, -1), n, COALESCE(s, 0),"
        f" COALESCE(q, 0), lo, hi, COALESCE(o, 0) FROM ({grouped}) r"
    )


def _part(part: str, postgres: bool, source: str, buckets: dict[str, Any]) -> str:
    return (
        f"INSERT INTO run_rollups ({_ROLLUP_COLUMNS}) {_part_rows(part, postgres, source, buckets)}"
        " WHERE EXISTS (SELECT 1 FROM run_totals WHERE run_id = ?)"
        " ON CONFLICT (run_id, part, g, c, qb, hb) DO UPDATE SET n = run_rollups.n + excluded.n,"
        " total = COALESCE(run_rollups.total, 0) + COALESCE(excluded.total, 0),"
        " squares = COALESCE(run_rollups.squares, 0) + COALESCE(excluded.squares, 0),"
        f" low = {_keep('<=', 'low')}, high = {_keep('>=', 'high')},"
        " other = run_rollups.other + excluded.other"
    )


#: the fewest samples a run has for the end's scan to read two of its statements on
#: connections of their own (see ``RollupReader._scan_rows``)
BESIDE_FROM = 10_000
#: the first samples kept per failed reasons list (a report lists 5 per reason)
FIRSTS_KEPT = 5


def reasons_key(postgres: bool, verdict: str = "verdict") -> str:
    """A failed sample's reasons as the database groups them: the JSON text of its verdict's
    ``reasons`` (``'[]'`` without)."""
    if postgres:
        return f"COALESCE(({verdict}::json -> 'reasons')::text, '[]')"
    return f"COALESCE(json_extract({verdict}, '$.reasons'), '[]')"


def _failed(postgres: bool, within: str) -> str:
    """The failed samples as rows ``r`` (their reasons' text), ``idx``, ``sample_id``."""
    return (
        f"SELECT {reasons_key(postgres)} AS r, idx, sample_id FROM samples WHERE run_id = ?"
        f"{within} AND verdict_passed = 0 AND verdict IS NOT NULL"
    )


def _reason_counts(failed: str, where: str = "") -> str:
    """The ``run_rollups`` rows (part ``reasons``) of the ``failed`` samples."""
    return (
        f"SELECT ?, 'reasons', r, 0, 0, 0, COUNT(*), 0, 0, NULL, NULL, 0 FROM ({failed}) f"
        f"{where} GROUP BY r"
    )


def _reason_firsts(failed: str) -> str:
    """The ``run_reason_firsts`` rows of the ``failed`` samples (a ``WHERE`` to extend)."""
    return (
        "SELECT ?, r, idx, sample_id FROM (SELECT r, idx, sample_id, ROW_NUMBER() OVER"
        f" (PARTITION BY r ORDER BY idx, sample_id) AS k FROM ({failed}) f) t"
        f" WHERE k <= {FIRSTS_KEPT}"
    )


def _reason_statements(
    run_id: str, postgres: bool, within: str, extra: tuple[Any, ...]
) -> list[Statement]:
    """The failed samples' counts by reasons, and each reasons' first samples (those of the
    rows ``within`` picks that rank among the first :data:`FIRSTS_KEPT`, then the kept ones
    beyond them dropped, for the reasons these rows have)."""
    failed = _failed(postgres, within)
    exists = "EXISTS (SELECT 1 FROM run_totals WHERE run_id = ?)"
    counts = (
        f"INSERT INTO run_rollups ({_ROLLUP_COLUMNS}) {_reason_counts(failed, f' WHERE {exists}')}"
        " ON CONFLICT (run_id, part, g, c, qb, hb) DO UPDATE SET n = run_rollups.n + excluded.n"
    )
    firsts = (
        "INSERT INTO run_reason_firsts (run_id, reasons, idx, sample_id)"
        f" {_reason_firsts(failed)} AND {exists}"
    )
    prune = (
        "DELETE FROM run_reason_firsts WHERE run_id = ?"
        f" AND reasons IN (SELECT r FROM ({failed}) f) AND (SELECT COUNT(*) FROM"
        " run_reason_firsts o WHERE o.run_id = run_reason_firsts.run_id AND o.reasons ="
        " run_reason_firsts.reasons AND (o.idx < run_reason_firsts.idx OR (o.idx ="
        " run_reason_firsts.idx AND o.sample_id < run_reason_firsts.sample_id)))"
        f" >= {FIRSTS_KEPT}"
    )
    out = [
        (counts, (run_id, run_id, *extra, run_id)),
        (firsts, (run_id, run_id, *extra, run_id)),
    ]
    # a scan of the whole run keeps the first ones only already: nothing beyond them to drop
    return [*out, (prune, (run_id, run_id, *extra))] if within else out


def _totals_from(within: str) -> str:
    """``run_totals``' values of the rows ``within`` picks, as ``d`` (the samples' and
    scores') and ``m`` (the model calls'); on the run id and ``within``'s args, four times."""
    columns = ", ".join(f"{expr} AS {name}" for name, expr, _ in TOTALS)
    calls = ", ".join(f"{expr} AS {name}" for name, expr in CALL_TOTALS)
    return (
        f"(SELECT {columns},"
        f" (SELECT COUNT(*) FROM scores WHERE run_id = ?{within} AND {JUDGED}) AS judged,"
        f" (SELECT sample_id FROM samples WHERE run_id = ?{within} ORDER BY idx, sample_id"
        " LIMIT 1) AS first_sample"
        f" FROM (SELECT s.*, {OWN_USAGE} AS own FROM samples s WHERE s.run_id = ?{within}) s) d,"
        f" (SELECT {calls} FROM model_calls WHERE run_id = ?{within}) m"
    )


def delta_statements(
    run_id: str, postgres: bool, within: str = "", args: Sequence[Any] = ()
) -> list[Statement]:
    """The statements that add to a run's rollups the rows ``within`` picks (SQL after
    ``run_id = ?``, with ``args``: a batch's samples; all of the run's when empty). They change
    nothing for a run whose rollups are not valid (no row in ``run_totals``)."""
    extra = tuple(args)
    combined = [_combine(n, how) for n, _, how in TOTALS]
    combined += [f"{n} = run_totals.{n} + COALESCE(m.{n}, 0)" for n, _ in CALL_TOTALS]
    # the first sample's id, with ``first_idx`` (every SET reads the row as it was)
    combined.append(
        "first_sample = CASE WHEN d.first_idx IS NOT NULL AND (run_totals.first_idx IS NULL"
        " OR d.first_idx < run_totals.first_idx OR (d.first_idx = run_totals.first_idx"
        " AND d.first_sample < run_totals.first_sample)) THEN d.first_sample"
        " ELSE run_totals.first_sample END"
    )
    totals = (
        f"UPDATE run_totals SET {', '.join(combined)}, judged = run_totals.judged + d.judged"
        f" FROM {_totals_from(within)} WHERE run_totals.run_id = ?"
    )
    return [
        (totals, (run_id, *extra, run_id, *extra, run_id, *extra, run_id, *extra, run_id)),
        (
            _part("scores", postgres, scores_source(within), SCORE_BUCKETS),
            (run_id, run_id, *extra, run_id),
        ),
        (
            _part("latency", postgres, latency_source(within), LATENCY_BUCKETS),
            (run_id, run_id, *extra, run_id),
        ),
        *_reason_statements(run_id, postgres, within, extra),
    ]


def batch_statements(
    run_id: str, sample_ids: Sequence[str], postgres: bool, member_of: Any, step: int
) -> list[Statement]:
    """:func:`delta_statements` of a batch's samples, ``step`` ids a statement at most."""
    out: list[Statement] = []
    for start in range(0, len(sample_ids), step):
        where, args = member_of("sample_id", list(sample_ids[start : start + step]))
        out += delta_statements(run_id, postgres, f" AND {where}", args)
    return out


def add_batch(
    execute: Execute,
    errors: tuple[type[BaseException], ...],
    run_id: str,
    statements: Sequence[Statement],
) -> None:
    """Run a batch's rollup ``statements`` in the writer's transaction, in a savepoint: a
    statement the database refuses (PostgreSQL's float overflow or underflow in a sum of
    squares) drops the run's rollups instead of the batch (the next report scans the run)."""
    execute("SAVEPOINT aieval_rollups", ())
    try:
        for sql, args in statements:
            execute(sql, args)
    except errors as exc:
        log.debug("rollups of run %s dropped: %s", run_id, exc)
        execute("ROLLBACK TO SAVEPOINT aieval_rollups", ())
        for table in _TABLES:
            execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
    execute("RELEASE SAVEPOINT aieval_rollups", ())


def _read_beside(
    location: StoreLocation | None, run_id: str, counted: int, statement: Statement
) -> list[tuple[Any, ...]] | None:
    """SQLite: the rows of one of the end's scan statements, read on a connection of its own
    to the file at ``location`` in a snapshot that holds the run's ``counted`` samples
    (``None`` when it holds another count, there is no file, or the connection fails: the
    caller reads them in its own snapshot)."""
    if location is None:
        return None
    try:
        db = open_backend(location)
    except Exception:
        return None
    try:
        with db.transaction():
            now = db.query("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
            if int(now[0][0]) != counted:
                return None
            return db.query(*statement)
    except db.errors:
        return None
    finally:
        db.close()


class RollupReader(Connection):
    """A run's rollups, read back (and rebuilt by a scan when the run has none)."""

    def _rollups_usable(self) -> bool:
        # a file someone else made is never trusted for figures it merely claims (nor written)
        return not isinstance(self._db, UntrustedSqliteBackend)

    def ensure_rollups(self, run_id: str) -> RunTotals | None:
        """The run's totals, its rollups rebuilt by a scan first when they are not valid;
        ``None`` when they cannot be (a read-only store, a file not trusted): the caller
        scans."""
        if not self._rollups_usable():
            return None
        found = self.run_totals(run_id)
        if found is not None or self._still_written(run_id):
            return found  # a run its writer still adds to is scanned, not kept
        try:
            self.rebuild_rollups(run_id)
        except Exception as exc:  # a store we may not write: scanned each time
            log.debug("cannot store the rollups of run %s: %s", run_id, self._why(exc))
            return None
        return self.run_totals(run_id)

    def _still_written(self, run_id: str) -> bool:
        """Whether the run is running and its owner alive (its rollups are built at its end)."""
        row = self._read_one(
            "SELECT status, pid, host, heartbeat_at, COALESCE(started_at, created_at)"
            " FROM runs WHERE id = ?",
            (run_id,),
        )
        if row is None or row[0] != "running":
            return False
        return not owner_gone(row[1], row[2], row[3], started_at=row[4])

    def kept_order_stats(self, run_id: str) -> dict[str, OrderStats]:
        """The order statistics kept for the run, by part: ``group -> (n, {rank: value})``."""
        out: dict[str, OrderStats] = {}
        text = self._db.text
        for part, g, n, rank, value in self._read(
            "SELECT part, g, n, rank, value FROM run_order_stats WHERE run_id = ?", (run_id,)
        ):
            held = out.setdefault(str(text(part)), {})
            held.setdefault(str(text(g)), (int(n), {}))[1][int(rank)] = float(value)
        return out

    def keep_order_stats(self, run_id: str, part: str, found: OrderStats) -> None:
        """Keep ``found`` as ``part``'s order statistics (in place of those kept), when the
        run's rollups are valid; a store that cannot be written is left as it is."""
        rows = [
            (run_id, part, g, n, rank, value, run_id)
            for g, (n, ranks) in found.items()
            for rank, value in ranks.items()
        ]
        self._keep(
            [("DELETE FROM run_order_stats WHERE run_id = ? AND part = ?", (run_id, part))],
            "INSERT INTO run_order_stats (run_id, part, g, n, rank, value) SELECT ?, ?, ?, ?,"
            " ?, ? WHERE EXISTS (SELECT 1 FROM run_totals WHERE run_id = ?)",
            rows,
        )

    def kept_slice(self, run_id: str, field: str, samples: int) -> list[tuple[Any, ...]] | None:
        """The rows of the slice by ``field`` kept for the run at ``samples`` samples (``None``:
        not kept), as the slice's statement gave them."""
        rows = self._read(
            "SELECT k, grade, samples, passed, weighted_n, weighted_total FROM run_slices"
            " WHERE run_id = ? AND field = ? AND samples_at = ?",
            (run_id, field, samples),
        )
        return rows or None

    def keep_slice(
        self, run_id: str, field: str, samples: int, rows: Sequence[Sequence[Any]]
    ) -> None:
        """Keep the slice's ``rows`` for the run at ``samples`` samples (see :meth:`kept_slice`)."""
        self._keep(
            [("DELETE FROM run_slices WHERE run_id = ? AND field = ?", (run_id, field))],
            "INSERT INTO run_slices (run_id, field, samples_at, k, grade, samples, passed,"
            " weighted_n, weighted_total) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?"
            " WHERE EXISTS (SELECT 1 FROM run_totals WHERE run_id = ?)",
            [(run_id, field, samples, *row, run_id) for row in rows],
        )

    def _keep(self, first: list[Statement], insert: str, rows: list[tuple[Any, ...]]) -> None:
        if not self._rollups_usable():
            return
        try:
            with self._lock, self._db.transaction():
                for sql, args in first:
                    self._db.execute(sql, args)
                if rows:
                    self._db.executemany(insert, rows)
        except Exception as exc:  # a store we may not write: computed again next time
            log.debug("cannot keep rollups: %s", self._why(exc))

    def run_totals(self, run_id: str) -> RunTotals | None:
        """The run's ``run_totals`` row, or ``None`` when its rollups are not valid: none kept,
        or a sample count other than the run's (a sample written around the writer, by hand or
        by an older aieval on a shared store: the rollups are then rebuilt, never read stale)."""
        names = [name for name, _, _ in TOTALS] + [name for name, _ in CALL_TOTALS]
        row = self._read_one(
            f"SELECT {', '.join(names)}, judged, first_sample, (SELECT COUNT(*) FROM samples s"
            " WHERE s.run_id = t.run_id) FROM run_totals t WHERE t.run_id = ?",
            (run_id,),
        )
        if row is None:
            return None
        counted, row = row[-1], row[:-1]
        if int(counted) != int(row[0] or 0):
            return None
        values: dict[str, Any] = {}
        hows = [how for _, _, how in TOTALS] + ["sum"] * len(CALL_TOTALS)
        for name, how, value in zip(names, hows, row, strict=False):
            if value is None:
                values[name] = 0 if how == "sum" else None
            else:
                values[name] = float(value) if name in FLOATS else int(value)
        first = row[-1]
        return RunTotals(
            **values,
            judged=int(row[-2]),
            first_sample=None if first is None else str(self._db.text(first)),
        )

    def rollup_rows(self, run_id: str, part: str) -> list[tuple[Any, ...]]:
        """The rows of ``part`` as :func:`grouped_sql` gives them."""
        return self._read(
            "SELECT g, c, qb, hb, n, total, squares, low, high, other FROM run_rollups"
            " WHERE run_id = ? AND part = ?",
            (run_id, part),
        )

    def rebuild_rollups(self, run_id: str) -> None:
        """Sum the run by a scan and store it as its rollups. PostgreSQL: in one transaction
        that holds off the run's writers (its row, which each batch's samples lock by their
        foreign key; other runs' writers go on). SQLite: the scan is read in a snapshot, which
        holds off no writer, then stored in a short write transaction if the run still has
        the samples it counted (else left to the next read)."""
        db = self._db
        postgres = self.location.backend == "postgres"
        if not postgres:
            scanned = self._scan_rows(run_id)
            if scanned is not None:
                self._store_rows(run_id, *scanned)
            return
        with self._lock, db.transaction(exclusive=True):
            if postgres:
                db.query("SELECT 1 FROM runs WHERE id = ? FOR UPDATE", (run_id,))
            for table in _TABLES:
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            if not db.query("SELECT 1 FROM runs WHERE id = ?", (run_id,)):
                return  # no such run (deleted meanwhile): nothing to keep
            db.execute("INSERT INTO run_totals (run_id) VALUES (?)", (run_id,))
            for sql, args in delta_statements(run_id, postgres):
                db.execute(sql, args)

    def _scan_rows(
        self, run_id: str
    ) -> tuple[int, tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]] | None:
        """SQLite: the run's sample count, ``run_totals``' values, ``run_rollups``' rows and
        ``run_reason_firsts``' rows, by the statements of :func:`delta_statements`, in one
        read transaction (a snapshot: writers go on). ``None`` for no such run."""
        db = self._db
        names = [n for n, _, _ in TOTALS] + ["judged", "first_sample"] + [n for n, _ in CALL_TOTALS]
        with self._lock, db.transaction():
            found = db.query(
                "SELECT (SELECT COUNT(*) FROM samples WHERE run_id = ?) FROM runs WHERE id = ?",
                (run_id, run_id),
            )
            if not found:
                return None
            counted = int(found[0][0])
            # the scan's two longest statements, the scores' part (SQLite sorts every score
            # row to group them) and the failed samples' reasons, run on connections of their
            # own meanwhile (SQLite runs a statement with the interpreter free): the end of a
            # million-sample run takes half the time
            beside = [
                (_part_rows("scores", False, scores_source(), SCORE_BUCKETS), (run_id,) * 2),
                (_reason_counts(_failed(False, "")), (run_id,) * 2),
            ]
            # a smaller run's statements take less than connections of their own cost
            at = self._open_file() if counted >= BESIDE_FROM else None
            with ThreadPoolExecutor(len(beside), thread_name_prefix="aieval-rollups") as pool:
                reads = [
                    pool.submit(_read_beside, at, run_id, counted, statement)
                    for statement in beside
                ]
                found = db.query(
                    f"SELECT {', '.join(names)} FROM {_totals_from('')}", (run_id,) * 4
                )
                latency = db.query(
                    _part_rows("latency", False, latency_source(), LATENCY_BUCKETS), (run_id,) * 2
                )
                # None: its snapshot did not hold the run's samples as this one does (read here)
                scores, reasons = (
                    db.query(*statement) if (got := read.result()) is None else got
                    for read, statement in zip(reads, beside, strict=True)
                )
            row, rows = found[0], [*scores, *latency, *reasons]
            counts = {str(r[2]): int(r[6]) for r in rows if r[1] == "reasons"}
            firsts = self._first_failed(run_id, counts)
        sums = {n for n, _, how in TOTALS if how == "sum"} | {n for n, _ in CALL_TOTALS}
        totals = tuple(0 if v is None and n in sums else v for n, v in zip(names, row, strict=True))
        return counted, totals, rows, firsts

    def _open_file(self) -> StoreLocation | None:
        """SQLite: the store's location as the file its connection has open (an absolute
        path: the working folder may have changed since the store was opened), or ``None``
        (no file: a connection of its own would open another database)."""
        for _, name, file in self._db.query("PRAGMA database_list"):
            if name == "main" and file:
                return replace(self.location, path=Path(file))
        return None

    def _first_failed(self, run_id: str, counts: dict[str, int]) -> list[tuple[Any, ...]]:
        """SQLite: ``run_reason_firsts``' rows of the run, given its failed samples' ``counts``
        by reasons: the first failed samples in (idx, sample_id) order, the fewest needed to
        hold each reasons' first :data:`FIRSTS_KEPT` (read four times more each round), their
        reasons read from those samples only (not from every failed sample again)."""
        need = {r: min(n, FIRSTS_KEPT) for r, n in counts.items()}
        limit = max(64, 8 * FIRSTS_KEPT * len(need))
        while True:
            rows = self._db.query(
                f"SELECT {reasons_key(False, 's.verdict')}, o.idx,"
                " o.sample_id FROM (SELECT rowid AS k, idx, sample_id FROM samples WHERE"
                " run_id = ? AND verdict_passed = 0 AND verdict IS NOT NULL ORDER BY idx,"
                " sample_id LIMIT ?) o JOIN samples s ON s.rowid = o.k ORDER BY o.idx, o.sample_id",
                (run_id, limit),
            )
            kept: dict[str, list[tuple[Any, ...]]] = {}
            for r, idx, sample_id in rows:
                held = kept.setdefault(str(r), [])
                if len(held) < FIRSTS_KEPT:
                    held.append((run_id, r, idx, sample_id))
            if len(rows) < limit or all(len(kept.get(r, ())) >= n for r, n in need.items()):
                return [row for held in kept.values() for row in held]
            limit *= 4

    def _store_rows(
        self,
        run_id: str,
        counted: int,
        totals: tuple[Any, ...],
        rows: list[tuple[Any, ...]],
        firsts: list[tuple[Any, ...]],
    ) -> None:
        """SQLite: store what :meth:`_scan_rows` read as the run's rollups, in place of any,
        unless the run's sample count changed meanwhile (then none: the next read scans)."""
        db = self._db
        names = [n for n, _, _ in TOTALS] + ["judged", "first_sample"] + [n for n, _ in CALL_TOTALS]
        with self._lock, db.transaction(exclusive=True):
            for table in _TABLES:
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            now = db.query("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,))
            if int(now[0][0]) != counted or int(totals[0] or 0) != counted:
                return  # samples written meanwhile: the snapshot is not the run's any more
            db.execute(
                f"INSERT INTO run_totals (run_id, {', '.join(names)})"
                f" VALUES ({', '.join('?' * (len(names) + 1))})",
                (run_id, *totals),
            )
            if rows:
                db.executemany(
                    f"INSERT INTO run_rollups ({_ROLLUP_COLUMNS}) VALUES ({', '.join('?' * 12)})",
                    rows,
                )
            if firsts:
                db.executemany(
                    "INSERT INTO run_reason_firsts (run_id, reasons, idx, sample_id)"
                    " VALUES (?, ?, ?, ?)",
                    firsts,
                )
