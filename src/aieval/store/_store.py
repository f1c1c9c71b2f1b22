"""The SQLite run store: runs, samples, scores and model calls, each sample committed as it ends."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.errors import RunNotFoundError, StoreError
from aieval.store._encoding import dumps as _dumps
from aieval.store._encoding import row_from_db, to_db, to_db_row
from aieval.store._owner import HEARTBEAT_EVERY_S, owner, owner_gone, still_running
from aieval.store._schema import RUN_COLUMNS_ADDED, SCHEMA, SCHEMA_VERSION

__all__ = ["CalibrationRow", "RunRow", "Store", "default_db_path", "new_run_id"]

_SAMPLE_COLUMNS = (
    "run_id, sample_id, idx, input, expected, prediction, metadata, error, passed, latency_s, "
    "input_tokens, output_tokens, cost, retries, cached, extra, created_at"
)
# Samples read per page by iter_samples (well under SQLite's limit of bound parameters).
_PAGE = 500
_CALL_COLUMNS = (
    "run_id, sample_id, purpose, provider, model, latency_s, input_tokens, output_tokens, cost, "
    "retries, cached, error"
)


def default_db_path() -> Path:
    """``$AIEVAL_DB`` if set, else ``./aieval.db``."""
    return Path(os.environ.get("AIEVAL_DB") or "aieval.db")


@dataclass(slots=True, frozen=True)
class RunRow:
    """A stored run's header.

    ``status`` is ``running``, ``completed``, ``failed`` or ``interrupted``; a run stored as
    running whose process is gone (see ``pid``, ``host``, ``heartbeat_at``) reads as
    ``interrupted``, so ``--resume`` picks it.
    """

    id: str
    name: str
    status: str
    model: str | None
    provider: str | None
    dataset: str | None
    dataset_hash: str | None
    n_examples: int | None
    git_sha: str | None
    config: dict[str, Any]
    metrics: dict[str, Any] | None
    error: str | None
    created_at: float
    started_at: float | None
    finished_at: float | None
    pid: int | None = None
    host: str | None = None
    heartbeat_at: float | None = None


@dataclass(slots=True, frozen=True)
class CalibrationRow:
    """One stored judge calibration: agreement with human labels at a point in time."""

    id: int
    judge: str
    model: str | None
    model_version: str | None
    prompt_version: str | None
    run_id: str | None
    labels: str | None
    n: int
    metrics: dict[str, Any]
    created_at: float


class Store:
    """A run store in one SQLite file (WAL mode, safe for several readers and one writer).

    Example:
        >>> import tempfile, os
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "runs.db"))
        >>> run_id = store.create_run(name="demo")
        >>> store.get_run(run_id).status
        'running'
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._lock = threading.RLock()
        self._beat_at = 0.0
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30.0
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.row_factory = row_from_db
            self._db.executescript(SCHEMA)
            self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc

    def _migrate(self) -> None:
        """Bring a store written by an older version up to this schema, in place."""
        have = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
        for column, kind in RUN_COLUMNS_ADDED.items():
            if column not in have:
                self._db.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(SCHEMA_VERSION),),
        )

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- runs -------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        name: str,
        model: str | None = None,
        provider: str | None = None,
        dataset: str | None = None,
        dataset_hash: str | None = None,
        n_examples: int | None = None,
        git_sha: str | None = None,
        config: Mapping[str, Any] | None = None,
        run_id: str | None = None,
    ) -> str:
        """Insert a new run in status ``running`` and return its id (``run_id`` if given).

        The run is owned by this process (its pid, host and a heartbeat are recorded).
        """
        run_id = run_id or new_run_id()
        now = time.time()
        pid, host = owner()
        self._write(
            "INSERT INTO runs (id, name, status, model, provider, dataset, dataset_hash,"
            " n_examples, git_sha, config, created_at, started_at, pid, host, heartbeat_at)"
            " VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                name,
                model,
                provider,
                dataset,
                dataset_hash,
                n_examples,
                git_sha,
                _dumps(dict(config or {})),
                now,
                now,
                pid,
                host,
                now,
            ),
        )
        self._beat_at = now
        return run_id

    def mark_running(self, run_id: str) -> None:
        """Set a resumed run back to ``running``, owned by this process.

        Checking and taking over happen in one write transaction, so of two processes resuming
        one run, only the first takes it.

        Raises:
            RunInProgressError: a live process still runs it (its pid is alive on this host,
                or its heartbeat is fresh): resuming would run its samples twice at once.
        """
        pid, host = owner()
        now = time.time()
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                row = self._db.execute(
                    "SELECT * FROM runs WHERE id = ?", (to_db(run_id),)
                ).fetchone()
                held = _run_row(row) if row is not None else None
                if held is not None and held.status == "running":  # a gone owner reads interrupted
                    raise still_running(held.id, held.pid, held.host, held.heartbeat_at,
                                        started_at=held.started_at or held.created_at)  # fmt: skip
                self._db.execute(
                    "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL,"
                    " pid = ?, host = ?, heartbeat_at = ? WHERE id = ?",
                    to_db_row((pid, host, now, run_id)),
                )
                self._db.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"cannot write to the store at {self.path}: {exc}") from exc
                raise
        self._beat_at = now

    def heartbeat(self, run_id: str) -> None:
        """Record that this process is still working on ``run_id``."""
        now = time.time()
        self._write("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id))
        self._beat_at = now

    def finish_run(
        self,
        run_id: str,
        *,
        status: str,
        metrics: Mapping[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        """Record how a run ended (``completed``, ``failed`` or ``interrupted``)."""
        now = time.time()
        self._write(
            "UPDATE runs SET status = ?, metrics = ?, error = ?, finished_at = ?,"
            " heartbeat_at = ? WHERE id = ?",
            (status, _dumps(dict(metrics)) if metrics else None, error, now, now, run_id),
        )

    def get_run(self, ref: str, *, exclude: str | None = None) -> RunRow:
        """A run by id, unique id prefix, or name (the most recent run of that name).

        With ``exclude`` (the run being compared), a name resolves to the most recent run of
        that name other than ``exclude``, completed runs first: the baseline of a comparison.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM runs WHERE id = ? OR id LIKE ? ESCAPE '\\'"
                " ORDER BY created_at DESC LIMIT 2",
                (to_db(ref), to_db(_like_prefix(ref))),
            ).fetchall()
            exact = [row for row in rows if row[0] == ref]
            if exact:
                return _run_row(exact[0])
            if len(rows) == 1:
                return _run_row(rows[0])
            if len(rows) > 1:
                raise RunNotFoundError(f"run id prefix {ref!r} is ambiguous; give more characters")
        if exclude is not None:
            return self._latest_other(ref, exclude)
        with self._lock:
            by_name = self._db.execute(
                "SELECT * FROM runs WHERE name = ? ORDER BY created_at DESC LIMIT 1",
                (to_db(ref),),
            ).fetchone()
        if by_name is None:
            raise RunNotFoundError(f"no run with id or name {ref!r} in {self.path}")
        return _run_row(by_name)

    def _latest_other(self, name: str, exclude: str) -> RunRow:
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM runs WHERE name = ? AND id != ?"
                " ORDER BY status = 'completed' DESC, created_at DESC, rowid DESC LIMIT 1",
                (to_db(name), to_db(exclude)),
            ).fetchone()
        if row is None:
            raise RunNotFoundError(
                f"no earlier run named {name!r} other than {exclude} in {self.path}; give a run"
                " id, or run the baseline first"
            )
        return _run_row(row)

    def list_runs(
        self, *, name: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[RunRow]:
        """Runs, most recent first, optionally only those named ``name``."""
        where, args = ("WHERE name = ?", [to_db(name)]) if name else ("", [])
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM runs {where} ORDER BY created_at DESC LIMIT ? OFFSET ?",
                (*args, limit, offset),
            ).fetchall()
        return [_run_row(row) for row in rows]

    def count_runs(self, *, name: str | None = None) -> int:
        """How many runs are stored (named ``name``, if given)."""
        where, args = ("WHERE name = ?", [to_db(name)]) if name else ("", [])
        with self._lock:
            row = self._db.execute(f"SELECT COUNT(*) FROM runs {where}", args).fetchone()
        return int(row[0])

    def latest_unfinished(self, name: str, *, model: str | None = None) -> RunRow | None:
        """The most recent run of ``name`` (and ``model``, if given) that did not complete.

        It may still be running in a live process (``status == "running"``);
        :meth:`mark_running` refuses to take such a run over.
        """
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM runs WHERE name = ? AND status != 'completed'"
                " AND (? IS NULL OR model = ?) ORDER BY created_at DESC LIMIT 1",
                to_db_row((name, model, model)),
            ).fetchone()
        return _run_row(row) if row else None

    # -- samples ----------------------------------------------------------------------------

    def record_sample(self, run_id: str, sample: SampleRecord) -> None:
        """Write one finished sample, its scores and model calls in one committed transaction."""
        self.record_samples(run_id, [sample])

    def record_samples(self, run_id: str, samples: list[SampleRecord]) -> None:
        """Write finished samples in one committed transaction."""
        now = time.time()
        sample_rows = []
        score_rows = []
        call_rows = []
        for s in samples:
            sample_rows.append(
                to_db_row(
                    (
                        run_id,
                        s.id,
                        s.index,
                        _dumps(s.input),
                        _dumps(s.expected),
                        s.prediction,
                        _dumps(s.metadata) if s.metadata else None,
                        s.error,
                        None if s.passed is None else int(s.passed),
                        s.latency_s,
                        s.input_tokens,
                        s.output_tokens,
                        s.cost,
                        s.retries,
                        int(s.cached),
                        _dumps(s.extra) if s.extra else None,
                        now,
                    )
                )
            )
            for scorer_name, score in s.scores.items():
                score_rows.append(
                    to_db_row(
                        (
                            run_id,
                            s.id,
                            scorer_name,
                            score.value,
                            None if score.raw is None else _dumps(score.raw),
                            score.reason,
                            score.error,
                            _dumps(score.metadata) if score.metadata else None,
                        )
                    )
                )
            for c in s.calls:
                call_rows.append(
                    to_db_row(
                        (
                            run_id,
                            s.id,
                            c.purpose,
                            c.provider,
                            c.model,
                            c.latency_s,
                            c.input_tokens,
                            c.output_tokens,
                            c.cost,
                            c.retries,
                            int(c.cached),
                            c.error,
                        )
                    )
                )
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.executemany(
                    f"INSERT INTO samples ({_SAMPLE_COLUMNS}) VALUES ({_marks(17)})", sample_rows
                )
                if score_rows:
                    self._db.executemany(
                        "INSERT INTO scores (run_id, sample_id, scorer, value, raw, reason, error,"
                        f" metadata) VALUES ({_marks(8)})",
                        score_rows,
                    )
                if call_rows:
                    self._db.executemany(
                        f"INSERT INTO model_calls ({_CALL_COLUMNS}) VALUES ({_marks(12)})",
                        call_rows,
                    )
                if now - self._beat_at >= HEARTBEAT_EVERY_S:
                    self._db.execute(
                        "UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, to_db(run_id))
                    )
                    self._beat_at = now
                self._db.execute("COMMIT")
            except Exception as exc:
                # SQLite may already have rolled back (a full disk does); nothing is half-written
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                raise StoreError(
                    f"cannot write samples of run {run_id} to {self.path}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc

    def completed_sample_ids(self, run_id: str) -> set[str]:
        """Ids of the samples already stored for ``run_id``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT sample_id FROM samples WHERE run_id = ?", (to_db(run_id),)
            )
            return {row[0] for row in rows}

    def count_samples(self, run_id: str) -> int:
        """How many samples are stored for ``run_id``."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM samples WHERE run_id = ?", (to_db(run_id),)
            )
            return int(row.fetchone()[0])

    def sample_times(self, run_id: str) -> dict[str, float]:
        """``{sample id: when it was stored}`` (seconds since the epoch), i.e. when it finished."""
        with self._lock:
            rows = self._db.execute(
                "SELECT sample_id, created_at FROM samples WHERE run_id = ?", (to_db(run_id),)
            ).fetchall()
        return {sample_id: float(created) for sample_id, created in rows}

    def iter_samples(
        self, run_id: str, *, limit: int | None = None, offset: int = 0
    ) -> Iterator[SampleRecord]:
        """Stored samples of a run in dataset order, with their scores and calls.

        Samples are read in pages of a few hundred (three queries per page), so a large run
        streams in bounded memory.
        """
        with self._lock:
            order = [
                row[0]
                for row in self._db.execute(
                    "SELECT sample_id FROM samples WHERE run_id = ? ORDER BY idx LIMIT ? OFFSET ?",
                    (to_db(run_id), -1 if limit is None else limit, offset),
                )
            ]
        for start in range(0, len(order), _PAGE):
            yield from self._page(run_id, order[start : start + _PAGE])

    def _page(self, run_id: str, ids: list[str]) -> list[SampleRecord]:
        marks = _marks(len(ids))
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_SAMPLE_COLUMNS} FROM samples"
                f" WHERE run_id = ? AND sample_id IN ({marks})",
                to_db_row((run_id, *ids)),
            ).fetchall()
            score_rows = self._db.execute(
                "SELECT sample_id, scorer, value, raw, reason, error, metadata FROM scores"
                f" WHERE run_id = ? AND sample_id IN ({marks}) ORDER BY rowid",
                to_db_row((run_id, *ids)),
            ).fetchall()
            call_rows = self._db.execute(
                "SELECT sample_id, purpose, provider, model, latency_s, input_tokens,"
                " output_tokens, cost, retries, cached, error FROM model_calls"
                f" WHERE run_id = ? AND sample_id IN ({marks}) ORDER BY id",
                to_db_row((run_id, *ids)),
            ).fetchall()
        scores: dict[str, list[tuple[Any, ...]]] = {}
        for score in score_rows:
            scores.setdefault(score[0], []).append(score[1:])
        calls: dict[str, list[tuple[Any, ...]]] = {}
        for call in call_rows:
            calls.setdefault(call[0], []).append(call[1:])
        by_id = {row[1]: row for row in rows}
        return [
            _sample_record(by_id[i], scores.get(i, []), calls.get(i, [])) for i in ids if i in by_id
        ]

    def samples_since(
        self, run_id: str, position: int = 0, *, limit: int | None = None
    ) -> list[SampleRecord]:
        """Stored samples in insertion (finishing) order, skipping the first ``position``.

        Samples are only ever appended, so position ``k`` names the same sample on every call:
        a follower that has seen ``k`` samples asks for the ones after it.
        """
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_SAMPLE_COLUMNS} FROM samples WHERE run_id = ? ORDER BY rowid"
                " LIMIT ? OFFSET ?",
                (to_db(run_id), -1 if limit is None else limit, max(position, 0)),
            ).fetchall()
        return [self._sample(run_id, row) for row in rows]

    def pass_counts(self, run_id: str, first: int | None = None) -> tuple[int, int]:
        """``(samples, passed)`` over the first ``first`` stored samples (all when ``None``)."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(passed = 1), 0) FROM (SELECT passed FROM samples"
                " WHERE run_id = ? ORDER BY rowid LIMIT ?)",
                (to_db(run_id), -1 if first is None else first),
            ).fetchone()
        return int(row[0]), int(row[1])

    def get_sample(self, run_id: str, sample_id: str) -> SampleRecord:
        """One stored sample; :class:`RunNotFoundError` when absent."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_SAMPLE_COLUMNS} FROM samples WHERE run_id = ? AND sample_id = ?",
                to_db_row((run_id, sample_id)),
            ).fetchone()
        if row is None:
            raise RunNotFoundError(f"run {run_id} has no sample {sample_id!r}")
        return self._sample(run_id, row)

    def score_values(self, run_id: str) -> dict[str, list[float | None]]:
        """``{scorer: [value per sample in dataset order]}`` for aggregation."""
        with self._lock:
            rows = self._db.execute(
                "SELECT sc.scorer, sc.value FROM scores sc JOIN samples sa"
                " ON sa.run_id = sc.run_id AND sa.sample_id = sc.sample_id"
                " WHERE sc.run_id = ? ORDER BY sa.idx",
                (to_db(run_id),),
            ).fetchall()
        out: dict[str, list[float | None]] = {}
        for scorer_name, value in rows:
            out.setdefault(scorer_name, []).append(value)
        return out

    def _sample(self, run_id: str, row: tuple[Any, ...]) -> SampleRecord:
        sample_id = row[1]
        with self._lock:
            score_rows = self._db.execute(
                "SELECT scorer, value, raw, reason, error, metadata FROM scores"
                " WHERE run_id = ? AND sample_id = ? ORDER BY rowid",
                to_db_row((run_id, sample_id)),
            ).fetchall()
            call_rows = self._db.execute(
                "SELECT purpose, provider, model, latency_s, input_tokens, output_tokens, cost,"
                " retries, cached, error FROM model_calls WHERE run_id = ? AND sample_id = ?"
                " ORDER BY id",
                to_db_row((run_id, sample_id)),
            ).fetchall()
        return _sample_record(row, score_rows, call_rows)

    # -- judge calibrations -----------------------------------------------------------------

    def record_calibration(
        self,
        *,
        judge: str,
        n: int,
        metrics: Mapping[str, Any],
        model: str | None = None,
        model_version: str | None = None,
        prompt_version: str | None = None,
        run_id: str | None = None,
        labels: str | None = None,
    ) -> int:
        """Store a calibration of ``judge`` and return its id."""
        with self._lock:
            try:
                cursor = self._db.execute(
                    "INSERT INTO judge_calibrations (judge, model, model_version, prompt_version,"
                    " run_id, labels, n, metrics, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    to_db_row(
                        (
                            judge,
                            model,
                            model_version,
                            prompt_version,
                            run_id,
                            labels,
                            n,
                            _dumps(dict(metrics)),
                            time.time(),
                        )
                    ),
                )
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write to the store at {self.path}: {exc}") from exc
            return int(cursor.lastrowid or 0)

    def calibrations(self, judge: str | None = None, *, limit: int = 50) -> list[CalibrationRow]:
        """Stored calibrations (of ``judge``, if given), most recent first."""
        where, args = ("WHERE judge = ?", [judge]) if judge else ("", [])
        with self._lock:
            rows = self._db.execute(
                "SELECT id, judge, model, model_version, prompt_version, run_id, labels, n,"
                f" metrics, created_at FROM judge_calibrations {where}"
                " ORDER BY created_at DESC, id DESC LIMIT ?",
                (*args, limit),
            ).fetchall()
        return [
            CalibrationRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], _loads(r[8]), r[9])
            for r in rows
        ]

    def _write(self, sql: str, args: tuple[Any, ...]) -> None:
        with self._lock:
            try:
                self._db.execute(sql, to_db_row(args))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write to the store at {self.path}: {exc}") from exc


def new_run_id() -> str:
    """A fresh run id: UTC time stamp plus a random suffix (sorts by creation time)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


def _like_prefix(ref: str) -> str:
    escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%" if len(ref) >= 4 else "\x00"


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _sample_record(
    row: tuple[Any, ...], score_rows: list[tuple[Any, ...]], call_rows: list[tuple[Any, ...]]
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
    ) = row
    scores = {
        name: ScoreRecord(
            value=value,
            raw=_loads(raw),
            reason=reason,
            error=score_error,
            metadata=_loads(meta) or {},
        )
        for name, value, raw, reason, score_error, meta in score_rows
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
    return SampleRecord(
        id=sample_id,
        index=idx,
        input=_loads(input_json),
        expected=_loads(expected_json),
        prediction=prediction,
        metadata=_loads(metadata_json) or {},
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
        extra=_loads(extra_json) or {},
    )


def _run_row(row: tuple[Any, ...]) -> RunRow:
    pid, host, heartbeat_at = row[15:18]
    status = row[2]
    started = row[13] if row[13] is not None else row[12]  # started_at, else created_at
    if status == "running" and owner_gone(pid, host, heartbeat_at, started_at=started):
        status = "interrupted"
    return RunRow(
        id=row[0],
        name=row[1],
        status=status,
        model=row[3],
        provider=row[4],
        dataset=row[5],
        dataset_hash=row[6],
        n_examples=row[7],
        git_sha=row[8],
        config=_loads(row[9]) or {},
        metrics=_loads(row[10]),
        error=row[11],
        created_at=row[12],
        started_at=row[13],
        finished_at=row[14],
        pid=pid,
        host=host,
        heartbeat_at=heartbeat_at,
    )
