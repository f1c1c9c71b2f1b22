"""Reading a run's samples as columns: what a report of plain verdicts needs, in bulk.

A report of a large run reads its samples' numbers as arrays instead of one
:class:`~aieval._records.SampleRecord` per sample: one query, in dataset order ``(idx,
sample_id)``, gives each sample's numbers and each scorer's score beside them (a ``LEFT JOIN``
per scorer), read in pages straight into typed arrays, no row kept; sums of integers and counts
run in SQL. Texts are read only where the report needs them: the failed samples' verdicts, the
epochs' ``extra``, the judges' score metadata, and (for slices) each distinct metadata text once.
Only runs whose every sample has a plain verdict in the typed columns (``VERDICT_COLUMNS``,
written since schema version 4) are read so; :meth:`ColumnReader.plain_run` says which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace as dataclasses_replace
from typing import Any

import numpy as np

from aieval.errors import StoreError
from aieval.store._backend import PageSink
from aieval.store._connection import Connection
from aieval.store._rollup_schema import OWN_USAGE

__all__ = ["CallTotals", "ColumnReader", "SampleColumns", "ScoreColumns"]

#: rows per page of a bulk read
_PAGE_ROWS = 65536

#: scorers read per query (each one a join; SQLite joins at most 64 tables)
_SCORERS_PER_QUERY = 24

#: the samples' numbers read first: target error, passed, weighted score, latency, cost
_NUMBERS = 5

#: 1 when a sample (``s``) counts the usage its target reported itself as one call (one
#: expression with the run's rollups)
_OWN_USAGE = OWN_USAGE

#: a scorer's code for a sample: no score, a value, n/a (no value, no error), an error
_MISSING, _VALUE, _NOT_APPLICABLE, _ERROR = -1, 0, 1, 2


@dataclass(frozen=True, slots=True)
class ScoreColumns:
    """One scorer's scores in sample order: the position of each scored sample, its value
    (``NaN``: none), whether it failed (no value, or an error), whether it was n/a."""

    positions: np.ndarray
    values: np.ndarray
    errors: np.ndarray
    not_applicable: np.ndarray


@dataclass(frozen=True, slots=True)
class SampleColumns:
    """A run's samples in dataset order ``(idx, sample_id)``, one array entry per sample.

    ``NaN`` stands for NULL in the float columns. ``scores`` holds each scorer's columns, in
    the order scorers first appear over the samples. With ``metadata`` asked for,
    ``metadata_codes`` gives each sample's metadata as an index into ``metadata_texts`` (its
    distinct JSON texts, ``None``: NULL).
    """

    error: np.ndarray
    passed: np.ndarray
    weighted_score: np.ndarray
    latency_s: np.ndarray
    cost: np.ndarray
    scores: dict[str, ScoreColumns]
    metadata_codes: np.ndarray | None = None
    metadata_texts: list[str | None] | None = None

    def __len__(self) -> int:
        return len(self.passed)


@dataclass(frozen=True, slots=True)
class CallTotals:
    """Sums over a run's samples and model calls, computed by the database (integers only).

    The target's tokens are its calls' (a sample without a target call counts the usage its
    target reported itself, as one call); ``*_calls`` are the calls that answered and
    ``*_unreported`` those of them that did not report both token counts, as
    :class:`~aieval._usage_figures.TokenTally` counts them.
    """

    target_input_tokens: int
    target_output_tokens: int
    target_calls: int
    target_unreported: int
    judge_input_tokens: int
    judge_output_tokens: int
    judge_calls: int
    judge_unreported: int
    answered_calls: int
    cached_calls: int
    retries: int
    cached_samples: int
    #: samples without a cost that spent tokens or made a call that answered
    unpriced: int


class ColumnReader(Connection):
    """Bulk reads of a run's sample columns (see the module docstring)."""

    def plain_run(self, run_id: str) -> bool:
        """Whether every stored sample of the run has a plain verdict in the typed columns."""
        row = self._read_one(
            "SELECT COUNT(*) FROM samples WHERE run_id = ?"
            " AND (verdict_plain IS NULL OR verdict_plain <> 1 OR verdict_passed IS NULL)",
            (run_id,),
        )
        return row is not None and int(row[0]) == 0

    def sample_columns(self, run_id: str, *, metadata: bool = False) -> SampleColumns:
        """The run's samples and their scores as columns, in dataset order."""
        scorers = [
            str(row[0])
            for row in self._read(
                "SELECT DISTINCT scorer FROM scores WHERE run_id = ? ORDER BY scorer", (run_id,)
            )
        ]
        chunks = [
            scorers[i : i + _SCORERS_PER_QUERY] for i in range(0, len(scorers), _SCORERS_PER_QUERY)
        ] or [[]]
        pages = [
            _ColumnPages(first=i == 0, metadata=metadata and i == 0) for i in range(len(chunks))
        ]
        for chunk, read in zip(chunks, pages, strict=True):
            sql = _columns_sql(len(chunk), read.first, read.metadata)
            self._read_pages(sql, (*chunk, run_id), read.add, _PAGE_ROWS)
        numbers = pages[0].table(len(chunks[0]))
        scored: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for chunk, read in zip(chunks, pages, strict=True):
            block = read.table(len(chunk))
            at = _NUMBERS if read.first else 0
            for i, name in enumerate(chunk):
                scored[name] = (block[:, at + 2 * i], block[:, at + 2 * i + 1])
        columns = SampleColumns(
            error=numbers[:, 0] != 0,
            passed=numbers[:, 1] != 0,
            weighted_score=np.ascontiguousarray(numbers[:, 2]),
            latency_s=np.ascontiguousarray(numbers[:, 3]),
            cost=np.ascontiguousarray(numbers[:, 4]),
            scores={
                name: _score_columns(*scored[name])
                for name in self._first_appearance(run_id, scored)
            },
        )
        if not metadata:
            return columns
        return dataclasses_replace(
            columns,
            metadata_codes=pages[0].metadata_codes(),
            metadata_texts=[None if t is None else str(self._db.text(t)) for t in pages[0].texts],
        )

    def _first_appearance(
        self, run_id: str, scored: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> list[str]:
        """The scorers in the order they first appear over the samples (and, at one sample,
        in the order their scores were stored), as a record per sample lists them."""
        first: dict[str, int] = {}
        for name, (_, code) in scored.items():
            present = np.flatnonzero(code != _MISSING)
            if present.size:
                first[name] = int(present[0])
        stored: dict[str, int] = {}
        for position in sorted(set(first.values())):
            at = [name for name in first if first[name] == position]
            if len(at) > 1:
                rows = self._read(
                    "SELECT c.scorer FROM scores c WHERE c.run_id = ? AND c.sample_id ="
                    " (SELECT sample_id FROM samples WHERE run_id = ?"
                    " ORDER BY idx, sample_id LIMIT 1 OFFSET ?) ORDER BY c.rowid",
                    (run_id, run_id, position),
                )
                stored.update((str(row[0]), n) for n, row in enumerate(rows))
        return sorted(first, key=lambda name: (first[name], stored.get(name, 0)))

    def judged_scores(self, run_id: str) -> list[tuple[str, str, str | None]]:
        """The ``(scorer, metadata, unreadable)`` of every score of the run whose metadata has
        judge counts (in no particular order: the judges' tallies are counts)."""
        return [
            (row[0], row[1], row[2])
            for row in self._read(
                "SELECT scorer, metadata, unreadable FROM scores"
                " WHERE run_id = ? AND metadata LIKE '%parse_failures%'",
                (run_id,),
            )
        ]

    def trajectory_scores(
        self, run_id: str, consume: Callable[[list[tuple[str, str, str, bool]]], None]
    ) -> None:
        """Give ``consume`` the ``(sample_id, scorer, metadata, passed)`` of each score of the
        run whose metadata may hold a tool trajectory (``aieval.core.TRAJECTORY_KEY``), in
        dataset order, a page at a time; ``passed`` is the sample's verdict."""

        def decoded(page: list[tuple[Any, ...]]) -> None:
            consume([(sid, scorer, meta, bool(ok)) for sid, scorer, meta, ok in page])

        self._text_pages(
            "SELECT c.sample_id, c.scorer, c.metadata, COALESCE(s.verdict_passed, s.passed, 0)"
            " FROM scores c JOIN samples s ON s.run_id = c.run_id AND s.sample_id = c.sample_id"
            " WHERE c.run_id = ? AND c.metadata LIKE '%\"trajectory\"%'"
            " ORDER BY s.idx, s.sample_id, c.scorer",
            run_id,
            decoded,
        )

    def first_scores(self, run_id: str, samples: int) -> list[tuple[str, Any, Any, str | None]]:
        """The ``(scorer, value, metadata, error)`` of every score of the run's first
        ``samples`` samples in insertion order (a look at a few rows, not a scan)."""
        return [
            (str(scorer), value, self._db.text(metadata), error)
            for scorer, value, metadata, error in self._read(
                "SELECT scorer, value, metadata, error FROM scores WHERE run_id = ? AND sample_id"
                " IN (SELECT sample_id FROM samples WHERE run_id = ? ORDER BY rowid LIMIT ?)",
                (run_id, run_id, samples),
            )
        ]

    def failed_samples(
        self, run_id: str, consume: Callable[[list[tuple[str, str | None]]], None]
    ) -> None:
        """Give ``consume`` the ``(sample_id, verdict)`` of each sample that did not pass, in
        dataset order, a page at a time."""
        self._text_pages(
            "SELECT sample_id, verdict FROM samples WHERE run_id = ? AND verdict_passed = 0"
            " ORDER BY idx, sample_id",
            run_id,
            consume,
        )

    def sample_extras(
        self, run_id: str, consume: Callable[[list[tuple[str, bool, str]]], None]
    ) -> None:
        """Give ``consume`` the ``(sample_id, passed, extra)`` of each sample with an
        ``extra`` (a run of epochs keeps each sample's epoch there), in dataset order."""

        def decoded(page: list[tuple[Any, ...]]) -> None:
            consume([(sid, bool(ok), extra) for sid, ok, extra in page])

        self._text_pages(
            "SELECT sample_id, verdict_passed, extra FROM samples WHERE run_id = ?"
            " AND extra IS NOT NULL ORDER BY idx, sample_id",
            run_id,
            decoded,
        )

    def _text_pages(self, sql: str, run_id: str, consume: PageSink) -> None:
        text = self._db.text
        self._read_pages(
            sql,
            (run_id,),
            lambda page: consume([tuple(map(text, row)) for row in page]),
            _PAGE_ROWS,
        )

    def cached_judge_calls(self, run_id: str) -> int:
        """How many of the run's judge calls that answered came from the response cache."""
        row = self._read_one(
            "SELECT COUNT(*) FROM model_calls WHERE run_id = ? AND purpose LIKE 'judge:%'"
            " AND cached <> 0 AND error IS NULL",
            (run_id,),
        )
        return int(row[0]) if row is not None else 0

    def call_totals(self, run_id: str) -> CallTotals:
        """The run's integer sums and counts, computed in SQL (in Python when a sum passes the
        64 bits of SQLite's ``SUM``, which then fails: each count fits, their sum need not)."""
        try:
            s, c = self._sql_sums(run_id)
        except StoreError as exc:
            if not _overflowed(exc):
                raise
            s, c = self._exact_sums(run_id)
        unpriced = self._read_one(
            "SELECT COUNT(*) FROM samples s WHERE s.run_id = ? AND s.cost IS NULL AND"
            " (s.input_tokens IS NOT NULL OR s.output_tokens IS NOT NULL OR EXISTS"
            " (SELECT 1 FROM model_calls c WHERE c.run_id = s.run_id"
            " AND c.sample_id = s.sample_id AND c.error IS NULL))",
            (run_id,),
        )
        return CallTotals(
            target_input_tokens=s[0] + c[0],
            target_output_tokens=s[1] + c[1],
            target_calls=s[2] + c[2],
            target_unreported=s[3] + c[3],
            judge_input_tokens=c[4],
            judge_output_tokens=c[5],
            judge_calls=c[6],
            judge_unreported=c[7],
            answered_calls=c[8],
            cached_calls=c[9],
            retries=s[4],
            cached_samples=s[5],
            unpriced=int(unpriced[0]) if unpriced is not None else 0,
        )

    def _exact_sums(self, run_id: str) -> tuple[list[int], list[int]]:
        """What :meth:`_sql_sums` gives, summed in Python over the rows."""
        s, c = [0] * 6, [0] * 10

        def samples(page: list[tuple[Any, ...]]) -> None:
            for i, o, retries, cached, own in page:
                if own:  # usage its target reported itself, as one call
                    s[0], s[1] = s[0] + (i or 0), s[1] + (o or 0)
                    s[2], s[3] = s[2] + 1, s[3] + (i is None or o is None)
                s[4], s[5] = s[4] + (retries or 0), s[5] + bool(cached)

        def calls(page: list[tuple[Any, ...]]) -> None:
            for purpose, i, o, error, cached in page:
                at = 0 if purpose == "target" else 4
                c[at], c[at + 1] = c[at] + (i or 0), c[at + 1] + (o or 0)
                if error is None:
                    c[at + 2], c[at + 3] = c[at + 2] + 1, c[at + 3] + (i is None or o is None)
                    c[8], c[9] = c[8] + 1, c[9] + bool(cached)

        self._read_pages(
            f"SELECT s.input_tokens, s.output_tokens, s.retries, s.cached, {_OWN_USAGE}"
            " FROM samples s WHERE s.run_id = ?",
            (run_id,),
            samples,
            _PAGE_ROWS,
        )
        self._read_pages(
            "SELECT purpose, input_tokens, output_tokens, error, cached FROM model_calls"
            " WHERE run_id = ?",
            (run_id,),
            calls,
            _PAGE_ROWS,
        )
        return s, c

    def _sql_sums(self, run_id: str) -> tuple[list[int], list[int]]:
        """The samples' ``(input, output, calls, unreported)`` of the usage their targets
        reported without a target call, then their ``(retries, cached)``; the calls'
        ``(input, output, answered, unreported)`` of the target's, then of the judges', then
        ``(answered, cached)`` of all."""
        samples = self._read_one(
            "SELECT COALESCE(SUM(own * COALESCE(input_tokens, 0)), 0),"
            " COALESCE(SUM(own * COALESCE(output_tokens, 0)), 0), COALESCE(SUM(own), 0),"
            " COALESCE(SUM(CASE WHEN own = 1 AND (input_tokens IS NULL OR output_tokens IS NULL)"
            " THEN 1 ELSE 0 END), 0),"
            " COALESCE(SUM(retries), 0),"
            " COALESCE(SUM(CASE WHEN cached <> 0 THEN 1 ELSE 0 END), 0)"
            f" FROM (SELECT s.input_tokens, s.output_tokens, s.retries, s.cached, {_OWN_USAGE}"
            " AS own FROM samples s WHERE s.run_id = ?) t",
            (run_id,),
        )
        sums = []
        for side in ("purpose = 'target'", "purpose <> 'target'"):
            sums += [
                f"COALESCE(SUM(CASE WHEN {side} THEN COALESCE(input_tokens, 0) ELSE 0 END), 0)",
                f"COALESCE(SUM(CASE WHEN {side} THEN COALESCE(output_tokens, 0) ELSE 0 END), 0)",
                f"COALESCE(SUM(CASE WHEN {side} AND error IS NULL THEN 1 ELSE 0 END), 0)",
                f"COALESCE(SUM(CASE WHEN {side} AND error IS NULL AND"
                " (input_tokens IS NULL OR output_tokens IS NULL) THEN 1 ELSE 0 END), 0)",
            ]
        calls = self._read_one(
            f"SELECT {', '.join(sums)},"
            " COALESCE(SUM(CASE WHEN error IS NULL THEN 1 ELSE 0 END), 0),"
            " COALESCE(SUM(CASE WHEN error IS NULL AND cached <> 0 THEN 1 ELSE 0 END), 0)"
            " FROM model_calls WHERE run_id = ?",
            (run_id,),
        )
        return [int(v) for v in samples or (0,) * 6], [int(v) for v in calls or (0,) * 10]


def _overflowed(exc: StoreError) -> bool:
    """Whether SQLite's ``SUM`` failed for an integer overflow (its message, its only sign)."""
    return "integer overflow" in str(exc.__cause__ or "")


def _columns_sql(scorers: int, samples: bool, metadata: bool) -> str:
    """The query of the sample columns (``samples``: the numbers, ``metadata`` last) and the
    value and code of ``scorers`` scorers, whose names are its first parameters."""
    selected = (
        [
            "CASE WHEN s.error IS NULL THEN 0 ELSE 1 END",
            "s.verdict_passed",
            "s.weighted_score",
            "s.latency_s",
            "s.cost",
        ]
        if samples
        else []
    )
    joins = []
    for i in range(scorers):
        c = f"c{i}"
        selected += [
            f"{c}.value",
            f"CASE WHEN {c}.scorer IS NULL THEN {_MISSING} WHEN {c}.value IS NULL THEN"
            f" (CASE WHEN {c}.error IS NULL THEN {_NOT_APPLICABLE} ELSE {_ERROR} END)"
            f" WHEN {c}.error IS NULL OR {c}.error = '' THEN {_VALUE} ELSE {_ERROR} END",
        ]
        joins.append(
            f" LEFT JOIN scores {c} ON {c}.run_id = s.run_id AND {c}.sample_id = s.sample_id"
            f" AND {c}.scorer = ?"
        )
    if metadata:
        selected.append("s.metadata")
    return (
        f"SELECT {', '.join(selected)} FROM samples s{''.join(joins)}"
        " WHERE s.run_id = ? ORDER BY s.idx, s.sample_id"
    )


def _score_columns(values: np.ndarray, code: np.ndarray) -> ScoreColumns:
    positions = np.flatnonzero(code != _MISSING)
    code = code[positions]
    return ScoreColumns(
        positions=positions,
        values=values[positions],
        errors=code == _ERROR,
        not_applicable=code == _NOT_APPLICABLE,
    )


class _ColumnPages:
    """The pages of one query of :func:`_columns_sql` as arrays: the ``first`` query's
    sample numbers, its metadata texts as codes (``metadata``), and the scorers' columns."""

    def __init__(self, *, first: bool, metadata: bool) -> None:
        self.first = first
        self.metadata = metadata
        self.texts: dict[Any, int] = {}
        self.blocks: list[np.ndarray] = []
        self.codes: list[np.ndarray] = []

    def add(self, page: list[tuple[Any, ...]]) -> None:
        """Keep one page's values (its rows are dropped with the page)."""
        if self.metadata:
            texts = self.texts
            codes = [texts.setdefault(row[-1], len(texts)) for row in page]
            self.codes.append(np.array(codes, dtype=np.intp))
            page = [row[:-1] for row in page]
        self.blocks.append(np.array(page, dtype=float).reshape(len(page), -1))

    def table(self, scorers: int) -> np.ndarray:
        """The pages as one float array: the samples' numbers (in the first query), then each
        scorer's value and code, one row per sample."""
        if len(self.blocks) != 1:
            width = (_NUMBERS if self.first else 0) + 2 * scorers
            self.blocks = [np.concatenate(self.blocks) if self.blocks else np.empty((0, width))]
        return self.blocks[0]

    def metadata_codes(self) -> np.ndarray:
        """Each sample's metadata text, as its index among the distinct texts."""
        return np.concatenate(self.codes) if self.codes else np.empty(0, dtype=np.intp)
