"""``run()``: evaluate a target on a dataset with scorers, storing every sample as it finishes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aieval._calls import collect_calls
from aieval._endpoint import RunEndpoint, enter_endpoint, leave_endpoint
from aieval._records import SampleRecord, ScoreRecord, redact_record
from aieval._secrets import redact_text, secret_values, secrets_of, without_secrets
from aieval._sync import run_sync
from aieval._types import Example
from aieval.datasets import Dataset, DatasetInfo, load_dataset
from aieval.errors import ConfigError, DatasetError, ScorerError, StoreError
from aieval.providers import Provider
from aieval.runner._result import Aggregator, RunResult
from aieval.runner._target import (
    CallableTarget,
    Output,
    ProviderTarget,
    RecordedTarget,
    Target,
    Usage,
)
from aieval.runner._writer import SampleWriter, heartbeat, stop_heartbeat
from aieval.scorers import Scorer, get_scorer
from aieval.store import Store, default_db_path

if TYPE_CHECKING:
    from aieval.telemetry._attributes import RunHeader
    from aieval.telemetry._spans import RunSpans
    from aieval.workflows._runner import WorkflowMode

__all__ = ["ProgressCallback", "check_run", "run", "run_async"]

log = logging.getLogger("aieval")

#: Called after each sample with (samples done, total samples).
ProgressCallback = Callable[[int, int], None]

#: Grades one sample's workflow run: (example, output, scores) -> entries for the sample's
#: ``extra``: ``evaluation`` (the payload whose ``passed`` decides the sample) and more.
Evaluator = Callable[[Example, Output, dict[str, ScoreRecord]], dict[str, Any]]

_DEFAULT_CONCURRENCY = 16


def run(
    *,
    name: str,
    dataset: Any,
    scorers: Sequence[Scorer | Callable[..., Any] | str],
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
    scorers: Sequence[Scorer | Callable[..., Any] | str],
    provider: str | Provider | None = None,
    model: str | None = None,
    target: Callable[..., Any] | None = None,
    prompt_template: str | None = None,
    system_prompt: str | None = None,
    params: dict[str, Any] | None = None,
    base_url: str | None = None,
    concurrency: int = _DEFAULT_CONCURRENCY,
    retries: int = 3,
    timeout: float = 60.0,
    cache: bool = True,
    store: Store | str | Path | bool | None = True,
    resume: str | bool | None = None,
    limit: int | None = None,
    prediction_field: str | None = None,
    pass_threshold: float = 0.5,
    progress: ProgressCallback | None = None,
    metadata: dict[str, Any] | None = None,
    workflow: Any = None,
    profile: Any = None,
    telemetry: bool | None = None,
    tracer_provider: Any = None,
    enforce_hard_gates: bool = True,
    run_id: str | None = None,
    max_error_rate: float = 0.0,
) -> RunResult:
    """Evaluate ``dataset`` with ``scorers``; every finished sample is committed to the store.

    Args:
        name: the run name (runs of one name form a history; ``resume=True`` uses it).
        dataset: rows (list of dicts), a .jsonl/.json/.csv path, or a ``datasets.Dataset``.
        scorers: :class:`Scorer` objects, plain functions, or registered scorer names.
        provider: a provider name or preset (``openai``, ``sarmalink``, ``vllm``, ``ollama``,
            ``openai-compatible``) or a :class:`Provider`; omit it for recorded predictions.
        model: the model to call; with recorded ``predictions: {model: text}`` it picks the
            version to evaluate.
        target: a sync or async callable taking an :class:`Example`, instead of a provider.
        prompt_template: ``str.format`` template over the row's fields (``{prompt}``...).
        system_prompt: a system message for provider targets.
        params: request parameters (``temperature``, ``max_tokens``, ``top_p``...).
        base_url: endpoint for ``openai-compatible`` providers.
        concurrency: samples in flight at once.
        retries: retries per model call on 429/5xx/timeouts.
        timeout: seconds per model call (or per callable-target call).
        cache: reuse deterministic (temperature 0) model answers from the response cache.
        store: ``True`` (``$AIEVAL_DB`` or ``./aieval.db``), a path, a :class:`Store`, or
            ``False``/``None`` to keep results in memory only.
        resume: a run id, or ``True`` for the latest unfinished run named ``name``: its stored
            samples are kept and only the missing ones run.
        limit: evaluate only the first ``limit`` rows.
        prediction_field: dotted path of the recorded prediction in each row.
        pass_threshold: a sample passes when it has no error and every score is >= this.
        progress: called with ``(done, total)`` after every sample.
        metadata: free-form run metadata, stored with the run config.
        workflow: a workflow definition (file, mapping or object); each sample's output (the
            target's :class:`~aieval.workflows.WorkflowRun` or the recorded run) is graded
            with :func:`~aieval.workflows.evaluate_run`, stored in ``extra["evaluation"]``,
            and the grade decides ``passed``. A dataset missing a required input is refused
            before any sample runs. A folder of run logs is a valid ``dataset``.
        profile: the scoring profile for workflow runs (overrides the definition's).
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

    Raises:
        DatasetError: the dataset has no rows (nothing would be evaluated).
        StoreError: a sample could not be stored (a full disk...): the run is stored as
            ``failed`` with this error, its summary counts the stored samples only, and
            ``resume=`` finishes it once the cause is fixed.
    """
    started = time.perf_counter()
    started_wall = time.time()
    if concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
    if not 0.0 <= max_error_rate <= 1.0:
        raise ConfigError(f"max_error_rate must be between 0 and 1, got {max_error_rate}")
    traced = _telemetry_wanted(telemetry, tracer_provider)
    if traced:
        from aieval.telemetry._spans import require_otel

        require_otel()
    resolved = _resolve_scorers(scorers)
    flow = _workflow_mode(workflow, profile, dataset, enforce_hard_gates)
    data, info = _open_data(dataset, flow, prediction_field, model, limit)
    db = _open_store(store)
    if flow is not None and target is None and provider is None:
        the_target: Target = flow.wrap(None)
    else:
        the_target = _build_target(
            data,
            info.with_prediction,
            provider,
            model,
            target,
            prompt_template,
            system_prompt,
            params,
            base_url,
            concurrency,
            retries,
            timeout,
            cache,
            db,
        )
        if flow is not None:
            the_target = flow.wrap(the_target)
    config = _config(
        name,
        model,
        the_target,
        resolved,
        data,
        concurrency,
        retries,
        cache,
        limit,
        pass_threshold,
        metadata,
    )
    names = [s.name for s in resolved]
    if flow is not None:
        config["workflow"] = flow.describe()
    config["max_error_rate"] = max_error_rate
    aggregator = flow.aggregator(names) if flow is not None else Aggregator(names)
    run_id, done_ids = _start_or_resume(
        db, resume, name, model, the_target, data, info, config, aggregator, run_id
    )
    kept: list[SampleRecord] | None = [] if db is None else None
    spans = None
    if traced:
        header = _header(db, run_id, name, model, the_target, data, info)
        spans = _open_spans(db, header, started_wall, tracer_provider)
    status, error = "completed", None
    endpoint = enter_endpoint(_endpoint_of(provider, base_url, db))
    try:
        await _execute(
            data,
            done_ids,
            info.count,
            resolved,
            the_target,
            model,
            concurrency,
            pass_threshold,
            db,
            run_id,
            aggregator,
            kept,
            progress,
            flow.sample_extra if flow is not None else None,
            spans,
        )
    except (asyncio.CancelledError, KeyboardInterrupt):
        status, error = "interrupted", "interrupted before every sample finished"
        raise
    except BaseException as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    finally:
        leave_endpoint(endpoint)
        await _close(the_target, resolved)
        summary = aggregator.summary()
        if db is not None:
            error = redact_text(error, _target_secrets(the_target)) if error else error
            _finish(db, run_id, status, summary, error)
        if spans is not None:
            spans.finish(status, summary, error)
    metrics = {k: v["mean"] for k, v in summary["scorers"].items()}
    return RunResult(
        id=run_id,
        name=name,
        status=status,
        model=model,
        provider=the_target.name if isinstance(the_target, ProviderTarget) else None,
        dataset_hash=info.version,
        metrics=metrics,
        pass_rate=summary["pass_rate"],
        summary=summary,
        duration_s=time.perf_counter() - started,
        max_error_rate=max_error_rate,
        _store=db,
        _samples=kept,
    )


def check_run(
    *,
    dataset: Any,
    scorers: Sequence[Scorer | Callable[..., Any] | str],
    has_target: bool,
    model: str | None = None,
    limit: int | None = None,
    prediction_field: str | None = None,
    workflow: Any = None,
    profile: Any = None,
) -> None:
    """Refuse, before anything runs or is stored, what :func:`run_async` would refuse at start.

    Resolves the scorers, the workflow and profile, reads the dataset once, checks it against
    the workflow's required inputs, and checks there is something to evaluate.

    Raises:
        ConfigError: unknown scorer, nothing to evaluate; :class:`IncompatibleDatasetError`
            (a ConfigError) lists the missing workflow inputs.
        DatasetError, WorkflowError, RubricError: unreadable dataset, workflow or profile.
    """
    _resolve_scorers(scorers)
    flow = _workflow_mode(workflow, profile, dataset)
    _, info = _open_data(dataset, flow, prediction_field, model, limit)
    if not has_target and flow is None and info.with_prediction == 0 and info.count > 0:
        hint = f" (no row has predictions[{model!r}])" if model is not None else ""
        raise ConfigError(
            "nothing to evaluate: no target was given and the rows carry no recorded "
            f"'prediction'{hint}; add a target, or a prediction to each row"
        )


def _open_data(
    dataset: Any,
    flow: WorkflowMode | None,
    prediction_field: str | None,
    model: str | None,
    limit: int | None,
) -> tuple[Dataset, DatasetInfo]:
    """Open and scan the dataset; for a workflow, read a folder of run logs and check inputs."""
    label = None
    if flow is not None:
        rows = flow.rows(dataset)
        label = str(dataset) if rows is not dataset else None
        dataset = rows
    data = load_dataset(
        dataset, prediction_field=prediction_field, model=model, limit=limit, label=label
    )
    info = data.scan()
    if info.count == 0:
        why = f" (limit={limit})" if limit is not None else ""
        raise DatasetError(
            f"the dataset has no rows{why}: nothing would be evaluated; add rows or raise the "
            "limit",
            source=data.source,
        )
    if flow is not None:
        flow.check(data)
    return data, info


async def _execute(
    data: Dataset,
    done_ids: set[str],
    total: int,
    scorers: list[Scorer],
    target: Target,
    model: str | None,
    concurrency: int,
    pass_threshold: float,
    db: Store | None,
    run_id: str,
    aggregator: Aggregator,
    kept: list[SampleRecord] | None,
    progress: ProgressCallback | None,
    evaluator: Evaluator | None = None,
    spans: RunSpans | None = None,
) -> None:
    queue: asyncio.Queue[tuple[int, Example] | None] = asyncio.Queue(maxsize=concurrency * 2)
    provider_name = target.name if isinstance(target, ProviderTarget) else None
    done = aggregator.count

    async def produce() -> None:
        for index, example in enumerate(data):
            if example.id not in done_ids:
                await queue.put((index, example))
        for _ in range(concurrency):
            await queue.put(None)

    def stored(record: SampleRecord) -> None:
        nonlocal done
        if kept is not None:
            kept.append(record)
        aggregator.add(record)
        if spans is not None:
            spans.sample(record, time.time())
        done += 1
        if progress is not None:
            progress(done, total)

    writer = SampleWriter(db, run_id, stored)
    secrets = _target_secrets(target)

    async def work() -> None:
        # the error check also ends a worker whose cancellation a finishing call swallowed
        while writer.error is None and (item := await queue.get()) is not None:
            index, example = item
            record = await _process(
                index, example, scorers, target, model, provider_name, pass_threshold, evaluator
            )
            redact_record(record, secrets)
            writer.add(record)

    beat = asyncio.create_task(heartbeat(db, run_id)) if db is not None else None
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(produce())]
            tasks += [group.create_task(work()) for _ in range(concurrency)]
            writer.stop_on_failure(tasks)
    finally:
        writer.flush()
        await stop_heartbeat(beat)
    writer.raise_if_failed()
    if kept is not None:
        kept.sort(key=lambda record: record.index)


def _finish(
    db: Store, run_id: str, status: str, summary: dict[str, Any], error: str | None
) -> None:
    """Store how the run ended; a failure to do so is loud unless the run already failed."""
    try:
        db.finish_run(run_id, status=status, metrics=summary, error=error)
    except StoreError:
        if status == "completed":
            raise
        # the run's own error is on its way up; the row stays "running" and, its process
        # gone, reads as interrupted, so --resume still finds it
        log.exception("cannot record that run %s ended (%s)", run_id, status)


def _target_secrets(target: Target) -> frozenset[str]:
    """The credentials a provider target was configured with (never stored, by value)."""
    if not isinstance(target, ProviderTarget):
        return frozenset()
    return secrets_of(target.provider) | secret_values(target.params)


async def _process(
    index: int,
    example: Example,
    scorers: list[Scorer],
    target: Target,
    model: str | None,
    provider_name: str | None,
    pass_threshold: float,
    evaluator: Evaluator | None = None,
) -> SampleRecord:
    calls = collect_calls()
    try:
        output = await target.produce(example)
    except Exception as exc:
        output = Output(None, error=f"{type(exc).__name__}: {exc}")
    calls[:0] = output.calls
    record = SampleRecord(
        id=example.id,
        index=index,
        input=example.input,
        expected=example.expected,
        prediction=output.text,
        metadata=example.metadata,
        error=output.error,
        latency_s=output.latency_s,
        calls=calls,
    )
    if output.error is None:
        context = {
            "example": example,
            "model": model,
            "provider": provider_name,
            "prompt": example.prompt,
            "output": output.value,
            "run": None,
        }
        record.scores = await _score_all(scorers, output.text, example.expected, context)
    _fill_usage(record, output.usage)
    record.passed = output.error is None and all(
        s.error is None and (s.value is None or s.value >= pass_threshold)
        for s in record.scores.values()
    )
    if evaluator is not None:
        record.extra.update(evaluator(example, output, record.scores))
        record.passed = bool(record.extra["evaluation"]["passed"])
    return record


async def _score_all(
    scorers: list[Scorer], prediction: Any, expected: Any, context: dict[str, Any]
) -> dict[str, ScoreRecord]:
    results: dict[str, ScoreRecord] = {}
    pending: list[tuple[str, asyncio.Task[ScoreRecord]]] = []
    for item in scorers:
        if item.is_async:
            pending.append(
                (item.name, asyncio.ensure_future(_score_one(item, prediction, expected, context)))
            )
        else:
            results[item.name] = await _score_one(item, prediction, expected, context)
    for scorer_name, task in pending:
        results[scorer_name] = await task
    return {s.name: results[s.name] for s in scorers}


async def _score_one(
    item: Scorer, prediction: Any, expected: Any, context: dict[str, Any]
) -> ScoreRecord:
    try:
        score = await item.score(prediction, expected, context)
    except ScorerError as exc:
        return ScoreRecord(None, error=str(exc))
    except SystemExit as exc:  # exit() in user code ends this score, not the run
        return ScoreRecord(None, error=f"scorer {item.name!r} called exit({exc.code!r})")
    return ScoreRecord(score.value, score.raw, score.reason, metadata=score.metadata)


def _fill_usage(record: SampleRecord, own: Usage | None) -> None:
    target_called = False
    for call in record.calls:
        record.retries += call.retries
        if call.purpose == "target":
            target_called = True
            record.cached = call.cached
            record.input_tokens = call.input_tokens
            record.output_tokens = call.output_tokens
    costs = [c.cost for c in record.calls if c.cost is not None]
    if own is not None and not target_called:
        record.input_tokens, record.output_tokens = own.input_tokens, own.output_tokens
        record.retries += own.retries
        if own.cost is not None:
            costs.append(own.cost)
    record.cost = sum(costs) if costs else None


def _resolve_scorers(scorers: Sequence[Scorer | Callable[..., Any] | str]) -> list[Scorer]:
    if isinstance(scorers, (str, Scorer)) or not isinstance(scorers, Iterable):
        raise ConfigError("scorers must be a list, e.g. scorers=[exact_match]")
    resolved: list[Scorer] = []
    for item in scorers:
        if isinstance(item, Scorer):
            resolved.append(item)
        elif isinstance(item, str):
            resolved.append(get_scorer(item))
        elif callable(item):
            resolved.append(Scorer(item))
        else:
            raise ConfigError(f"not a scorer: {item!r}")
    names = [s.name for s in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(
            f"two scorers share the name {', '.join(map(repr, duplicates))}; "
            "give one another name with @scorer(name=...) or .with_options(name=...)"
        )
    return resolved


def _workflow_mode(
    workflow: Any, profile: Any, dataset: Any, enforce_hard_gates: bool = True
) -> WorkflowMode | None:
    folder = isinstance(dataset, str | Path) and Path(dataset).is_dir()
    if workflow is None and profile is None and not folder:
        return None
    from aieval.workflows._runner import WorkflowMode

    return WorkflowMode(workflow, profile, enforce_hard_gates=enforce_hard_gates)


def _endpoint_of(provider: Any, base_url: str | None, db: Store | None) -> RunEndpoint:
    """What judges without their own endpoint inherit from this run."""
    name = provider if isinstance(provider, str) else None
    return RunEndpoint(name, base_url if name else None, str(db.path) if db else None)


def _telemetry_wanted(telemetry: bool | None, tracer_provider: Any) -> bool:
    if telemetry is not None:
        return telemetry
    if tracer_provider is not None:
        return True
    return telemetry_from_env()


def telemetry_from_env() -> bool:
    """Whether ``$AIEVAL_OTEL`` asks for spans (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get("AIEVAL_OTEL", "").strip().lower() in ("1", "true", "yes", "on")


def _header(
    db: Store | None,
    run_id: str,
    name: str,
    model: str | None,
    target: Target,
    data: Dataset,
    info: Any,
) -> RunHeader:
    from aieval.telemetry._attributes import RunHeader
    from aieval.telemetry._export import header_of

    if db is not None:
        # the stored header, so a live run and its replay (export_run) carry the same facts
        return header_of(db.get_run(run_id))
    provider = target.name if isinstance(target, ProviderTarget) else None
    return RunHeader(run_id, name, model, provider, data.source, info.version, info.count)


def _open_spans(
    db: Store | None, header: RunHeader, started_wall: float, tracer_provider: Any
) -> RunSpans:
    from aieval.telemetry._spans import RunSpans

    if db is not None:
        row = db.get_run(header.id)
        started_wall = row.started_at if row.started_at is not None else started_wall
    return RunSpans(header, started_wall, tracer_provider)


def _open_store(store: Store | str | Path | bool | None) -> Store | None:
    if store is None or store is False:
        return None
    if isinstance(store, Store):
        return store
    if store is True:
        return Store()
    return Store(store)


def _build_target(
    data: Dataset,
    with_prediction: int,
    provider: str | Provider | None,
    model: str | None,
    target: Callable[..., Any] | None,
    prompt_template: str | None,
    system_prompt: str | None,
    params: dict[str, Any] | None,
    base_url: str | None,
    concurrency: int,
    retries: int,
    timeout: float,
    cache: bool,
    db: Store | None,
) -> Target:
    if target is not None and provider is not None:
        raise ConfigError("give either target= or provider=, not both")
    if target is not None:
        if not callable(target):
            raise ConfigError(f"target must be callable, got {type(target).__name__}")
        return CallableTarget(target, concurrency=concurrency, timeout=timeout, model=model)
    if provider is None:
        if with_prediction == 0 and data.scan().count > 0:
            hint = f" (no row has predictions[{model!r}])" if model is not None else ""
            raise ConfigError(
                "nothing to evaluate: no provider or target was given and the rows carry no "
                f"recorded 'prediction'{hint}; pass provider= and model=, or target="
            )
        return RecordedTarget()
    if model is None:
        raise ConfigError("provider= needs model=, e.g. model='gpt-4o-mini'")
    from aieval.providers import build_provider

    built = build_provider(
        provider,
        base_url=base_url,
        retries=retries,
        concurrency=concurrency,
        cache=cache,
        cache_path=db.path if db is not None else default_db_path(),
        timeout=timeout,
    )
    return ProviderTarget(
        built, model, template=prompt_template, system=system_prompt, params=params
    )


def _config(
    name: str,
    model: str | None,
    target: Target,
    scorers: list[Scorer],
    data: Dataset,
    concurrency: int,
    retries: int,
    cache: bool,
    limit: int | None,
    pass_threshold: float,
    metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    target_kind = type(target).__name__.removesuffix("Target").lower()
    config: dict[str, Any] = {
        "name": name,
        "model": model,
        "target": {"kind": target_kind, "name": target.name},
        "scorers": [
            {"name": s.name, "options": {k: repr(v) for k, v in s.options.items()}} for s in scorers
        ],
        "dataset": {"source": data.source, "name": data.name, "limit": limit},
        "concurrency": concurrency,
        "retries": retries,
        "cache": cache,
        "pass_threshold": pass_threshold,
    }
    if isinstance(target, ProviderTarget):
        config["target"].update(
            model=target.model,
            template=target.template,
            # the store never holds credentials passed as request parameters
            params=without_secrets(
                {
                    "temperature": target.temperature,
                    "max_tokens": target.max_tokens,
                    **target.params,
                }
            ),
        )
    if metadata:
        config["metadata"] = metadata
    return config


def _start_or_resume(
    db: Store | None,
    resume: str | bool | None,
    name: str,
    model: str | None,
    target: Target,
    data: Dataset,
    info: Any,
    config: dict[str, Any],
    aggregator: Aggregator,
    new_id: str | None = None,
) -> tuple[str, set[str]]:
    if db is None:
        if resume:
            raise ConfigError("resume= needs a store; remove store=False")
        return new_id or "memory-" + str(int(time.time() * 1000)), set()
    previous = None
    if isinstance(resume, str):
        previous = db.get_run(resume)
    elif resume is True:
        previous = db.latest_unfinished(name, model=model)
        if previous is None:
            log.info("no unfinished run named %r to resume; starting a new one", name)
    if previous is None:
        run_id = db.create_run(
            name=name,
            model=model,
            provider=target.name if isinstance(target, ProviderTarget) else None,
            dataset=data.source,
            dataset_hash=info.version,
            n_examples=info.count,
            git_sha=_git_sha(),
            config=config,
            run_id=new_id,
        )
        return run_id, set()
    if previous.dataset_hash != info.version:
        raise ConfigError(
            f"cannot resume run {previous.id}: its dataset version {previous.dataset_hash} "
            f"differs from this dataset's {info.version}; start a new run instead"
        )
    if previous.status == "completed":
        raise ConfigError(f"run {previous.id} already completed; nothing to resume")
    db.mark_running(previous.id)
    for sample in db.iter_samples(previous.id):
        aggregator.add(sample)
    return previous.id, db.completed_sample_ids(previous.id)


async def _close(target: Target, scorers: list[Scorer]) -> None:
    with contextlib.suppress(Exception):
        await target.aclose()
    for item in scorers:
        closer = getattr(item.fn, "aclose", None)
        if closer is not None:
            with contextlib.suppress(Exception):
                await closer()


def _git_sha() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None
