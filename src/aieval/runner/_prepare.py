"""Everything a run needs before its first sample: data, store, scorers, target, run row."""

from __future__ import annotations

import logging
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval._secrets import secret_values, secrets_of, without_secrets
from aieval.core import SettingChange
from aieval.datasets import Dataset, DatasetInfo, load_dataset
from aieval.errors import ConfigError, DatasetError
from aieval.runner._epochs import EpochTally
from aieval.runner._evaluator import (
    EvaluatorRequest,
    SampleEvaluator,
    evaluator_for,
    evaluator_scorers,
)
from aieval.runner._inputs import LiveParts, RunParts, resolve_parts, stored_spec
from aieval.runner._minimums import check_minimum_names
from aieval.runner._provenance import run_provenance
from aieval.runner._references import import_reference
from aieval.runner._result import Aggregator
from aieval.runner._resume import config_changes, executed_config, execution_changes
from aieval.runner._spec import RunSpec
from aieval.runner._target import CallableTarget, ProviderTarget, RecordedTarget, Target
from aieval.scorers import Scorer, judge_secrets
from aieval.store import MEMORY, Store, StoreLocation, default_location

__all__ = [
    "Prepared",
    "check_something_scored",
    "make_target",
    "open_data",
    "prepare",
    "run_evaluator",
    "start",
]

log = logging.getLogger("aieval")


@dataclass(slots=True)
class Prepared:
    """A run ready for its samples: what it reads, scores with, calls and writes to."""

    spec: RunSpec
    parts: RunParts
    data: Dataset
    info: DatasetInfo
    db: Store | None
    scorers: list[Scorer]
    target: Target
    evaluator: SampleEvaluator | None
    aggregator: Aggregator
    config: dict[str, Any]
    #: set by :func:`start`
    run_id: str = ""
    done_ids: set[str] = field(default_factory=set)
    #: set by :func:`start` for a resumed run: the execution settings it now runs with that
    #: differ from those it ran with before
    resumed: bool = False
    execution_changes: list[SettingChange] = field(default_factory=list)

    @property
    def secrets(self) -> frozenset[str]:
        """The credentials the target and the judges were configured with (never stored, by
        value)."""
        return target_secrets(self.target) | judge_secrets(self.scorers)

    @property
    def provider_name(self) -> str | None:
        """The provider's name when the target calls one, else ``None``."""
        return self.target.name if isinstance(self.target, ProviderTarget) else None


def prepare(spec: RunSpec, live: LiveParts) -> Prepared:
    """Check and open everything the run needs; :func:`start` then creates its run row.

    Refusals (an unknown scorer, an empty or incompatible dataset) come before the store is
    opened.
    """
    parts = resolve_parts(spec, live)
    evaluator = run_evaluator(spec, parts)
    scorers = [*parts.scorers, *evaluator_scorers(evaluator)]
    check_minimum_names(spec.scoring.min_scores, [s.name for s in scorers])
    if spec.epochs > 1:
        check_repeatable(spec, parts, evaluator)
    data, info = open_data(parts.dataset, spec, evaluator)
    check_something_scored(scorers, evaluator, info)
    db = open_store(parts.store)
    callable_named = spec.target.function is not None
    if (
        evaluator is not None
        and parts.target is None
        and parts.provider is None
        and not callable_named
    ):
        target = evaluator.wrap(None)
    else:
        target = build_target(spec, parts, data, info.with_prediction, db)
        if evaluator is not None:
            target = evaluator.wrap(target)
    names = [s.name for s in scorers]
    aggregator = evaluator.aggregator(names) if evaluator is not None else Aggregator(names)
    if spec.epochs > 1:
        aggregator.epochs = EpochTally(spec.epochs)
    config = run_config(spec, live, target, scorers, data, evaluator)
    return Prepared(spec, parts, data, info, db, scorers, target, evaluator, aggregator, config)


def check_something_scored(
    scorers: list[Scorer], evaluator: SampleEvaluator | None, info: DatasetInfo
) -> None:
    """Refuse a run where some row would be scored by nothing: no scorer, no evaluator, and a
    row without checks of its own (it would pass with nothing scored)."""
    if scorers or evaluator is not None or info.with_checks >= info.count:
        return
    unchecked = (
        f" ({info.count - info.with_checks} of {info.count} rows carry no checks of their own)"
        if info.with_checks
        else ""
    )
    raise ConfigError(
        "scorers: give at least one scorer (e.g. scorers=[exact_match]), or a "
        "workflow/profile to grade runs; a run with nothing to score would pass every sample"
        + unchecked
    )


def check_repeatable(
    spec: RunSpec, parts: RunParts, evaluator: SampleEvaluator | None = None
) -> None:
    """Refuse ``epochs > 1`` where nothing answers again: recorded predictions (or run logs)
    would repeat unchanged, each epoch a copy of the first. An evaluator with a target of its
    own (``own_target``: a conversation run's Python assistant) answers again."""
    answers = parts.target is not None or spec.target.function is not None
    answers = answers or bool(getattr(evaluator, "own_target", False))
    if not answers and parts.provider is None:
        raise ConfigError(
            "epochs: repeats need a target that answers again (a provider's model or a "
            "callable); this run evaluates recorded answers, which would repeat unchanged: "
            "remove epochs, or give a target"
        )


def start(prep: Prepared) -> None:
    """Create the run (or reopen the one to resume) and note the samples already stored."""
    prep.run_id, prep.done_ids, changes = start_or_resume(
        prep.db, prep.spec, prep.target, prep.data, prep.info, prep.config, prep.aggregator
    )
    prep.resumed = changes is not None
    prep.execution_changes = changes or []


def run_evaluator(spec: RunSpec, parts: RunParts) -> SampleEvaluator | None:
    """The run's per-sample evaluator (workflow grading...), or ``None``."""
    scoring = spec.scoring
    request = EvaluatorRequest(
        conversation=scoring.conversation,
        replay=scoring.replay,
        replay_mode=scoring.replay_mode,
        store=parts.store,
        limit=spec.limit,
        epochs=spec.epochs,
    )
    return evaluator_for(
        scoring.evaluator,
        parts.workflow,
        parts.profile,
        parts.dataset,
        scoring.enforce_hard_gates,
        request,
    )


def open_data(
    dataset: Any, spec: RunSpec, evaluator: SampleEvaluator | None
) -> tuple[Dataset, DatasetInfo]:
    """Open and scan the dataset; an evaluator may read it (a folder of run logs) and check it."""
    label = None
    if evaluator is not None:
        rows = evaluator.rows(dataset)
        label = str(dataset) if rows is not dataset else None
        dataset = rows
    data = load_dataset(
        dataset,
        prediction_field=spec.prediction_field,
        model=spec.target.model,
        limit=spec.limit,
        label=label,
    )
    info = data.scan()
    if info.count == 0:
        why = f" (limit={spec.limit})" if spec.limit is not None else ""
        raise DatasetError(
            f"the dataset has no rows{why}: nothing would be evaluated; add rows or raise the "
            "limit",
            source=data.source,
        )
    if evaluator is not None:
        evaluator.check(data)
    return data, info


def open_store(store: Store | str | bool | None) -> Store | None:
    """``True``: the default store; a path: that file; ``False``/``None``: in memory."""
    if store is None or store is False:
        return None
    if isinstance(store, Store):
        return store
    if store is True:
        return Store()
    return Store(store)


def build_target(
    spec: RunSpec, parts: RunParts, data: Dataset, with_prediction: int, db: Store | None
) -> Target:
    """The target: a callable, a provider's model, or the predictions recorded in the rows."""
    provider, model = parts.provider, spec.target.model
    callable_given = parts.target is not None or spec.target.function is not None
    if callable_given and provider is not None:
        raise ConfigError("give either target= or provider=, not both")
    nothing = provider is None and not callable_given
    if nothing and with_prediction == 0 and data.scan().count > 0:
        hint = f" (no row has predictions[{model!r}])" if model is not None else ""
        raise ConfigError(
            "nothing to evaluate: no provider or target was given and the rows carry no "
            f"recorded 'prediction'{hint}; pass provider= and model=, or target="
        )
    # a run that asked for no store writes no file: its response cache is in memory
    cache_path = db.location if db is not None else MEMORY
    return make_target(spec, cache_path, target=parts.target, provider=provider)


def make_target(
    spec: RunSpec,
    cache_path: str | Path | StoreLocation | None,
    *,
    target: Any = None,
    provider: Any = None,
) -> Target:
    """The spec's target (``target``/``provider``: objects given instead of the spec's own).

    ``cache_path``: the response cache's store (``None``: no cache; ``":memory:"``: a
    cache of this run only, in no file).
    """
    described = spec.target
    if target is None and described.function is not None:
        target = import_reference(described.function, "target")
    provider = provider if provider is not None else described.provider
    if described.api_key_env is not None and (target is not None or provider is None):
        raise ConfigError(
            "api_key_env names the key of a provider target; this run has "
            f"{'a callable target' if target is not None else 'no provider'}: remove api_key_env"
        )
    concurrency = spec.execution.concurrency
    if target is not None:
        if not callable(target):
            raise ConfigError(f"target must be callable, got {type(target).__name__}")
        return CallableTarget(
            target, concurrency=concurrency, timeout=described.timeout, model=described.model
        )
    if provider is None:
        return RecordedTarget()
    if described.model is None:
        raise ConfigError("provider= needs model=, e.g. model='gpt-4o-mini'")
    from aieval.providers import build_provider

    built = build_provider(
        provider,
        base_url=described.base_url,
        api_key_env=described.api_key_env,
        retries=described.retries,
        concurrency=concurrency,
        cache=described.cache and cache_path is not None,
        cache_path=cache_path if cache_path is not None else default_location(),
        timeout=described.timeout,
    )
    return ProviderTarget(
        built,
        described.model,
        template=described.prompt_template,
        system=described.system_prompt,
        params=described.params or None,
    )


def target_secrets(target: Target) -> frozenset[str]:
    """The credentials a provider target was configured with (never stored, by value)."""
    inner = getattr(target, "inner", target)  # an evaluator's wrapper holds the real one
    if not isinstance(inner, ProviderTarget):
        return frozenset()
    return secrets_of(inner.provider) | secret_values(inner.params)


def run_config(
    spec: RunSpec,
    live: LiveParts,
    target: Target,
    scorers: list[Scorer],
    data: Dataset,
    evaluator: SampleEvaluator | None,
) -> dict[str, Any]:
    """What the store records about how the run was configured, with its spec."""
    target_kind = type(target).__name__.removesuffix("Target").lower()
    config: dict[str, Any] = {
        "name": spec.name,
        "model": spec.target.model,
        "target": {"kind": target_kind, "name": target.name},
        "scorers": [{"name": s.name, "options": _stored_options(s), **s.grading} for s in scorers],
        "dataset": {"source": data.source, "name": data.name, "limit": spec.limit},
        "concurrency": spec.execution.concurrency,
        "retries": spec.target.retries,
        "cache": spec.target.cache,
        "pass_threshold": spec.scoring.pass_threshold,
        "epochs": spec.epochs,
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
    if spec.metadata:
        config["metadata"] = spec.metadata
    if evaluator is not None:
        # where its description is stored: "workflow" (what reports read as a workflow run's)
        # unless the evaluator names its own key (the conversation evaluator: "conversation")
        config[getattr(evaluator, "config_key", "workflow")] = evaluator.describe()
    config["max_error_rate"] = spec.scoring.max_error_rate
    config.update(run_provenance(live.eval_file))
    stored, missing = stored_spec(spec, live.unspecified, target_secrets(target), data.source)
    config["spec"] = stored
    if missing:
        config["spec_incomplete"] = missing
    return config


def start_or_resume(
    db: Store | None,
    spec: RunSpec,
    target: Target,
    data: Dataset,
    info: DatasetInfo,
    config: dict[str, Any],
    aggregator: Aggregator,
) -> tuple[str, set[str], list[SettingChange] | None]:
    """Create the run, or reopen the one to resume: its id, the samples already stored and,
    for a resumed run, the execution settings it now uses that differ from its stored ones
    (``None`` for a new run)."""
    if db is None:
        if spec.storage.resume:
            raise ConfigError("resume= needs a store; remove store=False")
        return spec.storage.run_id or "memory-" + str(int(time.time() * 1000)), set(), None
    previous = None
    if isinstance(spec.storage.resume, str):
        previous = db.get_run(spec.storage.resume)
    elif spec.storage.resume is True:
        previous = db.latest_unfinished(spec.name, model=spec.target.model)
        if previous is None:
            # a resume that quietly started over would redo (and pay for) every sample
            model = f" with model {spec.target.model!r}" if spec.target.model is not None else ""
            raise ConfigError(
                f"nothing to resume: no unfinished run named {spec.name!r}{model} in "
                f"{db.location}; run without resume to start a new one"
            )
    if previous is None:
        run_id = db.create_run(
            name=spec.name,
            model=spec.target.model,
            provider=target.name if isinstance(target, ProviderTarget) else None,
            dataset=data.source,
            dataset_hash=info.version,
            n_examples=info.count,
            git_sha=_git_sha(),
            config=config,
            run_id=spec.storage.run_id,
        )
        return run_id, set(), None
    if previous.dataset_hash != info.version:
        raise ConfigError(
            f"cannot resume run {previous.id}: its dataset version {previous.dataset_hash} "
            f"differs from this dataset's {info.version}; start a new run instead"
        )
    if previous.status == "completed":
        raise ConfigError(f"run {previous.id} already completed; nothing to resume")
    # a live run ("running" as read: its process is alive) is refused by mark_running below
    changed = config_changes(previous.config, config) if previous.status != "running" else []
    if changed:
        raise ConfigError(
            f"cannot resume run {previous.id}: it was configured differently ("
            + "; ".join(changed)
            + "); its stored samples would mix with samples made another way. Resume with "
            "the same settings, or start a new run"
        )
    # how the samples run comes from this call, not the stored run: its concurrency, timeout,
    # retries..., which the store then records as the ones the run last used
    changes = execution_changes(previous.config, spec)
    if changes:
        log.info("resuming run %s with %s", previous.id, ", ".join(str(c) for c in changes))
    db.mark_running(previous.id, config=executed_config(previous.config, config))
    for sample in db.iter_samples(previous.id):
        aggregator.add(sample)
    return previous.id, db.completed_sample_ids(previous.id), changes


def _git_sha() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None


def _stored_options(item: Scorer) -> dict[str, str]:
    """A scorer's options as stored with the run; a judge adds what decides its verdicts
    (rubric digest, model, prompt version), which are not options of the decorated function."""
    options = {k: repr(v) for k, v in item.options.items()}
    identity = getattr(item.fn, "identity", None)
    if callable(identity):
        options.update({k: str(v) for k, v in identity().items()})
    return options
