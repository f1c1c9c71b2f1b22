"""Reading stored samples: in dataset or finishing order, one by one, or as score columns."""

from __future__ import annotations

from collections.abc import Iterator
from json import loads as _json
from sys import intern
from typing import Any

from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.core import Verdict, split_epoch
from aieval.core._stored import adapt_record, config_threshold
from aieval.errors import RunNotFoundError
from aieval.store._connection import Connection
from aieval.store._encoding import loads
from aieval.store._schema import SAMPLE_COLUMNS

__all__ = ["SampleReader"]


class SampleReader(Connection):
    """Queries over the ``samples``, ``scores`` and ``model_calls`` tables."""

    def sample_times(self, run_id: str) -> dict[str, float]:
        """``{sample id: when it was stored}`` (seconds since the epoch), i.e. when it finished."""
        rows = self._read("SELECT sample_id, created_at FROM samples WHERE run_id = ?", (run_id,))
        return {sample_id: float(created) for sample_id, created in rows}

    def iter_samples(
        self,
        run_id: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        texts: bool = True,
        predictions: bool = True,
    ) -> Iterator[SampleRecord]:
        """Stored samples of a run in dataset order, with their scores and calls.

        Samples are read in pages of a few hundred (three queries per page), so a large run
        streams in bounded memory. What aggregation reads, faster: with ``texts=False`` the
        samples' ``input``, ``expected`` and ``prediction`` are not read (they are ``None``),
        with ``predictions=False`` only ``prediction`` is not.
        """
        order = [
            row[0]
            for row in self._read(
                "SELECT sample_id FROM samples WHERE run_id = ? ORDER BY idx, sample_id"
                " LIMIT ? OFFSET ?",
                (run_id, self._db.no_limit if limit is None else limit, offset),
            )
        ]
        threshold = self.pass_threshold(run_id)
        verdicts = _Verdicts()
        columns = SAMPLE_COLUMNS
        if not texts:
            columns = columns.replace("input, expected, prediction", "NULL, NULL, NULL")
        elif not predictions:
            columns = columns.replace("expected, prediction", "expected, NULL")
        page = self._db.max_members
        for start in range(0, len(order), page):
            yield from self._page(run_id, order[start : start + page], threshold, verdicts, columns)

    def _page(
        self,
        run_id: str,
        ids: list[str],
        threshold: float,
        verdicts: _Verdicts,
        columns: str,
    ) -> list[SampleRecord]:
        member, values = self._db.member_of("sample_id", ids)
        with self._lock:
            rows = self._read(
                f"SELECT {columns} FROM samples WHERE run_id = ? AND {member}",
                (run_id, *values),
            )
            score_rows = self._read(
                "SELECT sample_id, scorer, value, raw, reason, error, metadata, unreadable"
                f" FROM scores WHERE run_id = ? AND {member} ORDER BY rowid",
                (run_id, *values),
            )
            call_rows = self._read(
                "SELECT sample_id, purpose, provider, model, latency_s, input_tokens,"
                " output_tokens, cost, retries, cached, error FROM model_calls"
                f" WHERE run_id = ? AND {member} ORDER BY id",
                (run_id, *values),
            )
        scores: dict[str, list[tuple[Any, ...]]] = {}
        for score in score_rows:
            scores.setdefault(score[0], []).append(score[1:])
        calls: dict[str, list[tuple[Any, ...]]] = {}
        for call in call_rows:
            calls.setdefault(call[0], []).append(call[1:])
        by_id = {row[1]: row for row in rows}
        return [
            _sample_record(by_id[i], scores.get(i, []), calls.get(i, []), threshold, verdicts)
            for i in ids
            if i in by_id
        ]

    def pass_threshold(self, run_id: str) -> float:
        """The run's stored ``pass_threshold`` (``DEFAULT_PASS_THRESHOLD`` when its config has
        none)."""
        row = self._read_one("SELECT config FROM runs WHERE id = ?", (run_id,))
        return config_threshold(loads(row[0]) if row is not None else None)

    def samples_since(
        self, run_id: str, position: int = 0, *, limit: int | None = None
    ) -> list[SampleRecord]:
        """Stored samples in insertion (finishing) order, skipping the first ``position``.

        Samples are only ever appended, so position ``k`` names the same sample on every call:
        a follower that has seen ``k`` samples asks for the ones after it.
        """
        rows = self._read(
            f"SELECT {SAMPLE_COLUMNS} FROM samples WHERE run_id = ? ORDER BY rowid"
            " LIMIT ? OFFSET ?",
            (run_id, self._db.no_limit if limit is None else limit, max(position, 0)),
        )
        return [self._sample(run_id, row) for row in rows]

    def pass_counts(self, run_id: str, first: int | None = None) -> tuple[int, int]:
        """``(samples, passed)`` over the first ``first`` stored samples (all when ``None``)."""
        row = self._read_one(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN passed = 1 THEN 1 ELSE 0 END), 0)"
            " FROM (SELECT passed FROM samples WHERE run_id = ? ORDER BY rowid LIMIT ?) AS firsts",
            (run_id, self._db.no_limit if first is None else first),
        )
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def invalid_count(self, run_id: str, first: int | None = None) -> int:
        """Invalid samples (a conversation whose simulated user failed fidelity: a verdict
        without a pass flag) among the first ``first`` stored samples (all when ``None``)."""
        row = self._read_one(
            "SELECT COUNT(*) FROM (SELECT passed, verdict_passed, verdict_plain FROM samples"
            " WHERE run_id = ?"
            " ORDER BY rowid LIMIT ?) AS firsts"
            " WHERE passed IS NULL AND verdict_passed IS NULL AND verdict_plain IS NOT NULL",
            (run_id, self._db.no_limit if first is None else first),
        )
        return 0 if row is None else int(row[0])

    def get_sample(self, run_id: str, sample_id: str) -> SampleRecord:
        """One stored sample; :class:`RunNotFoundError` when absent."""
        row = self._read_one(
            f"SELECT {SAMPLE_COLUMNS} FROM samples WHERE run_id = ? AND sample_id = ?",
            (run_id, sample_id),
        )
        if row is None:
            raise RunNotFoundError(f"run {run_id} has no sample {sample_id!r}")
        return self._sample(run_id, row)

    def score_values(self, run_id: str) -> dict[str, list[float | None]]:
        """``{scorer: [value per sample in dataset order]}`` for aggregation."""
        rows = self._read(
            "SELECT sc.scorer, sc.value FROM scores sc JOIN samples sa"
            " ON sa.run_id = sc.run_id AND sa.sample_id = sc.sample_id"
            " WHERE sc.run_id = ? ORDER BY sa.idx",
            (run_id,),
        )
        out: dict[str, list[float | None]] = {}
        for scorer_name, value in rows:
            out.setdefault(scorer_name, []).append(value)
        return out

    def _sample(self, run_id: str, row: tuple[Any, ...]) -> SampleRecord:
        sample_id = row[1]
        with self._lock:
            score_rows = self._read(
                "SELECT scorer, value, raw, reason, error, metadata, unreadable FROM scores"
                " WHERE run_id = ? AND sample_id = ? ORDER BY rowid",
                (run_id, sample_id),
            )
            call_rows = self._read(
                "SELECT purpose, provider, model, latency_s, input_tokens, output_tokens, cost,"
                " retries, cached, error FROM model_calls WHERE run_id = ? AND sample_id = ?"
                " ORDER BY id",
                (run_id, sample_id),
            )
        return _sample_record(row, score_rows, call_rows, self.pass_threshold(run_id))


class _Verdicts:
    """Stored verdicts decoded once per distinct text (many samples share one: every exact
    match, every failed target); a :class:`Verdict` is immutable, so sharing it is safe."""

    #: distinct texts kept at most (the cache starts over beyond)
    LIMIT = 4096

    def __init__(self) -> None:
        self._seen: dict[str, Verdict] = {}

    def decode(self, text: str, sample_id: str) -> Verdict:
        """The verdict stored as ``text`` for ``sample_id``."""
        verdict = self._seen.get(text)
        if verdict is None:
            verdict = Verdict.from_dict(loads(text), f"sample {sample_id!r}")
            if len(self._seen) >= self.LIMIT:
                self._seen.clear()
            self._seen[text] = verdict
        return verdict


def _sample_record(
    row: tuple[Any, ...],
    score_rows: list[tuple[Any, ...]],
    call_rows: list[tuple[Any, ...]],
    threshold: float,
    verdicts: _Verdicts | None = None,
) -> SampleRecord:
    (
        _,
        sample_id,
        idx,
        input_json,
        expected_json,
        prediction,
        metadata_json,
        error,
        passed,
        latency_s,
        input_tokens,
        output_tokens,
        cost,
        retries,
        cached,
        extra_json,
        _created,
        verdict_json,
    ) = row
    scores = {
        intern(name): ScoreRecord(
            value=value,
            raw=None if raw is None else _json(raw),
            reason=reason,
            error=score_error,
            metadata={} if meta is None else _json(meta) or {},
            unreadable=unreadable,
        )
        for name, value, raw, reason, score_error, meta, unreadable in score_rows
    }
    calls = [
        CallRecord(
            purpose=c[0],
            provider=c[1],
            model=c[2],
            latency_s=c[3],
            input_tokens=c[4],
            output_tokens=c[5],
            cost=c[6],
            retries=c[7],
            cached=bool(c[8]),
            error=c[9],
        )
        for c in call_rows
    ]
    extra, epoch = split_epoch({} if extra_json is None else _json(extra_json) or {})
    record = SampleRecord(
        id=sample_id,
        index=idx,
        input=None if input_json is None else _json(input_json),
        expected=None if expected_json is None else _json(expected_json),
        prediction=prediction,
        metadata={} if metadata_json is None else _json(metadata_json) or {},
        scores=scores,
        error=error,
        passed=None if passed is None else bool(passed),
        latency_s=latency_s,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost=cost,
        retries=retries,
        cached=bool(cached),
        calls=calls,
        extra=extra,
        epoch=epoch,
        verdict=None
        if verdict_json is None
        else Verdict.from_dict(loads(verdict_json), f"sample {sample_id!r}")
        if verdicts is None
        else verdicts.decode(verdict_json, sample_id),
    )
    return adapt_record(record, threshold)
