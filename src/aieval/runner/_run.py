"""The runner's front: ``run()``, ``run_async()``, ``run_spec()`` and ``check_run()``.

A run is validated into a :class:`RunSpec` plus the live objects a spec cannot hold
(:mod:`._inputs`), then executed (:mod:`._execute`): prepared (:mod:`._prepare`: data, store,
scorers, target, run row) and driven (:mod:`._driver`): an executor runs the per-sample work
(:mod:`._sample` here, :mod:`._remote` on Ray workers) and this process stores each finished
sample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from aieval._keys import suggestion
from aieval._sync import blocking_twin
from aieval.core import RunObserver
from aieval.errors import ConfigError
from aieval.providers import Provider
from aieval.runner._execute import execute
from aieval.runner._executor import Executor
from aieval.runner._grading import run_grader
from aieval.runner._inputs import (
    Described,
    LiveParts,
    ProgressCallback,
    resolve_parts,
    split_live,
)
from aieval.runner._prepare import check_something_scored, open_data, run_evaluator
from aieval.runner._result import RunResult
from aieval.runner._spec import SPEC_KEYWORDS, RunSpec
from aieval.scorers import Scorer
from aieval.store import Store

__all__ = [
    "ProgressCallback",
    "check_run",
    "run",
    "run_async",
    "run_spec",
    "run_spec_async",
]

#: Settings refused unless numbers when given to ``run()`` (``"4"`` from Python is a mistake to
#: name, not a number to convert).
_NUMBERS = ("concurrency", "max_error_rate")


async def run_async(
    *,
    name: str,
    dataset: Any,
    scorers: Sequence[Scorer | Callable[..., Any] | str | dict[str, Any]],
    provider: str | Provider | None = None,
    model: str | None = None,
    target: Callable[..., Any] | None = None,
    workflow: Any = None,
    profile: Any = None,
    store: Store | str | Path | bool | None = True,
    executor: str | Executor = "local",
    progress: ProgressCallback | None = None,
    tracer_provider: Any = None,
    **settings: Any,
) -> RunResult:
    """Evaluate ``dataset`` with ``scorers``; every finished sample is committed to the store.

    The keywords here may be live objects; every other keyword is a run setting, validated
    by :class:`RunSpec` (its fields, by these names: ``concurrency``, ``pass_threshold``,
    ``params``...; docs/architecture.md "The run spec" lists them all). A setting given
    ``None`` keeps its default; an unknown name is a :class:`ConfigError` naming it.

    Args:
        name: the run name (runs of one name form a history; ``resume=True`` uses it).
        dataset: rows (list of dicts), a .jsonl/.json/.csv path, or a ``datasets.Dataset``.
        scorers: :class:`Scorer` objects, plain functions, registered scorer names, or
            ``"module:qualname"`` references, or ``{name: {options}}`` mappings as in eval
            files.
        provider: a provider name or preset (``openai``, ``sarmalink``, ``vllm``, ``ollama``,
            ``openai-compatible``) or a :class:`Provider`; omit it for recorded predictions.
        model: the model to call; with recorded ``predictions: {model: text}`` it picks the
            version to evaluate.
        target: a sync or async callable taking an :class:`Example`, instead of a provider.
        workflow: a workflow definition (file, mapping or object) grading each sample's
            workflow run (docs/workflows.md).
        profile: the scoring profile for workflow runs (id, family, file or object).
        store: ``True`` (``$AIEVAL_DB`` or ``./aieval.db``), a path, a :class:`Store`, or
            ``False``/``None`` to keep results in memory only.
        executor: ``"local"``, ``"ray"`` (docs/distributed.md), or an
            :class:`~aieval.runner.Executor` such as a configured
            :class:`~aieval.runner.RayExecutor`.
        progress: called with ``(done, total)`` after every sample.
        tracer_provider: the OpenTelemetry tracer provider to use instead of the global one;
            giving one turns telemetry on unless ``telemetry=False``.
        **settings: the run's settings, as :class:`RunSpec` fields.

    Raises:
        ConfigError: an invalid or unknown setting (named); with Ray, a part of the run its
            workers cannot rebuild (a scorer or target that has no import path and cannot be
            pickled, or pickles to more than 100 MiB; a provider object), or the ``ray``
            extra missing (with the install command).
        DatasetError: the dataset has no rows (nothing would be evaluated).
        StoreError: a sample could not be stored (a full disk...): the run is stored as
            ``failed`` with this error, its summary counts the stored samples only, and
            ``resume=`` finishes it once the cause is fixed.
    """
    given, live = split_live(
        dataset=dataset,
        scorers=scorers,
        provider=provider,
        target=target,
        store=store,
        workflow=workflow,
        profile=profile,
        executor=executor,
        ray_address=settings.pop("ray_address", None),
        progress=progress,
        tracer_provider=tracer_provider,
    )
    spec = _spec(given, name=name, model=model, settings=settings)
    return await execute(spec, live)


run = blocking_twin(
    run_async,
    name="run",
    thread_name="aieval-run",
    doc="""Evaluate ``dataset`` with ``scorers`` and return the run's result (sync wrapper).

See :func:`run_async` for every option. Inside a running event loop (a notebook), the run
executes on a helper thread so this call still blocks until it is done.

Example:
    >>> from aieval.scorers import exact_match
    >>> result = run(name="doc", dataset=[{"prompt": "2+2?", "expected": "4",
    ...              "prediction": "4"}], scorers=[exact_match], store=False)
    >>> result.metrics
    {'exact_match': 1.0}

""",
)


async def run_spec_async(
    spec: RunSpec,
    *,
    store: Store | None = None,
    progress: ProgressCallback | None = None,
    tracer_provider: Any = None,
    executor: Executor | None = None,
    observers: Sequence[RunObserver] = (),
) -> RunResult:
    """Run a :class:`RunSpec`: from an eval file, a stored run (:meth:`RunSpec.of_run`), JSON.

    ``store`` is an open store to use instead of the spec's ``store`` path; ``executor`` a
    configured executor instead of the spec's ``executor`` name; ``progress`` and
    ``tracer_provider`` are as in :func:`run_async`; ``observers`` (each a
    :class:`~aieval.core.RunObserver`) see the run start, each stored sample and its end.
    """
    live = LiveParts(
        store=store,
        progress=progress,
        tracer_provider=tracer_provider,
        executor=executor,
        observers=tuple(observers),
    )
    return await execute(spec, live)


run_spec = blocking_twin(
    run_spec_async,
    name="run_spec",
    thread_name="aieval-run",
    doc="""Run a :class:`RunSpec` (sync wrapper of :func:`run_spec_async`).

Example:
    >>> spec = RunSpec(name="doc", dataset=[{"prompt": "2+2?", "expected": "4",
    ...                "prediction": "4"}], scorers=["exact_match"], store=False)
    >>> run_spec(spec).metrics
    {'exact_match': 1.0}

""",
)


def check_run(
    *,
    dataset: Any,
    scorers: Sequence[Scorer | Callable[..., Any] | str | dict[str, Any]],
    has_target: bool,
    model: str | None = None,
    limit: int | None = None,
    prediction_field: str | None = None,
    workflow: Any = None,
    profile: Any = None,
    evaluator: str | None = None,
    grader: str | None = None,
) -> None:
    """Refuse, before anything runs or is stored, what :func:`run_async` would refuse at start.

    Resolves the scorers, the workflow and profile, reads the dataset once, checks it against
    the workflow's required inputs, checks there is something to evaluate, and loads the
    grader.

    Raises:
        ConfigError: unknown scorer or grader, nothing to evaluate;
            :class:`IncompatibleDatasetError` (a ConfigError) lists the missing workflow inputs.
        DatasetError, WorkflowError, RubricError: unreadable dataset, workflow or profile.
    """
    given, live = split_live(dataset=dataset, scorers=scorers, workflow=workflow, profile=profile)
    settings = dict(limit=limit, prediction_field=prediction_field, evaluator=evaluator)
    spec = _spec(given, name="check", model=model, settings=settings)
    parts = resolve_parts(spec, live)
    evaluator_of_run = run_evaluator(spec, parts)
    _, info = open_data(parts.dataset, spec, evaluator_of_run)
    check_something_scored(parts.scorers, evaluator_of_run, info)
    if grader is not None:
        run_grader(grader, spec.scoring.pass_threshold, evaluator_of_run)
    if not has_target and evaluator_of_run is None and info.with_prediction == 0 and info.count > 0:
        hint = f" (no row has predictions[{model!r}])" if model is not None else ""
        raise ConfigError(
            "nothing to evaluate: no target was given and the rows carry no recorded "
            f"'prediction'{hint}; add a target, or a prediction to each row"
        )


def _spec(given: Described, *, name: str, model: str | None, settings: dict[str, Any]) -> RunSpec:
    """The spec of ``run()``'s keywords, validated once by :class:`RunSpec` (an invalid value
    is a :class:`ConfigError` naming ``sub_spec.field``; an unknown keyword names itself)."""
    for key, value in settings.items():
        if key not in SPEC_KEYWORDS:
            hint = suggestion(key, SPEC_KEYWORDS)
            raise ConfigError(f"run(): {key}: not a run setting; {hint}")
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if key in _NUMBERS and value is not None and not number:
            raise ConfigError(f"run(): {key} must be a number, got {type(value).__name__}")
    data = {key: value for key, value in settings.items() if value is not None}
    if isinstance(data.get("prices"), Mapping):
        data["prices"] = dict(data["prices"])
    if isinstance(data.get("min_scores"), Mapping):
        data["min_scores"] = dict(data["min_scores"])
    # what may have been an object, as the spec describes it (the rows are read, and checked,
    # by the dataset: not copied here)
    described = {part.name: getattr(given, part.name) for part in fields(given)}
    described.update(dataset="", target=described.pop("function"))
    data.update(described, name=name, model=model)
    spec = RunSpec.parse(data, source="run()", flat=True)
    return spec.model_copy(update={"dataset": given.dataset})
