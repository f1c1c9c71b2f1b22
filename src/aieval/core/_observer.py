"""The run observer contract: what sees a run start, each stored sample, and its end.

The runner calls observers; it imports none of them. Telemetry (OpenTelemetry spans) and the
server's live updates are observers, and a package adds one with an entry point in the
``aieval.observers`` group whose object is an :data:`ObserverFactory`::

    [project.entry-points."aieval.observers"]
    mine = "mypackage.observe:factory"

The factory is called once per run, before anything is stored, with the run's
:class:`ObserverOptions`; it returns an observer, or ``None`` to sit this run out, or raises a
:class:`~aieval.errors.ConfigError` to refuse the run (e.g. a missing extra).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from aieval.core._records import SampleRecord

__all__ = [
    "ObserverFactory",
    "ObserverOptions",
    "RunFinish",
    "RunObserver",
    "RunStart",
    "SettingChange",
]


@dataclass(slots=True, frozen=True)
class ObserverOptions:
    """What a run asks of its observers.

    Attributes:
        telemetry: whether the run asked for OpenTelemetry spans (``telemetry=``, a tracer
            provider, or ``$AIEVAL_OTEL``).
        tracer_provider: where spans go (``None``: the global tracer provider).
    """

    telemetry: bool = False
    tracer_provider: Any = None


@dataclass(slots=True, frozen=True)
class SettingChange:
    """An execution setting a resumed run now uses in place of the one it ran with before.

    >>> str(SettingChange("concurrency", 1, 16))
    'concurrency 16 (the run ran with 1 before)'
    """

    field: str
    then: Any
    now: Any

    def __str__(self) -> str:
        return f"{self.field} {self.now} (the run ran with {self.then} before)"

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "then": self.then, "now": self.now}


@dataclass(slots=True, frozen=True)
class RunStart:
    """A run that starts: its identity and the fixed facts of what it evaluates.

    With a store these are the stored run's (so a live run and its replay agree).
    """

    id: str
    name: str
    started_at: float
    model: str | None = None
    provider: str | None = None
    dataset: str | None = None
    dataset_hash: str | None = None
    n_examples: int | None = None
    git_sha: str | None = None
    store_path: str | None = None
    #: whether the run is a stored one resumed (its stored samples are kept)
    resumed: bool = False
    #: a resumed run's execution settings (concurrency, timeout, retries...) that differ from
    #: those it ran with before: it uses the ones it was resumed with
    execution_changes: tuple[SettingChange, ...] = ()


@dataclass(slots=True, frozen=True)
class RunFinish:
    """How a run ended: ``status`` (``completed``, ``failed``, ``interrupted``), its summary
    (as stored as the run's metrics) and its error, if any."""

    id: str
    status: str
    summary: Mapping[str, Any]
    error: str | None
    finished_at: float


@runtime_checkable
class RunObserver(Protocol):
    """Sees a run start, each sample once it is stored, and the run's end.

    Calls come from the run's thread, in order: one ``on_start``, one ``on_sample`` per
    stored sample (``done`` samples of ``total`` stored so far), one ``on_finish`` (also when
    the run fails or is interrupted). An observer that raises is logged and not called again;
    it never fails the evaluation.
    """

    def on_start(self, run: RunStart) -> None:
        """The run started (its row is stored, when there is a store)."""

    def on_sample(self, run: RunStart, sample: SampleRecord, done: int, total: int) -> None:
        """``sample`` is stored: ``done`` of the run's ``total`` samples are."""

    def on_finish(self, run: RunStart, end: RunFinish) -> None:
        """The run ended (its end is stored, when there is a store)."""


ObserverFactory = Callable[[ObserverOptions], RunObserver | None]
"""An ``aieval.observers`` plug-in: called once per run; ``None`` sits the run out."""
