"""Copying runs between stores: rows exactly as stored, what a store holds of a run, and
writing a run (header and missing samples) in one transaction.

The rows keep every column as stored (JSON columns as their text, a sample's ``created_at``,
NULL where the source has NULL), so a copy reports, compares and promotes exactly as the
original. Samples are append-only: a stored sample never changes, so a run is brought up to
date by adding the samples the target lacks and, for a run that had not completed there (a
resumed run), bringing its header's ending (status, metrics, times) up to date. What a run is
(its name, model, dataset, config, creation time, ...) never changes, and a completed run's
header is final: a copy that differs there is refused, naming the fields.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass, field, replace
from typing import Any, Literal

from aieval.core import without_execution
from aieval.errors import ConfigError, PushError, StoreError
from aieval.store._backend import Insert
from aieval.store._connection import Connection, placeholders
from aieval.store._encoding import dumps
from aieval.store._owner import still_running
from aieval.store._rollups import add_batch, batch_statements
from aieval.store._runs import RUN_COLUMNS, RunRow, _run_row
from aieval.store._schema import (
    CALL_COLUMNS,
    GRADED_COLUMNS,
    SAMPLE_COLUMNS,
    VALUE_COLUMNS,
    VERDICT_COLUMNS,
    config_columns,
)
from aieval.store._verdict_columns import stored_graded_columns

__all__ = [
    "Checked",
    "ImportOutcome",
    "RunHolding",
    "StoredCall",
    "StoredSample",
    "StoredScore",
    "TransferTable",
]

# Samples read or written per batch (well under SQLite's limit of bound parameters).
_PAGE = 500

#: A run new here: its header, the time it is ordered by and the upload token that wrote it.
_INSERT = (
    f"INSERT INTO runs ({RUN_COLUMNS}, ordered_at, pushed_by, git_branch, dataset_limit)"
    f" VALUES ({placeholders(22)})"
)
#: The header fields a copy may bring up to date, on a run that had not completed here: what
#: resuming a run changes (see ``RunTable.mark_running`` and ``finish_run``).
_ENDING = ("status", "metrics", "error", "finished_at", "pid", "host", "heartbeat_at")
#: ... and its config, which a resume brings up to date with the execution settings it ran with
#: (its concurrency, timeout...): a copy may change those, never the rest of the config.
_UPDATE = f"UPDATE runs SET {', '.join(f'{c} = ?' for c in (*_ENDING, 'config'))} WHERE id = ?"
_SCORE_COLUMNS = "scorer, value, raw, reason, error, metadata, unreadable"
_CALL_FIELDS = (
    "purpose, provider, model, latency_s, input_tokens, output_tokens, cost, retries, cached, error"
)


@dataclass(frozen=True, slots=True)
class StoredScore:
    """One row of ``scores`` as stored (``raw`` and ``metadata`` are JSON text)."""

    scorer: str
    value: float | None
    raw: str | None
    reason: str | None
    error: str | None
    metadata: str | None
    unreadable: str | None


@dataclass(frozen=True, slots=True)
class StoredCall:
    """One row of ``model_calls`` as stored (without its store-local id)."""

    purpose: str
    provider: str | None
    model: str | None
    latency_s: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    retries: int
    cached: int
    error: str | None


@dataclass(frozen=True, slots=True)
class StoredSample:
    """One row of ``samples`` as stored, with its scores and model calls in stored order.

    ``input``, ``expected``, ``metadata``, ``extra`` and ``verdict`` are JSON text (or NULL).
    """

    sample_id: str
    idx: int
    input: str | None
    expected: str | None
    prediction: str | None
    metadata: str | None
    error: str | None
    passed: int | None
    latency_s: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost: float | None
    retries: int
    cached: int
    extra: str | None
    created_at: float
    verdict: str | None
    scores: tuple[StoredScore, ...] = ()
    calls: tuple[StoredCall, ...] = ()


@dataclass(frozen=True, slots=True)
class RunHolding:
    """What a store holds of one run: its header, the ids of its stored samples and each
    sample's :func:`sample_digest` (by id)."""

    run: RunRow
    sample_ids: frozenset[str]
    digests: dict[str, str] = field(default_factory=dict)
    #: the upload token that created the run on a server (``None``: written otherwise)
    pushed_by: str | None = None


@dataclass(frozen=True, slots=True)
class Checked:
    """What a copy was compared with: the store's header of the run then (``None``: the store
    lacked it) and its sample ids. Samples are append-only, so the same header and ids mean the
    same samples."""

    run: RunRow | None
    sample_ids: frozenset[str] = frozenset()
    #: instead of ``run`` and ``sample_ids``, their :func:`holding_digest` (a server's commit
    #: echoes the digest its holding answer gave, not the whole header and every id)
    digest: str | None = None

    @classmethod
    def of(cls, holding: RunHolding | None) -> Checked:
        """What ``holding`` (a :meth:`TransferTable.run_holding` answer) saw."""
        return cls(None) if holding is None else cls(holding.run, holding.sample_ids)

    @classmethod
    def by_digest(cls, digest: str) -> Checked:
        """What a holding of :func:`holding_digest` ``digest`` saw."""
        return cls(None, digest=digest)


def holding_digest(holding: RunHolding | None) -> str:
    """A digest of a store's header of a run and its sample ids (``holding`` ``None``: the
    store lacks the run): the same digest, the same run there (samples are append-only)."""
    if holding is None:
        return hashlib.sha256(b"absent").hexdigest()
    text = repr((astuple(holding.run), sorted(holding.sample_ids)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def sample_digest(sample: StoredSample) -> str:
    """A digest of everything stored of ``sample`` (row, scores and model calls): two copies
    of one sample have the same digest on either backend, a sample written anew (another
    prediction, score, verdict or time) another one."""
    text = repr(astuple(sample))  # repr escapes lone surrogates and keeps floats exact
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class ImportOutcome:
    """What :meth:`TransferTable.import_run` did: ``new`` (the run was absent), ``updated``
    (header replaced and/or samples added) or ``unchanged``; ``samples_added`` counts."""

    run_id: str
    outcome: Literal["new", "updated", "unchanged"]
    samples_added: int


class TransferTable(Connection):
    """Reading runs as stored rows and writing them into another store."""

    def stored_samples(self, run_id: str) -> Iterator[StoredSample]:
        """The run's samples as stored, in the order they were stored, read a page at a time."""
        order = [
            row[0]
            for row in self._read(
                "SELECT sample_id FROM samples WHERE run_id = ? ORDER BY rowid", (run_id,)
            )
        ]
        for start in range(0, len(order), _PAGE):
            yield from self._stored_page(run_id, order[start : start + _PAGE])

    def _stored_page(self, run_id: str, ids: list[str]) -> list[StoredSample]:
        marks = placeholders(len(ids))
        found = self._read(
            f"SELECT {SAMPLE_COLUMNS} FROM samples WHERE run_id = ? AND sample_id IN ({marks})",
            (run_id, *ids),
        )
        by_id = {row[1]: row for row in found}
        rows = [by_id[i] for i in ids if i in by_id]
        score_rows = self._read(
            f"SELECT sample_id, {_SCORE_COLUMNS} FROM scores"
            f" WHERE run_id = ? AND sample_id IN ({marks}) ORDER BY rowid",
            (run_id, *ids),
        )
        call_rows = self._read(
            f"SELECT sample_id, {_CALL_FIELDS} FROM model_calls"
            f" WHERE run_id = ? AND sample_id IN ({marks}) ORDER BY id",
            (run_id, *ids),
        )
        scores: dict[str, list[StoredScore]] = {}
        for s in score_rows:
            scores.setdefault(s[0], []).append(StoredScore(*s[1:]))
        calls: dict[str, list[StoredCall]] = {}
        for c in call_rows:
            calls.setdefault(c[0], []).append(StoredCall(*c[1:]))
        return [
            replace(
                StoredSample(*row[1:]),
                scores=tuple(scores.get(row[1], ())),
                calls=tuple(calls.get(row[1], ())),
            )
            for row in rows
        ]

    def run_holding(self, run_id: str) -> RunHolding | None:
        """The header, sample ids and sample digests this store holds of ``run_id`` (exact id),
        or ``None``."""
        with self._lock:
            row = self._read_one(
                f"SELECT {RUN_COLUMNS}, pushed_by FROM runs WHERE id = ?", (run_id,)
            )
            if row is None:
                return None
            digests = {s.sample_id: sample_digest(s) for s in self.stored_samples(run_id)}
        return RunHolding(_run_row(row), frozenset(digests), digests, pushed_by=row[-1])

    def import_run(
        self,
        run: RunRow,
        samples: Iterable[StoredSample],
        *,
        checked: Checked | None = None,
        pushed_by: str | None = None,
    ) -> ImportOutcome:
        """Write ``run``'s header and those of ``samples`` this store lacks, in one transaction.

        A run new here is written whole; it is ordered (the newest of its name is the baseline)
        by its ``created_at``, but never later than now. Of a run already here, only the ending
        of a header that had not completed (a resumed run: see ``_ENDING``) is brought up to
        date; any other difference is refused. A sample already stored (same run and sample id)
        is kept when it is the same (a repeated upload), and refused when it differs. With
        ``pushed_by`` (the upload token a server's upload came with), a run new here is recorded
        as that token's, and a run here that another token, or no token, created is refused. With
        ``checked`` (what the caller compared its copy with), the run's header and sample ids
        are read again inside the transaction, the run locked, and anything changed since
        is refused: no writer slips in between the comparison and the write. Nothing is
        written when the run is unchanged, and nothing at all when any row fails (the error
        names the run).

        Raises:
            ConfigError: ``run`` is still ``running`` (only a finished or interrupted run is
                copied).
            RunInProgressError: this store's copy of the run is being run by a live process.
            PushError: this store's copy changed since ``checked``, holds a sample that
                differs from the one given, has a header that may not change so (it names the
                fields), or is not ``pushed_by``'s (``forbidden``); nothing is written.
            StoreError: the store refused a row (the transaction is rolled back).
        """
        if run.status == "running":
            raise ConfigError(
                f"run {run.id} is still running; copy it once it has ended (completed, failed "
                "or interrupted)"
            )
        header = _header_row(run)
        now = time.time()
        db = self._db
        with self._lock:
            try:
                with db.transaction(exclusive=True):
                    if db.run_lock:  # two copies of a run new here: one writes, then the other
                        db.one(db.run_lock, (run.id,))
                    row = db.one(
                        f"SELECT {RUN_COLUMNS}, pushed_by FROM runs WHERE id = ?{db.for_update}",
                        (run.id,),
                    )
                    held = None if row is None else _run_row(row)
                    if held is not None and held.status == "running":
                        started = held.started_at or held.created_at
                        raise still_running(
                            held.id, held.pid, held.host, held.heartbeat_at, started_at=started
                        )
                    if row is not None and pushed_by is not None and row[-1] != pushed_by:
                        raise _not_yours(run.id, pushed_by)
                    if row is None and pushed_by is not None:
                        self._name_is_theirs(run, pushed_by)
                    have = {
                        r[0]
                        for r in db.query(
                            "SELECT sample_id FROM samples WHERE run_id = ?", (run.id,)
                        )
                    }
                    if checked is not None:
                        self._unchanged_since(run, checked, held, have)
                    if held is None:
                        db.execute(
                            _INSERT,
                            (
                                *header,
                                min(run.created_at, now),
                                pushed_by,
                                *config_columns(run.config),
                            ),
                        )
                        # a run new here: its rollups kept valid as its samples are added
                        db.execute("INSERT INTO run_totals (run_id) VALUES (?)", (run.id,))
                    added = 0
                    batch: list[StoredSample] = []
                    for sample in samples:
                        if sample.sample_id in have:
                            self._same_as_stored(run, sample)
                            continue
                        have.add(sample.sample_id)
                        batch.append(sample)
                        if len(batch) >= _PAGE:
                            added += self._insert_stored(run.id, batch)
                            batch = []
                    added += self._insert_stored(run.id, batch)
                    # after the samples: a sample stored otherwise is the likelier cause
                    if held is not None and held != run:
                        db.execute(_UPDATE, (*_ending(held, run, self.location), run.id))
            except db.errors as exc:
                raise StoreError(
                    f"cannot write run {run.id} to the store at {self.location}: "
                    f"{self._why(exc)}; nothing of it was written"
                ) from exc
        if held is None:
            return ImportOutcome(run.id, "new", added)
        return ImportOutcome(run.id, "updated" if added or held != run else "unchanged", added)

    def _name_is_theirs(self, run: RunRow, pushed_by: str) -> None:
        """Refuse a run new here from upload token ``pushed_by`` when its name holds runs of
        another token, or only runs of no token (written directly or with the server's token,
        which may add to any name): a name belongs to the token whose runs it holds, so no
        other token's run becomes its newest (the baseline). Inside the write's transaction,
        the name locked."""
        db = self._db
        if db.run_lock:  # two tokens' first runs of one name: one writes, then the other
            db.one(db.run_lock, (f"name\x00{run.name}",))
        # another token's run of the name, else any run of it: the token's own first
        others = db.one(
            "SELECT pushed_by FROM runs WHERE name = ? AND (pushed_by IS NULL OR pushed_by != ?)"
            " ORDER BY pushed_by IS NULL LIMIT 1",
            (run.name, pushed_by),
        )
        if others is not None and others[0] is None:  # only the server's runs besides its own?
            mine = db.one(
                "SELECT 1 FROM runs WHERE name = ? AND pushed_by = ? LIMIT 1", (run.name, pushed_by)
            )
            others = None if mine is not None else others
        if others is not None:
            raise PushError(
                f"run name {run.name!r} holds runs that upload token {pushed_by!r} did not "
                "create: a name belongs to the token that pushed its first run (or to the "
                "server, when its runs were stored without an upload token). Nothing was "
                "written; give the run a name of your own, or push it with the server's own "
                "token",
                run_id=run.id,
                forbidden=True,
            )

    def _unchanged_since(
        self, run: RunRow, checked: Checked, held: RunRow | None, have: set[str]
    ) -> None:
        """Refuse the write when the run's header or samples here changed since ``checked``."""
        if checked.digest is not None:
            now = None if held is None else RunHolding(held, frozenset(have))
            if holding_digest(now) == checked.digest:
                return
            what = "changed there (written, resumed or finished)"
        elif held == checked.run and (held is None or have == checked.sample_ids):
            return
        elif (held is None) != (checked.run is None):
            what = "was written there" if checked.run is None else "was removed there"
        elif have != checked.sample_ids:
            gained, lost = len(have - checked.sample_ids), len(checked.sample_ids - have)
            what = f"gained {gained} and lost {lost} sample(s) there"
        else:
            what = "had its header changed there (resumed, finished)"
        raise PushError(
            f"run {run.id} ({run.name}) {what} since it was compared with this copy, by another "
            f"writer to {self.location}. Nothing of it was written; push again to compare anew",
            run_id=run.id,
            changed_since=True,
        )

    def _same_as_stored(self, run: RunRow, sample: StoredSample) -> None:
        """Refuse ``sample`` when the one stored under its id differs (another writer's)."""
        (stored,) = self._stored_page(run.id, [sample.sample_id])
        if sample_digest(stored) != sample_digest(sample):
            raise PushError(
                f"run {run.id} ({run.name}): {self.location} holds sample "
                f"{sample.sample_id!r} that differs from the one given (it was written there "
                "too). Nothing of the run was written; compare the two copies",
                run_id=run.id,
            )

    def _insert_stored(self, run_id: str, samples: list[StoredSample]) -> int:
        if not samples:
            return 0
        db = self._db
        typed = [(s, stored_graded_columns(s.verdict, s.extra)) for s in samples]
        added = (*VERDICT_COLUMNS, *GRADED_COLUMNS)
        # each table's rows in one statement: a COPY on PostgreSQL (its transaction is an
        # exclusive one, never a pipeline), one executemany on SQLite
        db.insert_rows(
            Insert(
                "samples",
                (*SAMPLE_COLUMNS.split(", "), *added),
                [(run_id, *_sample_columns(s), *v, *g) for s, (v, g, _) in typed],
            )
        )
        values = [(run_id, s.sample_id, *row) for s, (_, _, rows) in typed for row in rows]
        db.insert_rows(Insert("sample_values", VALUE_COLUMNS, values))
        scores = [
            (run_id, s.sample_id, *_fields(sc, _SCORE_COLUMNS)) for s in samples for sc in s.scores
        ]
        db.insert_rows(
            Insert("scores", ("run_id", "sample_id", *_SCORE_COLUMNS.split(", ")), scores)
        )
        calls = [(run_id, s.sample_id, *_fields(c, _CALL_FIELDS)) for s in samples for c in s.calls]
        db.insert_rows(Insert("model_calls", tuple(CALL_COLUMNS.split(", ")), calls))
        # added to a run whose rollups are valid: kept so, in this transaction
        statements = batch_statements(
            run_id,
            [s.sample_id for s in samples],
            self.location.backend == "postgres",
            db.member_of,
            db.max_members,
        )
        add_batch(db.execute, db.errors, run_id, statements)
        return len(samples)


def not_yours_message(run_id: str, pushed_by: str) -> str:
    """The refusal of run ``run_id`` to upload token ``pushed_by``: the same whether the run is
    another token's or the server's, naming nothing of it but the id the token gave."""
    return (
        f"run {run_id} is not one upload token {pushed_by!r} may write: this server holds a "
        "run of that id that the token did not create. Nothing was written. If the run is "
        "yours, its id was taken before your push: make it anew (a new run gets a new id) and "
        "push that, or ask the server's admin to remove the run holding the id"
    )


def _not_yours(run_id: str, pushed_by: str) -> PushError:
    return PushError(not_yours_message(run_id, pushed_by), run_id=run_id, forbidden=True)


def _ending(held: RunRow, run: RunRow, where: object) -> tuple[Any, ...]:
    """The values of ``_ENDING`` and the config from ``run``, the copy of the stored ``held``
    (a config that differs from the stored one in more than its execution settings refused).

    Raises:
        PushError: they differ in another field, or ``held`` had completed: the stored header
            stays as it is.
    """
    differ = [
        name
        for name in RunRow.__dataclass_fields__
        if _as_stored(getattr(held, name)) != _as_stored(getattr(run, name))
    ]
    same_run = _as_stored(without_execution(held.config)) == _as_stored(
        without_execution(run.config)
    )
    ending = (*_ENDING, "config") if same_run else _ENDING
    fixed = differ if held.status == "completed" else [n for n in differ if n not in ending]
    if fixed:
        why = "it completed there" if held.status == "completed" else "they say what the run is"
        raise PushError(
            f"run {run.id} ({held.name}): the header at {where} differs from this copy's in "
            f"{', '.join(fixed)}, which a push may not change ({why}). Nothing of it was "
            "written; give this copy a run of its own (run it again)",
            run_id=run.id,
        )
    return tuple(_as_stored(getattr(run, name)) for name in (*_ENDING, "config"))


def _as_stored(value: Any) -> Any:
    # JSON columns compared as their text: a NaN in metrics equals itself
    return dumps(value) if isinstance(value, dict) else value


def _fields(row: object, columns: str) -> tuple[Any, ...]:
    return tuple(getattr(row, name) for name in _names(columns))


@functools.cache
def _names(columns: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in columns.split(","))


def _sample_columns(s: StoredSample) -> tuple[Any, ...]:
    # SAMPLE_COLUMNS without run_id, in its order
    return (
        s.sample_id, s.idx, s.input, s.expected, s.prediction, s.metadata, s.error, s.passed,
        s.latency_s, s.input_tokens, s.output_tokens, s.cost, s.retries, s.cached, s.extra,
        s.created_at, s.verdict,
    )  # fmt: skip


def _header_row(run: RunRow) -> tuple[Any, ...]:
    # RUN_COLUMNS' order
    return (
        run.id, run.name, run.status, run.model, run.provider, run.dataset, run.dataset_hash,
        run.n_examples, run.git_sha, dumps(run.config),
        None if run.metrics is None else dumps(run.metrics), run.error, run.created_at,
        run.started_at, run.finished_at, run.pid, run.host, run.heartbeat_at,
    )  # fmt: skip
