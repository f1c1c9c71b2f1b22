"""Run rows: creating, owning, finishing and finding runs."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aieval.errors import RunNotFoundError
from aieval.store._connection import Connection
from aieval.store._encoding import dumps, loads
from aieval.store._owner import owner, owner_gone, still_running
from aieval.store._schema import config_columns

__all__ = ["RUN_COLUMNS", "RUN_ID_SHAPE", "RunRow", "RunTable", "is_run_id", "new_run_id"]

#: The columns of ``runs`` in :class:`RunRow`'s order.
RUN_COLUMNS = (
    "id, name, status, model, provider, dataset, dataset_hash, n_examples, git_sha, config,"
    " metrics, error, created_at, started_at, finished_at, pid, host, heartbeat_at"
)
#: Newest first, by the time this store vouches for (see ``ordered_at`` in the schema): an
#: uploaded run cannot claim to be newer than when it arrived, and so become the baseline.
_NEWEST_FIRST = "COALESCE(ordered_at, created_at) DESC"


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

    @property
    def git_branch(self) -> str | None:
        """The git branch the run was made on, as its config records it (``None``: unknown)."""
        return config_columns(self.config)[0]

    @property
    def dataset_limit(self) -> int | None:
        """The ``--limit`` the run was made with (``None``: the whole dataset)."""
        return config_columns(self.config)[1]


class RunTable(Connection):
    """The ``runs`` table of a :class:`~aieval.store.Store`."""

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
        config = dict(config or {})
        self._write(
            "INSERT INTO runs (id, name, status, model, provider, dataset, dataset_hash,"
            " n_examples, git_sha, config, created_at, started_at, pid, host, heartbeat_at,"
            " ordered_at, git_branch, dataset_limit)"
            " VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                name,
                model,
                provider,
                dataset,
                dataset_hash,
                n_examples,
                git_sha,
                dumps(config),
                now,
                now,
                pid,
                host,
                now,
                now,
                *config_columns(config),
            ),
        )
        self._beat_at = now
        return run_id

    def mark_running(self, run_id: str, *, config: Mapping[str, Any] | None = None) -> None:
        """Set a resumed run back to ``running``, owned by this process; ``config``, when
        given, replaces its stored config (a resume records the execution settings it uses).

        Checking and taking over happen in one write transaction, so of two processes resuming
        one run, only the first takes it.

        Raises:
            RunInProgressError: a live process still runs it (its pid is alive on this host,
                or its heartbeat is fresh): resuming would run its samples twice at once.
        """
        pid, host = owner()
        now = time.time()
        db = self._db
        with self._lock:
            try:
                with db.transaction(exclusive=True):
                    row = db.one(
                        f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?{db.for_update}", (run_id,)
                    )
                    held = _run_row(row) if row is not None else None
                    # a gone owner reads interrupted
                    if held is not None and held.status == "running":
                        started = held.started_at or held.created_at
                        raise still_running(
                            held.id, held.pid, held.host, held.heartbeat_at, started_at=started
                        )
                    db.execute(
                        "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL,"
                        " pid = ?, host = ?, heartbeat_at = ?, config = COALESCE(?, config)"
                        " WHERE id = ?",
                        (pid, host, now, None if config is None else dumps(dict(config)), run_id),
                    )
            except db.errors as exc:
                raise self._failed(exc) from exc
        self._beat_at = now

    def heartbeat(self, run_id: str) -> None:
        """Record that this process is still working on ``run_id``."""
        now = time.time()
        self._write("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (now, run_id), idempotent=True)
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
            (status, dumps(dict(metrics)) if metrics else None, error, now, now, run_id),
            idempotent=True,
        )

    def get_run(self, ref: str, *, exclude: str | None = None) -> RunRow:
        """A run by id, unique id prefix, or name (the most recent run of that name).

        With ``exclude`` (the run being compared), a name resolves to the most recent run of
        that name other than ``exclude``, completed runs first: the baseline of a comparison.
        """
        found = self.run_by_id(ref)
        if found is not None:
            return found
        if exclude is not None:
            return self._latest_other(ref, exclude)
        by_name = self._read_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE name = ? ORDER BY {_NEWEST_FIRST} LIMIT 1",
            (ref,),
        )
        if by_name is None:
            raise RunNotFoundError(f"no run with id or name {ref!r} in {self.location}")
        return _run_row(by_name)

    def run_by_id(self, ref: str) -> RunRow | None:
        """The run whose id is ``ref`` or starts with it (4 characters or more), or ``None``.

        Raises:
            RunNotFoundError: ``ref`` is the prefix of several ids.
        """
        rows = self._read(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ? OR id LIKE ? ESCAPE '\\'"
            f" ORDER BY {_NEWEST_FIRST} LIMIT 2",
            (ref, _like_prefix(ref)),
        )
        exact = [row for row in rows if row[0] == ref]
        if exact:
            return _run_row(exact[0])
        if len(rows) == 1:
            return _run_row(rows[0])
        if len(rows) > 1:
            raise RunNotFoundError(f"run id prefix {ref!r} is ambiguous; give more characters")
        return None

    def _latest_other(self, name: str, exclude: str) -> RunRow:
        row = self._read_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE name = ? AND id != ?"
            f" ORDER BY status = 'completed' DESC, {_NEWEST_FIRST}, rowid DESC LIMIT 1",
            (name, exclude),
        )
        if row is None:
            raise RunNotFoundError(
                f"no earlier run named {name!r} other than {exclude} in {self.location}; give a run"
                " id, or run the baseline first"
            )
        return _run_row(row)

    def list_runs(
        self,
        *,
        name: str | None = None,
        limit: int = 50,
        offset: int = 0,
        branch: str | None = None,
        commit: str | None = None,
        host: str | None = None,
    ) -> list[RunRow]:
        """Runs, most recent first; only those named ``name``, made on git ``branch``, at a
        commit starting with ``commit``, on ``host`` (each if given; found in SQL)."""
        where, args = _run_filters(name=name, branch=branch, commit=commit, host=host)
        rows = self._read(
            f"SELECT {RUN_COLUMNS} FROM runs {where} ORDER BY {_NEWEST_FIRST} LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [_run_row(row) for row in rows]

    def count_runs(
        self,
        *,
        name: str | None = None,
        branch: str | None = None,
        commit: str | None = None,
        host: str | None = None,
    ) -> int:
        """How many runs are stored (with the filters of :meth:`list_runs`)."""
        where, args = _run_filters(name=name, branch=branch, commit=commit, host=host)
        row = self._read_one(f"SELECT COUNT(*) FROM runs {where}", args)
        return int(row[0]) if row is not None else 0

    def latest_unfinished(self, name: str, *, model: str | None = None) -> RunRow | None:
        """The most recent run of ``name`` (and ``model``, if given) that did not complete.

        It may still be running in a live process (``status == "running"``);
        :meth:`mark_running` refuses to take such a run over.
        """
        row = self._read_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE name = ? AND status != 'completed'"
            f" AND (CAST(? AS TEXT) IS NULL OR model = ?) ORDER BY {_NEWEST_FIRST} LIMIT 1",
            (name, model, model),
        )
        return _run_row(row) if row else None


def new_run_id() -> str:
    """A fresh run id: UTC time stamp plus a random suffix (sorts by creation time)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


#: What :func:`new_run_id` makes: ``YYYYMMDD-HHMMSS-`` and 8 lowercase hex digits.
RUN_ID_SHAPE = "YYYYMMDD-HHMMSS-xxxxxxxx (8 lowercase hex digits), as aieval makes them"
_RUN_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{8}")


def is_run_id(text: str) -> bool:
    """Whether ``text`` has the shape of an id :func:`new_run_id` makes (it starts with a
    digit, so it never equals, nor starts with, a name that starts otherwise)."""
    return _RUN_ID.fullmatch(text) is not None


def _run_filters(
    *, name: str | None, branch: str | None, commit: str | None, host: str | None
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (empty when no filter) and its arguments of :meth:`list_runs`."""
    where: list[str] = []
    args: list[Any] = []
    for column, value in (("name", name), ("git_branch", branch), ("host", host)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if commit:
        where.append("git_sha LIKE ? ESCAPE '\\'")
        args.append(_escape_like(commit.lower()) + "%")  # git writes its ids in lowercase
    return ("WHERE " + " AND ".join(where), args) if where else ("", args)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like_prefix(ref: str) -> str:
    return _escape_like(ref) + "%" if len(ref) >= 4 else "\x00"


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
        config=loads(row[9]) or {},
        metrics=loads(row[10]),
        error=row[11],
        created_at=row[12],
        started_at=row[13],
        finished_at=row[14],
        pid=pid,
        host=host,
        heartbeat_at=heartbeat_at,
    )
