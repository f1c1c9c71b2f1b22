"""Samples on Ray workers: the run's spec is shipped, each worker builds its own processor.

The driver sends the run's :class:`RunSpec` as JSON (never the live objects of its process);
each worker process builds the target, the scorers and the evaluator from it once, keeps
them for the run's later batches (keyed by the spec's hash), and returns finished
:class:`SampleRecord` objects that the driver redacts again and stores.

What must travel, and how:

- scorers: registered names of built-in scorers, ``module:qualname`` references, or names
  from the files in ``imports`` (an eval file's, or the file that defines the scorer), which
  each worker imports first;
- a callable target: by import reference; provider targets: by provider name (each worker
  reads the same environment variables for its key);
- a scorer or a callable target no worker could import (a lambda, a closure, a function of
  ``__main__``: a script or a notebook, a scorer with bound options) travels by value,
  pickled with cloudpickle beside the spec, up to :data:`MAX_BY_VALUE_BYTES` each; one that
  cannot be pickled, or is larger, is refused before the run starts, naming the field;
- a provider, workflow or profile object is refused: give its name or file.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aieval._endpoint import enter_endpoint, leave_endpoint
from aieval._records import SampleRecord
from aieval._types import Example
from aieval.core import GROUPS, plugin_names
from aieval.errors import ConfigError
from aieval.runner._endpoints import run_endpoint
from aieval.runner._evaluator import evaluator_name, evaluator_scorers
from aieval.runner._imports import is_imported_file
from aieval.runner._inputs import LiveParts, resolve_parts
from aieval.runner._prepare import Prepared, make_target, run_evaluator, target_secrets
from aieval.runner._references import is_builtin
from aieval.runner._sample import SampleProcessor
from aieval.runner._shipping import TooLarge, brief, dumps, loads, refusal
from aieval.runner._spec import RunSpec
from aieval.runner._target import Target
from aieval.scorers import Scorer
from aieval.store import default_location, parse_location

__all__ = ["MAX_BY_VALUE_BYTES", "RemoteSamples", "remote_samples"]

#: The most bytes one scorer or target may pickle to when it travels by value: it is copied
#: to the workers with every batch (about Ray's own limit for a remote function).
MAX_BY_VALUE_BYTES = 100 * 1024 * 1024

#: Processors a worker process keeps (one per run it works for); older ones are closed.
_KEEP = 2
_processors: dict[str, tuple[RunSpec, _WorkerProcessor]] = {}
_closing: set[asyncio.Future[None]] = set()


@dataclass(frozen=True, slots=True)
class RemoteSamples:
    """The per-sample function shipped to Ray workers: the run's spec, as JSON.

    Attributes:
        spec_json: the spec the workers build their processor from.
        cache_path: the response cache file (the run's store) if the workers can reach it.
        by_value: the scorers (``"scorers[i]"``) and the target (``"target"``) no worker could
            import, each pickled by value, in place of the spec's entry for them.
        by_value_digest: a digest of ``by_value`` (workers key their processor by it).
    """

    spec_json: str
    cache_path: str | None = None
    by_value: tuple[tuple[str, bytes], ...] = ()
    by_value_digest: str = ""

    def for_batches(self, batches: int) -> RemoteSamples:
        """This function with the run's concurrency shared out over ``batches`` in flight.

        Each batch runs in one worker process, so no more than the run's ``concurrency``
        model calls (and callable-target threads) are in flight across the cluster.
        """
        spec = RunSpec.model_validate_json(self.spec_json)
        share = max(1, spec.execution.concurrency // max(1, batches))
        return replace(self, spec_json=spec.replace(concurrency=share).model_dump_json())

    async def __call__(self, item: tuple[int, Example]) -> SampleRecord:
        spec, processor = self._processor()
        if processor.gate is None:  # the worker's share of the run's concurrency
            processor.gate = asyncio.Semaphore(spec.execution.concurrency)
        store_path = self.cache_path if processor.cache_reachable else None
        token = enter_endpoint(run_endpoint(spec, store_path))
        try:
            async with processor.gate:
                return await processor(item)
        finally:
            leave_endpoint(token)

    def _processor(self) -> tuple[RunSpec, _WorkerProcessor]:
        text = f"{self.spec_json}\0{self.cache_path}\0{self.by_value_digest}"
        key = hashlib.sha256(text.encode()).hexdigest()
        found = _processors.get(key)
        if found is None:
            spec = RunSpec.model_validate_json(self.spec_json)
            by_value = {field: loads(data) for field, data in self.by_value}
            found = (spec, build_processor(spec, self.cache_path, by_value))
            while len(_processors) >= _KEEP:  # a run this worker no longer serves
                _, old = _processors.pop(next(iter(_processors)))
                closing = asyncio.ensure_future(old.aclose())
                _closing.add(closing)
                closing.add_done_callback(_closing.discard)
            _processors[key] = found
        return found


class _WorkerProcessor(SampleProcessor):
    """A processor built on a worker: whether it reached the response cache, and the gate
    that keeps its samples in flight to the worker's share of the run's concurrency."""

    cache_reachable = False
    gate: asyncio.Semaphore | None = None


def build_processor(
    spec: RunSpec, cache_path: str | None, by_value: dict[str, Any] | None = None
) -> _WorkerProcessor:
    """A worker's processor, built from the shipped spec and the parts sent by value.

    The response cache is the run's store file when this worker sees it (one machine, or a
    shared file system), else off.
    """
    by_value = by_value or {}
    live = LiveParts(target=by_value.get("target"))
    if any(field.startswith("scorers[") for field in by_value):
        entries = spec.scoring.scorers
        live.scorers = [by_value.get(f"scorers[{i}]", e) for i, e in enumerate(entries)]
    parts = resolve_parts(spec, live)
    evaluator = run_evaluator(spec, parts)
    reachable = cache_path if cache_path is not None and _reachable(cache_path) else None
    given = parts.target
    has_target = spec.target.function is not None or parts.provider is not None or given is not None
    target: Target | None = None
    if has_target or evaluator is None:
        target = make_target(spec, reachable, target=given)
    if evaluator is not None:
        target = evaluator.wrap(target)
    assert target is not None
    processor = _WorkerProcessor(
        [*parts.scorers, *evaluator_scorers(evaluator)],
        target,
        model=spec.target.model,
        pass_threshold=spec.scoring.pass_threshold,
        evaluator=evaluator,
        grader=spec.scoring.grader,
        secrets=target_secrets(target),
        prices=spec.target.prices,
    )
    processor.cache_reachable = reachable is not None
    return processor


def remote_samples(prep: Prepared, live: LiveParts) -> RemoteSamples:
    """The function that runs this run's samples on Ray workers, or a refusal naming the field.

    Raises:
        ConfigError: an evaluator that runs its samples in this process only (its
            ``local_only`` says why: the conversation evaluator), or a part of the run the
            workers can neither import nor receive by value
            (it cannot be pickled, or pickles to more than :data:`MAX_BY_VALUE_BYTES`), or
            an object given in place of a name (a provider, a workflow, a profile).
    """
    spec = prep.spec
    # an evaluator that plays its samples in this process only says why (``local_only``)
    local_only = getattr(prep.evaluator, "local_only", None)
    if local_only:
        raise ConfigError(f"executor: ray: {local_only}")
    by_value: dict[str, Any] = {}
    for field, why in live.unspecified.items():
        if field == "target" and prep.parts.target is not None:
            by_value[field] = prep.parts.target
        elif field != "dataset" and not field.startswith("scorers["):
            # the driver reads the rows; the workers get examples
            raise ConfigError(f"{field}: {why}; {_WHY}")
    imports = list(spec.scoring.imports)
    for i, (entry, scorer) in enumerate(zip(spec.scoring.scorers, prep.scorers, strict=True)):
        field = f"scorers[{i}]"
        if field in live.unspecified or not _importable(entry, scorer, imports):
            by_value[field] = scorer
    parts, scoring = prep.parts, spec.scoring
    shipped = spec.replace(
        dataset=prep.data.source,  # a label: workers never read the dataset
        store=False,
        resume=None,
        run_id=None,
        telemetry=False,
        executor="local",
        ray_address=None,
        metadata={},
        imports=[os.path.abspath(f) for f in imports],
        workflow=_absolute(scoring.workflow),
        profile=_absolute(scoring.profile),
        evaluator=evaluator_name(
            scoring.evaluator,
            parts.workflow,
            parts.profile,
            parts.dataset,
            scoring.conversation,
            scoring.replay,
        ),
    )
    where = prep.db.location if prep.db is not None else default_location()
    # a file by its absolute path; a database by its redacted URL (workers connect with
    # PGPASSWORD or ~/.pgpass: the password is never shipped)
    cache = os.path.abspath(where.path) if where.path is not None else where.redacted
    packed = tuple((field, _pickled(field, obj)) for field, obj in by_value.items())
    digest = hashlib.sha256(b"".join(data for _, data in packed)).hexdigest() if packed else ""
    return RemoteSamples(shipped.model_dump_json(), cache, packed, digest)


_WHY = "the Ray executor rebuilds the run on its workers from the run's spec"


def _importable(entry: Any, scorer: Scorer, imports: list[str]) -> bool:
    """Whether a fresh worker resolves the scorer by name; notes the file that defines one."""
    name = entry if isinstance(entry, str) else next(iter(entry))
    if ":" in name or name == "llm_judge" or is_builtin(scorer):
        return True
    module = getattr(scorer.fn, "__module__", None)
    if is_imported_file(module):
        file = getattr(sys.modules.get(module or ""), "__file__", None)
        if file is not None:
            if file not in imports:
                imports.append(file)
            return True
    return name in plugin_names(GROUPS["scorers"])


def _pickled(field: str, obj: Any) -> bytes:
    """``obj`` pickled by value for the workers, or a refusal naming ``field`` and the part."""
    try:
        return dumps(obj, MAX_BY_VALUE_BYTES)
    except TooLarge:
        raise ConfigError(
            f"{field}: {brief(obj)} pickles to more than {MAX_BY_VALUE_BYTES // 2**20} MiB, "
            "the most a scorer or target sent by value to Ray workers may take; keep large "
            "data in a file it reads, or define it in a module the workers import"
        ) from None
    except Exception as exc:
        raise ConfigError(
            f"{field}: {brief(obj)} cannot be sent to the Ray workers, it cannot be pickled: "
            f"{refusal(obj, exc)}; define it at module level in an importable module, or "
            "leave out what cannot be pickled"
        ) from None


def _absolute(value: Any) -> Any:
    """A file reference made absolute (workers may start elsewhere); anything else as is."""
    if isinstance(value, str) and Path(value).is_file():
        return os.path.abspath(value)
    return value


def _reachable(cache_path: str) -> bool:
    """Whether this worker sees the run's store: its file exists here, or it is a database."""
    path = parse_location(cache_path).path
    return path is None or path.is_file()
