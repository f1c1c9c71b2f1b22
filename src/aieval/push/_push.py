"""``push``: copy runs from a local store to a target (another store, or a server).

Which runs: every run when none is named; an id or unique id prefix is that run; a name is every
run of that name. Each run is compared with what the target holds of it: absent (new), the same
header and samples (unchanged), or behind (its header is replaced and the samples it lacks
added: updated). A run still running is not pushed (its samples are still being written and the
target would hold a run that reads as running, or interrupted, there); push it once it ends; nor
is a run that a process runs (resumes) on the target. A target holding samples of a run that the
source lacks (the run was resumed or written there) is a conflict, as is one holding a sample
that differs from the source's (same id, but another prediction, score, verdict or time: the run
was resumed on both sides): nothing of that run is written and the push stops with a
:class:`~aieval.errors.PushError` naming it. So an update only adds samples, and the header it
writes is the source's, which the union of samples (the source's) gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from aieval.errors import AievalError, PushError, RunInProgressError
from aieval.store import Checked, ImportOutcome, RunHolding, RunRow, Store, StoredSample

__all__ = [
    "Progress",
    "PushSummary",
    "PushTarget",
    "RunPushed",
    "StoreTarget",
    "push_runs",
    "select_runs",
]

# How many times a run is compared and written when another writer keeps changing it there.
_COMPARISONS = 3

#: ``progress(run, samples written so far, samples to write)``, called as a run's samples go.
Progress = Callable[[RunRow, int, int], None]


class PushTarget(Protocol):
    """Where runs are pushed: a store, or a server's upload endpoint."""

    #: How the target is named in messages (no credentials).
    where: str

    def holding(self, run_id: str) -> RunHolding | None:
        """What the target holds of ``run_id``, or ``None``."""
        ...

    def write(
        self, run: RunRow, samples: Iterable[StoredSample], count: int, progress: Progress
    ) -> ImportOutcome:
        """Write ``run``'s header and ``samples`` (``count`` of them) all or nothing."""
        ...

    def close(self) -> None:
        """Release the target's connection."""
        ...


@dataclass(frozen=True, slots=True)
class RunPushed:
    """One run's push: ``new``, ``updated`` or ``unchanged``, and the samples copied."""

    run_id: str
    name: str
    outcome: Literal["new", "updated", "unchanged"]
    samples: int


@dataclass(frozen=True, slots=True)
class PushSummary:
    """What a push did: each run's outcome, and the runs not pushed because still running."""

    runs: tuple[RunPushed, ...] = ()
    running: tuple[str, ...] = ()
    where: str = ""

    def count(self, outcome: str) -> int:
        """How many runs had ``outcome``."""
        return sum(r.outcome == outcome for r in self.runs)

    @property
    def samples(self) -> int:
        """Samples copied, over all runs."""
        return sum(r.samples for r in self.runs)

    def line(self) -> str:
        """The one-line summary.

        >>> PushSummary((RunPushed("a", "n", "new", 3),), where="t.db").line()
        'pushed 1 run to t.db: 1 new, 0 updated, 0 unchanged; 3 samples copied'
        """
        n = len(self.runs)
        text = (
            f"pushed {n} run{'s' * (n != 1)} to {self.where}: {self.count('new')} new, "
            f"{self.count('updated')} updated, {self.count('unchanged')} unchanged; "
            f"{self.samples} sample{'s' * (self.samples != 1)} copied"
        )
        if self.running:
            text += (
                f"; {len(self.running)} still running, not pushed ({', '.join(self.running)}):"
                " push again once it ends"
            )
        return text


class StoreTarget:
    """A store as a push target (an SQLite file or a PostgreSQL database).

    A run's write is checked, in its transaction, against what :meth:`holding` answered of it:
    a writer that changed the run in between is refused, not overwritten."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.where = str(store.location)  # a URL's password is redacted
        self._checked: dict[str, Checked] = {}

    def holding(self, run_id: str) -> RunHolding | None:
        held = self.store.run_holding(run_id)
        self._checked[run_id] = Checked.of(held)
        return held

    def write(
        self, run: RunRow, samples: Iterable[StoredSample], count: int, progress: Progress
    ) -> ImportOutcome:
        checked = self._checked.pop(run.id, None)
        counted = _counted(run, samples, count, progress)
        return self.store.import_run(run, counted, checked=checked)

    def close(self) -> None:
        self.store.close()


def select_runs(source: Store, refs: Sequence[str]) -> list[RunRow]:
    """The runs ``refs`` name (every run when empty), oldest first, each once.

    Raises:
        RunNotFoundError: a reference matches no run (or an ambiguous id prefix).
    """
    if not refs:
        runs = source.list_runs(limit=max(source.count_runs(), 1))
    else:
        runs = []
        for ref in refs:
            run = source.get_run(ref)
            if run.id != ref and not run.id.startswith(ref):  # matched by name: all of them
                runs += source.list_runs(name=ref, limit=source.count_runs(name=ref))
            else:
                runs.append(run)
    unique = {run.id: run for run in runs}
    return sorted(unique.values(), key=lambda r: (r.created_at, r.id))


def push_runs(
    source: Store,
    target: PushTarget,
    refs: Sequence[str] = (),
    *,
    progress: Progress | None = None,
    on_run: Callable[[RunPushed], None] | None = None,
) -> PushSummary:
    """Copy the runs ``refs`` name (all when empty) from ``source`` to ``target``.

    Raises:
        RunNotFoundError: a reference matches no run.
        RunInProgressError: a run named by its id is still running.
        PushError: a run could not be written (conflict, refused, connection lost): the
            message names it; the target holds none of that run's attempt.
    """
    runs = select_runs(source, refs)
    done: list[RunPushed] = []
    running: list[str] = []
    for run in runs:
        if run.status == "running":
            if any(run.id.startswith(ref) for ref in refs):  # named by its id or a prefix
                raise RunInProgressError(
                    f"run {run.id} is still running; push it once it has ended",
                    run_id=run.id,
                    pid=run.pid,
                    host=run.host,
                    heartbeat_age_s=None,
                )
            running.append(run.id)
            continue
        pushed = _push_one(source, target, run, progress or _quiet)
        done.append(pushed)
        if on_run is not None:
            on_run(pushed)
    return PushSummary(tuple(done), tuple(running), target.where)


def _push_one(source: Store, target: PushTarget, run: RunRow, progress: Progress) -> RunPushed:
    """Push ``run``, comparing anew when another writer changed it there between the
    comparison and the write (several jobs pushing the same runs: the later ones then find
    the run there as their own copy, ``unchanged``)."""
    for attempt in range(1, _COMPARISONS + 1):
        try:
            return _push_attempt(source, target, run, progress)
        except PushError as exc:
            if not exc.changed_since or attempt == _COMPARISONS:
                raise
    raise AssertionError("unreachable")


def _push_attempt(source: Store, target: PushTarget, run: RunRow, progress: Progress) -> RunPushed:
    try:
        held = target.holding(run.id)
        mine = source.run_holding(run.id)
        assert mine is not None, run.id
        if held is not None:
            if held.run.status == "running":
                raise _running_there(held.run, target.where)
            extra = held.sample_ids - mine.sample_ids
            if extra:
                raise PushError(
                    f"run {run.id} ({run.name}): {target.where} holds {len(extra)} sample(s) "
                    f"of it that this store lacks (e.g. {sorted(extra)[0]!r}): it was resumed "
                    "or written there. Nothing of it was pushed; compare the two copies, or "
                    "push the copy that holds them all",
                    run_id=run.id,
                )
            changed = sorted(i for i in held.sample_ids if held.digests[i] != mine.digests[i])
            if changed:
                raise PushError(
                    f"run {run.id} ({run.name}): {target.where} holds {len(changed)} sample(s) "
                    f"of it that differ from this store's (e.g. {changed[0]!r}): it was resumed "
                    "or written there as well as here. Nothing of it was pushed; compare the two "
                    "copies, and push a run only from the store that resumes it",
                    run_id=run.id,
                )
            missing = mine.sample_ids - held.sample_ids
            if not missing and held.run == run:
                return RunPushed(run.id, run.name, "unchanged", 0)
        else:
            missing = mine.sample_ids
        samples = (s for s in source.stored_samples(run.id) if s.sample_id in missing)
        outcome = target.write(run, samples, len(missing), progress)
    except PushError:
        raise
    except RunInProgressError as exc:  # it went live there between the check and the write
        age = exc.heartbeat_age_s
        live = replace(run, pid=exc.pid, host=exc.host, heartbeat_at=None)
        raise _running_there(live, target.where, age) from exc
    except AievalError as exc:
        if getattr(exc, "changed_since", False):
            raise PushError(
                f"cannot push run {run.id} ({run.name}) to {target.where}: {exc}. Nothing of "
                "this attempt was written there; push again to compare anew",
                run_id=run.id,
                changed_since=True,
            ) from exc
        then = (
            "pushing again resumes with it"
            if getattr(exc, "transient", False)
            else "push again once that is fixed"
        )
        raise PushError(
            f"cannot push run {run.id} ({run.name}) to {target.where}: {exc}. Nothing of this "
            f"attempt was written there; runs pushed before it stay pushed, and {then}",
            run_id=run.id,
        ) from exc
    return RunPushed(run.id, run.name, outcome.outcome, outcome.samples_added)


def _running_there(live: RunRow, where: str, age: float | None = None) -> PushError:
    """The refusal to push over a run that a process is running (resuming) at ``where``."""
    if age is None and live.heartbeat_at is not None:
        age = max(0.0, time.time() - live.heartbeat_at)
    who = f"pid {live.pid}" if live.pid is not None else "unknown process"
    if live.host is not None:
        who += f" on {live.host}"
    beat = f"{age:.0f} s ago" if age is not None else "at an unknown time"
    return PushError(
        f"run {live.id} is running on the destination {where} (owner {who}, heartbeat {beat}): "
        "push it after it ends",
        run_id=live.id,
    )


def _counted(
    run: RunRow, samples: Iterable[StoredSample], count: int, progress: Progress
) -> Iterator[StoredSample]:
    done = 0
    for sample in samples:
        yield sample
        done += 1
        if done % _EVERY == 0:
            progress(run, done, count)
    progress(run, done, count)


def _quiet(run: RunRow, done: int, total: int) -> None:
    return None


#: Progress is reported every this many samples (and once at the end of each run).
_EVERY = 5000
