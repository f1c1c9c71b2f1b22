"""Choosing a comparison's baseline by name: the latest like-for-like run, and why.

A baseline named (not given by id) is the most recent other run of that name that completed,
on the whole dataset (no ``--limit``) and on the candidate's dataset version. A newer run that
is not like that is skipped, and counted; when no run is like that, the best there is is taken
and the choice says so (:attr:`BaselineChoice.warning`). Everything is found in SQL, on the
columns kept beside each run's config (``git_branch``, ``dataset_limit``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from aieval.errors import RunNotFoundError
from aieval.store._runs import _NEWEST_FIRST, RUN_COLUMNS, RunRow, RunTable, _run_row

__all__ = ["BaselineChoice", "BaselineFinder", "run_label"]


@dataclass(frozen=True, slots=True)
class BaselineChoice:
    """The baseline a comparison uses and why it was picked.

    Attributes:
        run: the baseline.
        how: why this run, in words (``the latest complete run of 'qa' on dataset version
            1a2b3c4d``).
        skipped: newer runs passed over, each ``(count, reason)`` (``made with --limit 50``).
        warning: set when the baseline is not like-for-like (it did not complete, was made
            with ``--limit`` or on another dataset version than the candidate): what is off.
    """

    run: RunRow
    how: str
    skipped: tuple[tuple[int, str], ...] = ()
    warning: str | None = None

    def line(self) -> str:
        """One line: which run, and why (``baseline: run ... — the latest complete ...``)."""
        text = f"baseline: run {run_label(self.run)} — {self.how}"
        if self.skipped:
            total = sum(n for n, _ in self.skipped)
            parts = ", ".join(f"{n} {why}" for n, why in self.skipped)
            text += f"; skipped {total} newer run{'s' if total != 1 else ''}: {parts}"
        if self.warning:
            text += f". WARNING: {self.warning}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The ``baseline_choice`` of a comparison document."""
        return {
            "run_id": self.run.id,
            "how": self.how,
            "skipped": [{"count": n, "reason": why} for n, why in self.skipped],
            "warning": self.warning,
            "line": self.line(),
        }


def run_label(run: RunRow) -> str:
    """``<id> (<branch>@<commit>, <host>, <time UTC>)``, ``-`` for what is not recorded."""
    commit = (run.git_sha or "-")[:7]
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run.created_at))
    return f"{run.id} ({run.git_branch or '-'}@{commit}, {run.host or '-'}, {stamp})"


def _version(value: str | None) -> str:
    return "unknown" if value is None else value[:12]


class BaselineFinder(RunTable):
    """Baselines chosen by name, in SQL (see the module)."""

    def baseline_for(self, ref: str, candidate: RunRow) -> RunRow | BaselineChoice:
        """The baseline ``ref`` names for ``candidate``: the run with that id (or unique id
        prefix), else the one :meth:`choose_baseline` picks among the runs named ``ref``.

        Raises:
            RunNotFoundError: no run has that id, and no other run that name.
        """
        found = self.run_by_id(ref)
        if found is not None:
            return found
        choice = self.choose_baseline(ref, candidate)
        if choice is None:
            raise RunNotFoundError(
                f"no earlier run named {ref!r} other than {candidate.id} in {self.location};"
                " give a run id, or run the baseline first"
            )
        return choice

    def choose_baseline(
        self,
        name: str,
        candidate: RunRow,
        *,
        branch: str | None = None,
        model: str | None = None,
        same_model: bool = False,
        completed_only: bool = False,
    ) -> BaselineChoice | None:
        """The baseline named ``name`` for ``candidate``: the latest other run of that name
        that completed, on the whole dataset and the candidate's dataset version; else the best
        there is, with a warning. ``None`` when no run qualifies.

        Args:
            name: the runs' name.
            candidate: the run compared (never its own baseline).
            branch: only runs made on this git branch.
            model: with ``same_model``, only runs of this model (``None``: runs with no model).
            same_model: filter on ``model``.
            completed_only: only completed runs (the CI's verdict needs one).
        """
        where = ["name = ?", "id != ?"]
        args: list[Any] = [name, candidate.id]
        if branch is not None:
            where.append("git_branch = ?")
            args.append(branch)
        if same_model:
            where.append("(model = ? OR (model IS NULL AND CAST(? AS TEXT) IS NULL))")
            args += [model, model]
        if completed_only:
            where.append("status = 'completed'")
        # the candidate's version says which data it saw only when it saw all of it
        version = candidate.dataset_hash if candidate.dataset_limit is None else None
        done = "CASE WHEN status = 'completed' THEN 1 ELSE 0 END"
        whole = "CASE WHEN dataset_limit IS NULL THEN 1 ELSE 0 END"
        same = "CASE WHEN dataset_hash = ? THEN 1 ELSE 0 END" if version else "1"
        rank_args = [version] if version else []
        filters = " AND ".join(where)
        row = self._read_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE {filters}"
            f" ORDER BY {done} DESC, {whole} DESC, {same} DESC, {_NEWEST_FIRST}, rowid DESC"
            " LIMIT 1",
            (*args, *rank_args),
        )
        if row is None:
            return None
        run = _run_row(row)
        newer = self._read(
            f"SELECT status, dataset_limit, dataset_hash, COUNT(*) FROM runs WHERE {filters}"
            " AND COALESCE(ordered_at, created_at) >= (SELECT COALESCE(ordered_at, created_at)"
            " FROM runs WHERE id = ?) AND id != ?"
            " GROUP BY status, dataset_limit, dataset_hash",
            (*args, run.id, run.id),
        )
        return _choice(name, candidate, run, version, newer)


def _choice(
    name: str,
    candidate: RunRow,
    run: RunRow,
    version: str | None,
    newer: list[tuple[Any, ...]],
) -> BaselineChoice:
    off: list[str] = []
    if run.status != "completed":
        off.append(f"it did not complete ({run.status})")
    if run.dataset_limit is not None:
        off.append(f"it was made with --limit {run.dataset_limit}")
    if version is not None and run.dataset_hash != version:
        off.append(
            f"it is on dataset version {_version(run.dataset_hash)}, the candidate on"
            f" {_version(version)}"
        )
    on = f" on dataset version {_version(version)}" if version is not None else ""
    how = (
        f"the latest complete run of {name!r}{on}"
        if not off
        else f"the latest run of {name!r} closest to like-for-like"
    )
    if candidate.dataset_limit is not None:
        how += (
            f" (the candidate was made with --limit {candidate.dataset_limit}: dataset versions"
            " are not compared)"
        )
    warning = None
    if off:
        whole = f"of dataset version {_version(version)}" if version is not None else "dataset"
        warning = (
            f"no complete run of {name!r} on the whole {whole} to compare with; this baseline"
            f" is not like-for-like: {'; '.join(off)}"
        )
    counts: dict[str, int] = {}
    for status, limit, hashed, count in newer:
        if status != "completed":
            why = "not completed"
        elif limit is not None:
            why = f"made with --limit {limit}"
        elif version is not None and hashed != version:
            why = f"on dataset version {_version(hashed)}"
        else:  # as good, and as new: a tie in time
            why = "as recent"
        counts[why] = counts.get(why, 0) + int(count)
    skipped = tuple((n, why) for why, n in sorted(counts.items()))
    return BaselineChoice(run, how, skipped, warning)
