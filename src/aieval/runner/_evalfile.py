"""Eval files: one validated schema for the CLI, ``run()`` and the server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from aieval._keys import pydantic_problems
from aieval._sync import run_sync
from aieval._usage_figures import ModelPrice
from aieval._yaml import load_yaml_file
from aieval.core import RunObserver
from aieval.datasets import load_dataset
from aieval.datasets._checks import CHECK_FIELDS
from aieval.errors import ConfigError, DatasetError
from aieval.runner._evalparts import DatasetConfig, TargetConfig, _Strict, _target_params
from aieval.runner._evaluator import evaluator_scorers
from aieval.runner._execute import execute
from aieval.runner._imports import import_file
from aieval.runner._inputs import LiveParts, ProgressCallback, resolve_parts
from aieval.runner._minimums import check_minimum_names
from aieval.runner._prepare import open_data, run_evaluator
from aieval.runner._provenance import EvalFileRef
from aieval.runner._references import resolve_scorers
from aieval.runner._result import RunResult
from aieval.runner._run import check_run
from aieval.runner._spec import ExecutionSpec, RunSpec, ScoringSpec, TargetSpec, spec_field
from aieval.runner._tracing import telemetry_from_env
from aieval.scorers import Scorer
from aieval.store import Store

__all__ = [
    "DatasetConfig",
    "EvalConfig",
    "EvalSettings",
    "ReplayConfig",
    "TargetConfig",
    "build_scorers",
    "check_eval",
    "load_eval",
    "parse_eval",
    "run_eval",
    "telemetry_requested",
]


class EvalSettings(_Strict):
    """An eval file's ``settings:``: run settings, each one the :class:`RunSpec` field of the
    same name (its type, default, bounds and checks: the spec's field is the one place they
    are written), with ``min`` for ``min_scores``."""

    concurrency: int = spec_field(ExecutionSpec, "concurrency")
    retries: int = spec_field(TargetSpec, "retries")
    cache: bool = spec_field(TargetSpec, "cache")
    timeout: float = spec_field(TargetSpec, "timeout")
    pass_threshold: float = spec_field(ScoringSpec, "pass_threshold")
    max_error_rate: float = spec_field(ScoringSpec, "max_error_rate")
    telemetry: bool | None = spec_field(ExecutionSpec, "telemetry")
    executor: Literal["local", "ray"] = spec_field(ExecutionSpec, "executor")
    ray_address: str | None = spec_field(ExecutionSpec, "ray_address")
    prices: dict[str, ModelPrice] = spec_field(TargetSpec, "prices")
    epochs: int = spec_field(RunSpec, "epochs")
    min_pass_rate: float | None = spec_field(ScoringSpec, "min_pass_rate")
    min: dict[str, float] = spec_field(ScoringSpec, "min_scores")

    @model_validator(mode="after")
    def _address_needs_ray(self) -> EvalSettings:
        if self.ray_address is not None and self.executor != "ray":
            raise ValueError("ray_address applies to executor: ray only; add executor: ray")
        return self

    def run_settings(self) -> dict[str, Any]:
        """The settings the file gives, by ``run()``'s keyword names (the rest: the spec's
        defaults)."""
        given = self.model_dump(exclude_unset=True)
        if "min" in given:
            given["min_scores"] = given.pop("min")
        return given


class ReplayConfig(_Strict):
    """An eval file's ``replay:``: the stored run whose conversations are replayed, or a
    records file (``*.jsonl``, relative to the eval file)."""

    run: str = Field(min_length=1)
    mode: Literal["strict", "all", "branch"] = "strict"


class EvalConfig(_Strict):
    """An evaluation: dataset, target (or recorded predictions), scorers and settings."""

    name: str = Field(min_length=1)
    dataset: str | DatasetConfig
    target: TargetConfig | None = None
    model: str | None = Field(
        None, description="recorded version to evaluate; with a target, the model it calls"
    )
    models: list[str] | None = Field(
        None, description="several recorded versions (or target models), one run each"
    )
    workflow: str | dict[str, Any] | None = spec_field(ScoringSpec, "workflow")
    profile: str | None = spec_field(ScoringSpec, "profile")
    grader: str | None = spec_field(ScoringSpec, "grader")
    # before scorers, whose validator reads them (a conversation run scores with its checks)
    conversation: dict[str, Any] | None = spec_field(ScoringSpec, "conversation")
    replay: ReplayConfig | None = Field(
        None,
        description="replay a stored run's conversations, or a records file's (RUN ending in "
        ".jsonl): {run: RUN, mode: strict}",
    )
    # before scorers, whose validator reads them (rows' checks may name imported scorers)
    imports: list[str] = spec_field(ScoringSpec, "imports")
    default_checks: list[str | dict[str, dict[str, Any]]] = Field(
        default_factory=list,
        description="checks applied to every row, beside the row's own (promptfoo's "
        "defaultTest.assert); entries as in scorers",
    )
    scorers: list[str | dict[str, dict[str, Any]]] = Field(
        default_factory=list, validate_default=True
    )
    settings: EvalSettings = Field(default_factory=EvalSettings)
    enforce_hard_gates: bool = spec_field(ScoringSpec, "enforce_hard_gates")
    base_dir: str | None = Field(None, exclude=True)
    # the file this configuration was read from (path and digest), recorded with its runs
    _source: EvalFileRef | None = PrivateAttr(None)

    @property
    def source(self) -> EvalFileRef | None:
        """The eval file this configuration was read from (``None``: built in Python)."""
        return self._source

    @field_validator("scorers", "default_checks")
    @classmethod
    def _one_key_each(cls, value: list[Any], info: ValidationInfo) -> list[Any]:
        if info.field_name == "scorers" and not value:
            _something_scored(info.data, (info.context or {}).get("base_dir"))
        for i, item in enumerate(value):
            if isinstance(item, dict) and len(item) != 1:
                raise ValueError(
                    f"{info.field_name}[{i}] must be a name or a one-key mapping name: {{...}}"
                )
        return value

    @model_validator(mode="after")
    def _one_choice_of_answers(self) -> EvalConfig:
        """Settings that would each pick the evaluated answers are given once, never both."""
        if self.model is not None and self.models:
            raise ValueError("give 'model' or 'models', not both ('model' would be ignored)")
        field = None if isinstance(self.dataset, str) else self.dataset.prediction_field
        if field is not None and self.target is None and (self.model or self.models):
            raise ValueError(
                f"dataset.prediction_field ({field!r}) already picks the recorded answers; "
                "'model'/'models' would only relabel them: remove one"
            )
        return self

    def specs(
        self, *, store: str | bool | None = True, models: list[str] | None = None, **overrides: Any
    ) -> list[RunSpec]:
        """One :class:`RunSpec` per run this configuration makes (one per model).

        ``overrides`` are ``run()`` keywords applied with :meth:`RunSpec.replace` over the
        file's settings, as ``aieval run``'s options are (``None``: the file's); choosing an
        executor other than Ray leaves the file's ``ray_address`` aside. Paths become relative
        to the working directory, and ``imports`` absolute.

        Raises:
            ConfigError: ``run_id`` with more than one run, a dataset with both or neither of
                ``path`` and ``rows``, or an invalid value (named).
        """
        dataset, dataset_limit, prediction_field = _dataset(self)
        targets = _models(self, models)
        if models and prediction_field is not None and self.target is None:
            raise ConfigError(
                f"--model would only relabel the answers dataset.prediction_field "
                f"({prediction_field!r}) already picks: remove one"
            )
        given = {key: value for key, value in overrides.items() if value is not None}
        _check_replay(self, given)
        if "run_id" in given and len(targets) != 1:
            raise ConfigError(f"run_id= needs one run, but this configuration makes {len(targets)}")
        if given.get("executor", "ray") != "ray":
            given.setdefault("ray_address", None)
        base = Path(self.base_dir or ".")
        common: dict[str, Any] = dict(
            self.settings.run_settings(),
            name=self.name,
            dataset=str(dataset) if isinstance(dataset, Path) else dataset,
            limit=dataset_limit,
            prediction_field=prediction_field,
            scorers=[*self.scorers, *self.default_checks],
            imports=[os.path.abspath(_resolve(base, item)) for item in self.imports],
            workflow=_workflow(self),
            profile=_local(self, self.profile),
            grader=self.grader,
            enforce_hard_gates=self.enforce_hard_gates,
            store=store,
        )
        if self.conversation is not None:
            common["conversation"] = _python_files(self.conversation, base)
        if self.replay is not None:
            common.update(replay=_replayed(base, self.replay.run), replay_mode=self.replay.mode)
        if self.target is not None:
            t = self.target
            common.update(
                provider=t.provider,
                base_url=t.base_url,
                api_key_env=t.api_key_env,
                prompt_template=t.prompt,
                system_prompt=t.system,
                params=_target_params(t),
            )
        where = f"{self.source.path if self.source is not None else self.name}: options over its"
        specs = []
        for model in targets:
            spec = RunSpec.parse({**common, "model": model}, source=self.name)
            specs.append(spec.replace(f"{where} settings", **given) if given else spec)
        return specs


def load_eval(path: str | Path) -> EvalConfig:
    """Read an eval file (YAML, or a Python file defining ``EVAL``) and validate it."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{file}: eval file not found")
    python = file.suffix == ".py"
    data = _python_eval(file) if python else load_yaml_file(file, error=ConfigError)
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: an eval file must be a mapping with name, dataset, scorers")
    config = parse_eval(data, source=str(file), base_dir=file.parent)
    try:
        config._source = EvalFileRef.of(file, file.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the eval file: {exc}") from exc
    return config


def parse_eval(
    data: dict[str, Any], *, source: str = "<eval>", base_dir: Path | None = None
) -> EvalConfig:
    """Validate an eval configuration dict; errors name the source and each bad field."""
    if data.get("task") == "code":
        # Code evaluations have their own file format and command (aieval.code).
        raise ConfigError(f"{source}: a 'task: code' eval file runs with: aieval code {source}")
    try:
        config = EvalConfig.model_validate(data, context={"base_dir": base_dir})
    except ValidationError as exc:
        problems = "; ".join(pydantic_problems(exc.errors(), EvalConfig))
        raise ConfigError(f"{source}: {problems}") from None
    if base_dir is not None:
        config.base_dir = str(base_dir)
    return config


def build_scorers(config: EvalConfig) -> list[Scorer]:
    """Import the config's scorer files and resolve each scorer entry (see
    :func:`~aieval.runner._spec.resolve_scorers`, the one resolution of scorer entries)."""
    base = Path(config.base_dir or ".")
    for item in config.imports:
        import_file(base / item)
    return resolve_scorers([*config.scorers, *config.default_checks])


def check_eval(config: EvalConfig) -> None:
    """Refuse a configuration before it runs: scorers, dataset, workflow, profile, and the
    dataset's compatibility with the workflow (see :func:`~aieval.runner.check_run`)."""
    with naming_the_file(config):
        _check_eval(config)


def _check_eval(config: EvalConfig) -> None:
    if config.conversation is not None or config.replay is not None:
        # the conversation evaluator reads its scenario file itself: checked by prepare()
        for spec in config.specs(store=False):
            _check_conversation(spec)
        return
    scorers = build_scorers(config)
    check_minimum_names(config.settings.min, [s.name for s in scorers])
    dataset, limit, prediction_field = _dataset(config)
    for model in _models(config):
        check_run(
            dataset=dataset,
            scorers=scorers,
            has_target=config.target is not None,
            model=model,
            limit=limit,
            prediction_field=prediction_field,
            workflow=_workflow(config),
            profile=_local(config, config.profile),
            grader=config.grader,
        )


def _check_conversation(spec: RunSpec) -> None:
    """What :func:`prepare` refuses of a conversation run, before anything runs."""
    parts = resolve_parts(spec, LiveParts())
    evaluator = run_evaluator(spec, parts)
    names = [s.name for s in [*parts.scorers, *evaluator_scorers(evaluator)]]
    check_minimum_names(spec.scoring.min_scores, names)
    open_data(parts.dataset, spec, evaluator)


def run_eval(
    config: EvalConfig,
    *,
    store: Store | str | Path | bool | None = True,
    models: list[str] | None = None,
    progress: Callable[[str], ProgressCallback | None] | None = None,
    tracer_provider: Any = None,
    observers: Sequence[RunObserver] = (),
    **overrides: Any,
) -> list[RunResult]:
    """Run an eval configuration: one run per recorded model version (or one for the target).

    Each run is one of :meth:`EvalConfig.specs`, with ``overrides`` (``run()`` keywords such
    as ``resume``, ``limit``, ``concurrency``, ``run_id``, ``max_error_rate``, ``executor``,
    ``ray_address``, ``epochs``, ``min_pass_rate``; ``None``: the file's) over the file's
    settings. ``tracer_provider`` is used when the settings (or ``$AIEVAL_OTEL``) turn
    telemetry on. ``run_id`` names the new run; it needs a configuration that makes exactly
    one run. ``observers`` (each a :class:`~aieval.core.RunObserver`) see every run start,
    each stored sample and its end.
    """
    db = store if isinstance(store, Store) else None
    where = str(store.location) if isinstance(store, Store) else store
    results = []
    with naming_the_file(config):
        specs = config.specs(
            store=str(where) if isinstance(where, Path) else where, models=models, **overrides
        )
        for spec in specs:
            live = LiveParts(
                store=db,
                progress=progress(spec.target.model or config.name) if progress else None,
                tracer_provider=tracer_provider,
                observers=tuple(observers),
                eval_file=config.source,
            )
            results.append(run_sync(execute(spec, live), thread_name="aieval-run"))
    return results


@contextmanager
def naming_the_file(config: EvalConfig) -> Iterator[None]:
    """A :class:`ConfigError` raised inside names the eval file first (``eval.yaml: unknown
    scorer ...``), unless it already does: which file to fix is half of what to fix."""
    try:
        yield
    except ConfigError as exc:
        path = config.source.path if config.source is not None else None
        message = exc.args[0] if exc.args else None
        if path and isinstance(message, str) and not message.startswith(f"{path}:"):
            exc.args = (f"{path}: {message}", *exc.args[1:])
        raise


def telemetry_requested(config: EvalConfig) -> bool:
    """Whether running ``config`` emits spans: its ``settings.telemetry``, else ``$AIEVAL_OTEL``."""
    setting = config.settings.telemetry
    return telemetry_from_env() if setting is None else setting


def _something_scored(data: dict[str, Any], base_dir: Path | None) -> None:
    """Refuse empty ``scorers`` unless something else scores each row: default checks, a
    workflow or profile, or the rows' own checks (a dataset file is read to look for them)."""
    if data.get("default_checks") or data.get("workflow") or data.get("profile") is not None:
        return
    if data.get("conversation") is not None or data.get("replay") is not None:
        return  # the conversation evaluator scores each scenario with its checks
    dataset = data.get("dataset")
    why = ""
    if isinstance(dataset, DatasetConfig) and dataset.rows is not None:
        rows = dataset.rows
        if rows and all(any(r.get(k) for k in CHECK_FIELDS) for r in rows):
            return
    elif isinstance(dataset, str | DatasetConfig):
        path = dataset if isinstance(dataset, str) else dataset.path
        imports = data.get("imports")
        try:
            # rows' checks may name scorers of the eval's own files: import those first
            for item in imports if isinstance(imports, list) else []:
                import_file(_resolve(base_dir or Path("."), str(item)))
            info = load_dataset(_resolve(base_dir or Path("."), path or "")).scan()
        except DatasetError as exc:
            if exc.line is not None:
                raise  # a row's own fault (a bad check): the one cause to report
            why = f"; the dataset could not be read to look for rows' checks: {exc}"
        except ConfigError as exc:
            why = f"; the dataset could not be read to look for rows' checks: {exc}"
        else:
            if info.count and info.with_checks == info.count:
                return
    raise ValueError(
        "give at least one scorer, or a workflow/profile to grade runs (or checks on every "
        f"dataset row){why}"
    )


def _models(config: EvalConfig, models: list[str] | None = None) -> list[str | None]:
    """The models to run, one run each: ``models`` (``--model``), else the file's ``models`` or
    ``model``; with a target these are the models it calls (default: ``target.model``), without
    one they pick recorded versions."""
    chosen: list[str | None] = list(models or config.models or [])
    if not chosen and config.model is not None:
        chosen = [config.model]
    if config.target is not None:
        return chosen or [config.target.model]
    return chosen or [None]


def _dataset(config: EvalConfig) -> tuple[Any, int | None, str | None]:
    base = Path(config.base_dir or ".")
    spec = config.dataset
    if isinstance(spec, str):
        return _resolve(base, spec), None, None
    if (spec.path is None) == (spec.rows is None):
        raise ConfigError("dataset: give exactly one of 'path' or 'rows'")
    source: Any = spec.rows if spec.rows is not None else _resolve(base, spec.path or "")
    return source, spec.limit, spec.prediction_field


def _workflow(config: EvalConfig) -> Any:
    if isinstance(config.workflow, dict):
        return config.workflow
    return _local(config, config.workflow)


def _local(config: EvalConfig, value: str | None) -> str | None:
    """A file reference relative to the eval file; ids and family names stay as they are."""
    if value is None or not value.endswith((".yaml", ".yml", ".json")):
        return value
    return str(_resolve(Path(config.base_dir or "."), value))


def _check_replay(config: EvalConfig, given: dict[str, Any]) -> None:
    """A replay over an eval that plays no conversations is refused, never read as one whose
    rows would be scenarios (nor a replay mode ignored without a replay)."""
    file = config.source.path if config.source is not None else config.name
    if "replay" in given and config.conversation is None and config.replay is None:
        raise ConfigError(
            f"{file}: --replay applies to conversation evals, and this one has no "
            "`conversation:` key (its rows are not scenarios): add `conversation:` to play them "
            "as scenarios, or run without --replay"
        )
    if "replay_mode" in given and "replay" not in given and config.replay is None:
        raise ConfigError(
            f"{file}: --replay-mode applies to a replay: give the run to replay (--replay RUN, "
            "or replay: in the eval file)"
        )


#: the ``conversation:`` keys (and ``user:``'s) that name the author's Python
_REFERENCES = ("target", "tools", "goal_checks", "turn_checks", "conversation_checks", "state")


def _python_files(conversation: dict[str, Any], base: Path) -> dict[str, Any]:
    """``conversation:`` with each ``file.py:name`` reference's file relative to the eval
    file's folder (as ``imports:`` are); ``module:name`` references stay as written."""
    found = dict(conversation)
    for key in _REFERENCES:
        found[key] = _python_file(found.get(key), base)
    user = found.get("user")
    if isinstance(user, dict) and "python" in user:
        found["user"] = {**user, "python": _python_file(user["python"], base)}
    return {key: value for key, value in found.items() if key in conversation}


def _python_file(ref: Any, base: Path) -> Any:
    if not isinstance(ref, str):
        return ref
    path, sep, name = ref.rpartition(":")
    if not sep or not path.endswith(".py"):
        return ref
    return f"{os.path.abspath(_resolve(base, path))}:{name}"


def _replayed(base: Path, run: str) -> str:
    """A ``replay.run`` as the run reads it: a records file (``*.jsonl``, the suffix
    ``aieval.conversations`` reads as one) by its path from the eval file's folder; a stored
    run's id or reference as written."""
    if not run.lower().endswith(".jsonl"):
        return run
    return os.path.abspath(_resolve(base, run))


def _resolve(base: Path, path: str) -> Path:
    candidate = Path(path)
    return candidate if candidate.is_absolute() else base / candidate


def _python_eval(file: Path) -> Any:
    module = import_file(file)
    data = getattr(module, "EVAL", None)
    if data is None:
        raise ConfigError(f"{file}: a Python eval file must define EVAL = {{...}}")
    if isinstance(data, EvalConfig):
        return data.model_dump(exclude_none=True)
    return data
