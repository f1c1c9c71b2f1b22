"""A run's observers: loaded from the ``aieval.observers`` plug-ins and given, called in turn.

The runner knows observers only through :class:`~aieval.core.RunObserver`: telemetry, the
server's live updates and third-party plug-ins all reach a run this way.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aieval.core import (
    ObserverOptions,
    RunFinish,
    RunObserver,
    RunStart,
    SampleRecord,
    load_plugins,
)
from aieval.errors import ConfigError
from aieval.runner._prepare import Prepared

__all__ = ["Observers", "load_observers", "run_start"]

GROUP = "aieval.observers"

log = logging.getLogger("aieval")


def load_observers(options: ObserverOptions, given: Sequence[RunObserver] = ()) -> Observers:
    """The run's observers: each ``aieval.observers`` plug-in's (unless it sits the run out),
    then ``given``.

    Raises:
        ConfigError: a plug-in cannot be loaded, refuses the run, or returns no observer.
    """
    found: list[RunObserver] = []
    for name, factory in load_plugins(GROUP).items():
        if not callable(factory):
            raise ConfigError(f"observer plug-in {name!r} is not callable: {factory!r}")
        try:
            made = factory(options)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConfigError(
                f"observer plug-in {name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if made is None:
            continue
        if not isinstance(made, RunObserver):
            raise ConfigError(
                f"observer plug-in {name!r} returned {type(made).__name__}, which lacks "
                "on_start, on_sample or on_finish"
            )
        found.append(made)
    for index, observer in enumerate(given):
        if not isinstance(observer, RunObserver):
            raise ConfigError(
                f"observers[{index}]: {type(observer).__name__} lacks on_start, on_sample or "
                "on_finish"
            )
        found.append(observer)
    return Observers(found)


def run_start(prep: Prepared, started_wall: float) -> RunStart:
    """The run's start as observers see it: the stored run's facts when there is a store."""
    if prep.db is None:
        spec = prep.spec
        return RunStart(
            id=prep.run_id,
            name=spec.name,
            started_at=started_wall,
            model=spec.target.model,
            provider=prep.provider_name,
            dataset=prep.data.source,
            dataset_hash=prep.info.version,
            n_examples=prep.info.count,
        )
    row = prep.db.get_run(prep.run_id)
    return RunStart(
        id=row.id,
        name=row.name,
        started_at=row.started_at if row.started_at is not None else started_wall,
        model=row.model,
        provider=row.provider,
        dataset=row.dataset,
        dataset_hash=row.dataset_hash,
        n_examples=row.n_examples,
        git_sha=row.git_sha,
        store_path=str(prep.db.location),
        resumed=prep.resumed,
        execution_changes=tuple(prep.execution_changes),
    )


class Observers:
    """Calls every observer in turn; one that raises is logged once and dropped."""

    def __init__(self, observers: Sequence[RunObserver]) -> None:
        self._observers = list(observers)
        self._run: RunStart | None = None

    def __bool__(self) -> bool:
        return bool(self._observers)

    def start(self, run: RunStart) -> None:
        """Tell every observer the run started."""
        self._run = run
        for observer in list(self._observers):
            self._call(observer, "on_start", lambda o: o.on_start(run))

    def sample(self, record: SampleRecord, done: int, total: int) -> None:
        """Tell every observer ``record`` is stored."""
        run = self._run
        if run is None:
            return
        for observer in list(self._observers):
            self._call(observer, "on_sample", lambda o: o.on_sample(run, record, done, total))

    def finish(self, status: str, summary: Mapping[str, Any], error: str | None) -> None:
        """Tell every observer how the run ended."""
        run = self._run
        if run is None:
            return
        end = RunFinish(run.id, status, summary, error, time.time())
        for observer in list(self._observers):
            self._call(observer, "on_finish", lambda o: o.on_finish(run, end))

    def _call(self, observer: RunObserver, hook: str, call: Callable[[RunObserver], None]) -> None:
        try:
            call(observer)
        except Exception:  # an observer's bug must not fail an evaluation
            self._observers.remove(observer)
            log.warning(
                "observer %s failed in %s and is not called again for this run",
                type(observer).__name__,
                hook,
                exc_info=True,
            )
