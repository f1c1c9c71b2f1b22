"""The runner's front: ``run()``, ``run_async()``, ``run_spec()`` and ``check_run()``.

A run is validated into a :class:`RunSpec` plus the live objects a spec cannot hold
(:mod:`._inputs`), then executed (:mod:`._execute`): prepared (:mod:`._prepare`: data, store,
scorers, target, run row) and driven (:mod:`._driver`): an executor runs the per-sample work
(:mod:`._sample` here, :mod:`._remote` on Ray workers) and this process stores each finished
sample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aieval._sync import run_sync
from aieval._usage_figures import ModelPrice
from aieval.core import DEFAULT_PASS_THRESHOLD, RunObserver
from aieval.errors import ConfigError
from aieval.providers import Provider
from aieval.runner._execute import execute
from aieval.runner._executor import Executor
from aieval.runner._inputs import (
    Described,
    LiveParts,
    ProgressCallback,
    resolve_parts,
    split_live,
)
from aieval.runner._prepare import check_something_scored, open_data, run_evaluator
from aieval.runner._result import RunResult
from aieval.runner._spec import RunSpec
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

_DEFAULT_CONCURRENCY = 16


def run(
    *,
    name: str,
    dataset: Any,
    scorers: Sequence[Scorer | Callable[..., Any] | str | dict[str, Any]],
    provider: str | Provider | None = None,
    model: str | None = None,
    target: Callable[..., Any] | None = None,
    **options: Any,
) -> RunResult:
    """Evaluate ``dataset`` with ``scorers`` and return the run's result (sync wrapper).

    See :func:`run_async` for every option. Inside a running event loop (a notebook), the run
    executes on a helper thread so this call still blocks until it is done.

    Example:
        >>> from aieval.scorers import exact_match
        >>> result = run(name="doc", dataset=[{"prompt": "2+2?", "expected": "4",
        ...              "prediction": "4"}], scorers=[exact_match], store=False)
        >>> result.metrics
        {'exact_match': 1.0}
    """
    coro_args: dict[str, Any] = dict(
        name=name,
        dataset=dataset,
        scorers=scorers,
        provider=provider,
        model=model,
        target=target,
        **options,
    )
    return run_sync(run_async(**coro_args), thread_name="aieval-run")


async def run_async(
    *,
    name: str,
    dataset: Any,
    scorers: Sequence[Scorer | Callable[..., Any] | str | dict[str, Any]],
    provider: str | Provider | None = None,
    model: str | None = None,
    target: Callable[..., Any] | None = None,
    prompt_template: str | None = None,
    system_prompt: str | None = None,
    params: dict[str, Any] | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    concurrency: int = _DEFAULT_CONCURRENCY,
    retries: int = 3,
    timeout: float = 60.0,
    cache: bool = True,
    store: Store | str | Path | bool | None = True,
    resume: str | bool | None = None,
    limit: int | None = None,
    prediction_field: str | None = None,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
    progress: ProgressCallback | None = None,
    metadata: dict[str, Any] | None = None,
    workflow: Any = None,
    profile: Any = None,
    evaluator: str | None = None,
    grader: str | None = None,
    telemetry: bool | None = None,
    tracer_provider: Any = None,
    enforce_hard_gates: bool = True,
    run_id: str | None = None,
    max_error_rate: float = 0.0,
    executor: str | Executor = "local",
    ray_address: str | None = None,
    prices: Mapping[str, ModelPrice | Mapping[str, float]] | None = None,
    epochs: int = 1,
    min_pass_rate: float | None = None,
    min_scores: Mapping[str, float] | None = None,
) -> RunResult:
    """Evaluate ``dataset`` with ``scorers``; every finished sample is committed to the store.

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
        prompt_template: ``str.format`` template over the row's fields (``{prompt}``...).
        system_prompt: a system message for provider targets.
        params: request parameters (``temperature``, ``max_tokens``, ``top_p``...).
        base_url: endpoint for ``openai-compatible`` providers.
        api_key_env: the name of the environment variable holding the provider's API key
            (read when the run starts; unset or empty is a ``ConfigError`` naming it). The
            name is stored with the run, never the key. Judges on the same provider and
            base URL use it too (see docs/judges.md).
        concurrency: samples in flight at once.
        retries: retries per model call on 429/5xx/timeouts.
        timeout: seconds per model call (or per callable-target call).
        cache: reuse deterministic (temperature 0) model answers from the response cache.
        store: ``True`` (``$AIEVAL_DB`` or ``./aieval.db``), a path, a :class:`Store`, or
            ``False``/``None`` to keep results in memory only (the run then writes no file: its
            target's and judges' response caches are in memory too).
        resume: a run id, or ``True`` for the latest unfinished run named ``name``: its stored
            samples are kept and only the missing ones run.
        limit: evaluate only the first ``limit`` rows.
        prediction_field: dotted path of the recorded prediction in each row.
        pass_threshold: a sample passes when it has no error and every score is >= this.
        progress: called with ``(done, total)`` after every sample.
        metadata: free-form run metadata, stored with the run config.
        workflow: a workflow definition (file, mapping or object); each sample's output (the
            target's :class:`~aieval.workflows.WorkflowRun` or the recorded run) is graded
            with :func:`~aieval.workflows.evaluate_run` into the sample's ``verdict`` (its
            ``workflow`` detail), and the grade decides ``passed``. A dataset missing a
            required input is refused before any sample runs. A folder of run logs is a valid
            ``dataset``.
        profile: the scoring profile for workflow runs (overrides the definition's).
        evaluator: the ``aieval.evaluators`` plugin that grades each sample (default:
            ``traces`` for trace data, else ``workflow`` when ``workflow``/``profile``/a
            folder of run logs is given); see
            docs/workflows.md for writing one.
        grader: the ``aieval.graders`` plugin deciding each sample's
            :class:`~aieval.core.Verdict` (default: the evaluator's own grader, else
            ``threshold``: every score at least ``pass_threshold``).
        telemetry: emit OpenTelemetry spans (run, sample, model calls) as samples finish;
            ``None`` follows ``$AIEVAL_OTEL``. Needs the ``otel`` extra.
        tracer_provider: the OpenTelemetry tracer provider to use instead of the global one;
            giving one turns telemetry on unless ``telemetry=False``.
        enforce_hard_gates: with ``False``, workflow runs' gates are evaluated and reported
            but a failed gate no longer forces grade F (the payload says
            ``hard_gates_enforced: false``).
        run_id: the id to give a new run (default: a fresh one); the server assigns ids
            before a run starts so clients can follow it at once.
        max_error_rate: the share of samples that may error (target or scorer) while the run
            still counts as :attr:`~RunResult.ok`; ``0`` (the default) tolerates none. The
            run evaluates every sample either way; ``aieval run`` exits 3 when it is exceeded.
        executor: where samples run: ``"local"`` (this process's event loop, at most
            ``concurrency`` in flight), ``"ray"`` (batches on Ray workers, extra ``ray``; see
            docs/distributed.md), or an :class:`~aieval.runner.Executor` such as a configured
            :class:`~aieval.runner.RayExecutor`. This process stores every sample either way.
        ray_address: the Ray cluster for ``executor="ray"``: ``"host:port"``,
            ``"ray://host:10001"``, ``"auto"`` or ``"local"``; unset: ``$RAY_ADDRESS``, else a
            cluster ``ray start`` runs on this machine, else a local Ray for the run.
        prices: ``{model: ModelPrice or {"input_per_mtok": ..., "output_per_mtok": ...}}``,
            USD per million tokens, pricing the calls whose provider reports no cost; a call
            to an unlisted model has an unknown cost (``None``), never 0.
        epochs: answer (and score) each example this many times: its samples are stored as
            ``<id>#1`` ... ``<id>#N`` and the summary adds pass@k, pass^k and, for judges, the
            share of the variance from the answers and from the judge (``summary.epochs``;
            docs/grading.md). The target's response cache never answers one epoch with
            another's answer. Needs a target: recorded predictions would repeat unchanged.
        min_pass_rate: the least pass rate the run must reach; below it (or with nothing
            passed or scored) :attr:`~RunResult.missed_minimums` lists it and ``aieval run``
            exits 4.
        min_scores: ``{scorer name: least mean score}`` (0..1), checked the same way; a scorer
            with no score at all misses its minimum. An unknown scorer name is a
            ``ConfigError``.

    Raises:
        ConfigError: an invalid option (named); with Ray, a part of the run its workers cannot
            rebuild (a scorer or target that has no import path and cannot be pickled, or
            pickles to more than 100 MiB; a provider object), or the ``ray`` extra missing
            (with the install command).
        DatasetError: the dataset has no rows (nothing would be evaluated).
        StoreError: a sample could not be stored (a full disk...): the run is stored as
            ``failed`` with this error, its summary counts the stored samples only, and
            ``resume=`` finishes it once the cause is fixed.
    """
    for key, value in (("concurrency", concurrency), ("max_error_rate", max_error_rate)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"run(): {key} must be a number, got {type(value).__name__}")
    if concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
    if not 0.0 <= max_error_rate <= 1.0:
        raise ConfigError(f"max_error_rate must be between 0 and 1, got {max_error_rate}")
    given, live = split_live(
        dataset=dataset,
        scorers=scorers,
        provider=provider,
        target=target,
        store=store,
        workflow=workflow,
        profile=profile,
        executor=executor,
        ray_address=ray_address,
        progress=progress,
        tracer_provider=tracer_provider,
    )
    target_spec = dict(
        provider=given.provider,
        model=model,
        function=given.function,
        prompt_template=prompt_template,
        system_prompt=system_prompt,
        params=params or {},
        base_url=base_url,
        api_key_env=api_key_env,
        retries=retries,
        timeout=timeout,
        cache=cache,
        prices=dict(prices or {}),
    )
    scoring = dict(
        scorers=given.scorers,
        pass_threshold=pass_threshold,
        max_error_rate=max_error_rate,
        workflow=given.workflow,
        profile=given.profile,
        evaluator=evaluator,
        grader=grader,
        enforce_hard_gates=enforce_hard_gates,
        min_pass_rate=min_pass_rate,
        min_scores=dict(min_scores or {}),
    )
    execution = dict(
        executor=given.executor,
        ray_address=given.ray_address,
        concurrency=concurrency,
        telemetry=telemetry,
    )
    spec = _spec(
        given,
        name=name,
        limit=limit,
        epochs=epochs,
        prediction_field=prediction_field,
        metadata=metadata or {},
        target=target_spec,
        scoring=scoring,
        execution=execution,
        storage=dict(store=given.store, resume=resume, run_id=run_id),
    )
    return await execute(spec, live)


def run_spec(
    spec: RunSpec,
    *,
    store: Store | None = None,
    progress: ProgressCallback | None = None,
    tracer_provider: Any = None,
    executor: Executor | None = None,
    observers: Sequence[RunObserver] = (),
) -> RunResult:
    """Run a :class:`RunSpec` (sync wrapper of :func:`run_spec_async`).

    Example:
        >>> spec = RunSpec(name="doc", dataset=[{"prompt": "2+2?", "expected": "4",
        ...                "prediction": "4"}], scorers=["exact_match"], store=False)
        >>> run_spec(spec).metrics
        {'exact_match': 1.0}
    """
    coro = run_spec_async(
        spec,
        store=store,
        progress=progress,
        tracer_provider=tracer_provider,
        executor=executor,
        observers=observers,
    )
    return run_sync(coro, thread_name="aieval-run")


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
) -> None:
    """Refuse, before anything runs or is stored, what :func:`run_async` would refuse at start.

    Resolves the scorers, the workflow and profile, reads the dataset once, checks it against
    the workflow's required inputs, and checks there is something to evaluate.

    Raises:
        ConfigError: unknown scorer, nothing to evaluate; :class:`IncompatibleDatasetError`
            (a ConfigError) lists the missing workflow inputs.
        DatasetError, WorkflowError, RubricError: unreadable dataset, workflow or profile.
    """
    given, live = split_live(dataset=dataset, scorers=scorers, workflow=workflow, profile=profile)
    spec = _spec(
        given,
        name="check",
        limit=limit,
        prediction_field=prediction_field,
        target=dict(model=model),
        scoring=dict(
            scorers=given.scorers,
            workflow=given.workflow,
            profile=given.profile,
            evaluator=evaluator,
        ),
    )
    parts = resolve_parts(spec, live)
    grader = run_evaluator(spec, parts)
    _, info = open_data(parts.dataset, spec, grader)
    check_something_scored(parts.scorers, grader, info)
    if not has_target and grader is None and info.with_prediction == 0 and info.count > 0:
        hint = f" (no row has predictions[{model!r}])" if model is not None else ""
        raise ConfigError(
            "nothing to evaluate: no target was given and the rows carry no recorded "
            f"'prediction'{hint}; add a target, or a prediction to each row"
        )


def _spec(given: Described, **fields: Any) -> RunSpec:
    """The spec of ``run()``'s keywords, its sub-specs given as mappings, validated once (an
    invalid value is a :class:`ConfigError` naming ``sub_spec.field``)."""
    spec = RunSpec.parse({**fields, "dataset": ""}, source="run()")
    return spec.replace(dataset=given.dataset)
