"""Evaluations run in worker threads, a bounded number at once, writing to the store."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from aieval._files import confined_to
from aieval.runner import EvalConfig, RunSpec, run_spec
from aieval.server._wakeups import LiveUpdates, Wakeups
from aieval.store import Store, StoreLocation, new_run_id

__all__ = ["RunManager", "RunState"]

log = logging.getLogger("aieval.server")


@dataclass(slots=True)
class RunState:
    """What the server knows about a run it started (beyond what the store holds)."""

    status: str = "queued"  # queued | running | finished
    error: str | None = None


class RunManager:
    """Starts evaluations on worker threads; each has its own event loop.

    Scoring is CPU-bound and the runner blocks its thread, so the server's loop stays free.
    A client that goes away never cancels a run: runs belong to the manager, not to requests.
    """

    def __init__(
        self,
        location: StoreLocation,
        wakeups: Wakeups,
        *,
        max_concurrent: int,
        roots: Sequence[Path] | None = None,
    ) -> None:
        self.wakeups = wakeups
        self.roots = tuple(roots) if roots is not None else None
        self.store = Store(location)
        self._live = LiveUpdates(wakeups)
        self._pool = ThreadPoolExecutor(max_concurrent, thread_name_prefix="aieval-eval")
        self._lock = threading.Lock()
        self._states: dict[str, RunState] = {}

    def submit(self, config: EvalConfig) -> str:
        """Queue ``config``'s run and return the id it will have.

        Raises:
            ConfigError: the configuration makes more than one run, or an invalid spec.
        """
        run_id = new_run_id()
        spec = self.spec_of(config, run_id)
        with self._lock:
            self._states[run_id] = RunState()
        self._pool.submit(self._execute, run_id, spec)
        return run_id

    def spec_of(self, config: EvalConfig, run_id: str) -> RunSpec:
        """The :class:`RunSpec` this server runs for ``config``: the eval file's one spec (as
        ``aieval run`` builds it), stored in this server's store under ``run_id``."""
        (spec,) = config.specs(store=str(self.store.location), run_id=run_id)
        return spec

    def state(self, run_id: str) -> RunState | None:
        """The state of a run this server started, else ``None``."""
        with self._lock:
            return self._states.get(run_id)

    def shutdown(self) -> None:
        """Drop queued runs; running ones end with the process (and can be resumed)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _execute(self, run_id: str, spec: RunSpec) -> None:
        state = self._states[run_id]
        state.status = "running"
        try:
            # every file the run opens (folder members, schemas, rubrics) stays in the roots
            with confined_to(self.roots) if self.roots is not None else nullcontext():
                run_spec(spec, store=self.store, observers=[self._live])
        except Exception as exc:
            log.warning("evaluation %s failed: %s", run_id, exc)
            state.error = f"{type(exc).__name__}: {exc}"
        finally:
            state.status = "finished"
            self.wakeups.notify(run_id)
