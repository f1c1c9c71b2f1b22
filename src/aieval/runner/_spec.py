"""``RunSpec``: one validated, serialisable description of a run.

A spec holds everything :func:`~aieval.runner.run_async` takes that can be written down: it
round-trips through JSON, so a run can be described in a file, stored, sent to a worker or a
server, and resumed from the same object.

What a spec cannot carry, and how it refers to it instead:

- Python callables (a callable ``target``, a scorer object that is not registered under its
  name) are referenced by import path ``"package.module:qualname"`` and imported again when the
  spec is used; a lambda or a function defined inside another function has no such path and is
  refused with a :class:`~aieval.errors.ConfigError` naming the field. With
  ``executor="ray"`` the spec itself is what workers receive: each builds the target, the
  scorers and the evaluator from it (a scorer or target given to ``run()`` that has no
  import path travels beside the spec, pickled by value).
- Live objects: a :class:`~aieval.providers.Provider` instance, an open
  :class:`~aieval.store.Store`, a ``progress`` callback and an OpenTelemetry
  ``tracer_provider`` are given to ``run()`` beside the spec, never inside it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aieval._usage_figures import ModelPrice
from aieval.errors import ConfigError
from aieval.providers._credentials import check_env_name
from aieval.runner._shipping import brief
from aieval.scorers import Scorer, get_scorer

if TYPE_CHECKING:
    from aieval.store import RunRow

__all__ = [
    "RunSpec",
    "env_name",
    "import_reference",
    "is_builtin",
    "reference_of",
    "resolve_scorers",
]

#: ``run_async`` keyword arguments that are live objects, never part of a spec.
_RUNTIME_ONLY = ("progress", "tracer_provider")

ScorerEntry = str | dict[str, dict[str, Any]]


def env_name(value: str) -> str:
    """``value`` if it can name an environment variable (a ``ValueError`` for pydantic, which
    names the field, else); the value is never echoed, in case it is a key."""
    try:
        return check_env_name(value, "api_key_env")
    except ConfigError as exc:
        raise ValueError(str(exc).removeprefix("api_key_env ")) from None


def check_share(value: Any) -> Any:
    """A share (0..1) given as a number, checked with a message that says so: NaN fails every
    bound check, and "should be less than or equal to 1" says nothing about why."""
    number: Any = value
    if isinstance(value, str):  # "inf", ".5" from a command line or a quoted YAML value
        try:
            number = float(value)
        except ValueError:
            return value  # not a number at all: pydantic says so
    in_range = not isinstance(number, (int, float)) or 0.0 <= number <= 1.0
    if not in_range and not isinstance(number, bool):
        raise ValueError(f"must be a number between 0 and 1, got {value!r}")
    return value


class RunSpec(BaseModel):
    """Everything a run needs that can be serialised; unknown keys are refused.

    Example:
        >>> spec = RunSpec(name="qa", dataset="data/qa.jsonl", scorers=["exact_match"])
        >>> RunSpec.model_validate_json(spec.model_dump_json()) == spec
        True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="the run name; runs of one name form a history")
    dataset: str | list[dict[str, Any]] = Field(
        description="a .jsonl/.json/.csv path, a folder of workflow run logs, or inline rows"
    )
    scorers: list[ScorerEntry] = Field(
        default_factory=list,
        description="registered scorer names, 'module:qualname' references, or one-key "
        "mappings {name: {options}} as in eval files",
    )
    provider: str | None = Field(None, description="provider name or preset")
    model: str | None = None
    target: str | None = Field(None, description="'module:qualname' of a callable target")
    prompt_template: str | None = Field(None, description="str.format template over row fields")
    system_prompt: str | None = None
    params: dict[str, Any] = Field(default_factory=dict, description="request parameters")
    base_url: str | None = None
    api_key_env: str | None = Field(
        None, description="the name of the environment variable holding the target's API key"
    )
    concurrency: int = Field(16, ge=1, le=10_000)
    retries: int = Field(3, ge=0, le=20)
    timeout: float = Field(60.0, gt=0)
    cache: bool = True
    store: str | bool | None = Field(
        True, description="true: $AIEVAL_DB or ./aieval.db; a path; false: in memory only"
    )
    resume: str | bool | None = Field(None, description="a run id, or true: the latest unfinished")
    limit: int | None = Field(None, ge=0)
    prediction_field: str | None = None
    pass_threshold: float = Field(0.5, ge=0, le=1)
    metadata: dict[str, Any] = Field(default_factory=dict)
    workflow: str | dict[str, Any] | None = Field(None, description="workflow file or mapping")
    profile: str | None = Field(None, description="scoring profile id, family or file")
    evaluator: str | None = Field(
        None,
        description="an 'aieval.evaluators' plugin grading each sample; default: 'workflow' "
        "when a workflow, a profile or a folder of run logs is given",
    )
    grader: str | None = Field(
        None,
        description="an 'aieval.graders' plugin deciding each sample's verdict; default: the "
        "evaluator's grader, else 'threshold'",
    )
    imports: list[str] = Field(
        default_factory=list, description="Python files to import first (their @scorer)"
    )
    telemetry: bool | None = None
    enforce_hard_gates: bool = True
    run_id: str | None = None
    max_error_rate: float = Field(
        0.0, ge=0, le=1, description="share of samples that may error; above it the run is not ok"
    )
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(
        None, description="Ray cluster: unset = $RAY_ADDRESS, else auto, else a local Ray"
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per million tokens by model, for calls whose provider reports no cost",
    )

    @field_validator("max_error_rate", "pass_threshold", mode="before")
    @classmethod
    def _a_share(cls, value: Any) -> Any:
        return check_share(value)

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        return None if value is None else env_name(value)

    @field_validator("scorers")
    @classmethod
    def _one_key_each(cls, value: list[ScorerEntry]) -> list[ScorerEntry]:
        for i, item in enumerate(value):
            if isinstance(item, dict) and len(item) != 1:
                raise ValueError(f"scorers[{i}] must be a name or a one-key mapping name: {{...}}")
        return value

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> RunSpec:
        """The spec of ``run(**kwargs)``: callables become references, live objects are refused.

        Raises:
            ConfigError: a field that cannot be serialised (named, with what to do instead),
                or an invalid value.
        """
        data = {k: v for k, v in kwargs.items() if v is not None or k in ("resume", "store")}
        for key in _RUNTIME_ONLY:
            if data.pop(key, None) is not None:
                raise ConfigError(f"{key}: a live object cannot be in a RunSpec; give it to run()")
        if callable(data.get("target")):
            data["target"] = reference_of(data["target"], "target")
        if isinstance(data.get("dataset"), Path):
            data["dataset"] = str(data["dataset"])
        if isinstance(data.get("store"), Path):
            data["store"] = str(data["store"])
        if "scorers" in data:
            data["scorers"] = [_scorer_entry(s, i) for i, s in enumerate(data["scorers"])]
        for key in ("provider", "workflow", "profile", "store", "dataset"):
            value = data.get(key)
            if value is not None and not isinstance(value, str | bool | dict | list):
                raise ConfigError(
                    f"{key}: a {type(value).__name__} object cannot go into a RunSpec; "
                    "give its name or path, or pass the object to run() directly"
                )
        return cls.parse(data)

    @classmethod
    def parse(cls, data: dict[str, Any], *, source: str = "<run spec>") -> RunSpec:
        """Validate a mapping; a :class:`ConfigError` names the source and every bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ConfigError(f"{source}: {problems}") from None

    def run_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``run_async``, with ``imports`` and references imported again.

        ``executor`` and ``ray_address`` are among them only when the spec chooses Ray (so the
        run goes where the spec says); :func:`~aieval.runner.run_spec` runs a spec directly.
        """
        where = set() if self.executor == "ray" else {"executor", "ray_address"}
        kwargs = self.model_dump(exclude={"imports", *where})
        kwargs["scorers"] = self.resolved_scorers()
        if self.target is not None:
            kwargs["target"] = import_reference(self.target, "target")
        kwargs["metadata"] = kwargs["metadata"] or None
        kwargs["params"] = kwargs["params"] or None
        return kwargs

    def resolved_scorers(self) -> list[Scorer | Callable[..., Any] | str]:
        """The scorers, after importing ``imports`` (whose ``@scorer`` functions register)."""
        from aieval.runner._imports import import_file

        for file in self.imports:
            import_file(file)
        return resolve_scorers(self.scorers)

    @classmethod
    def of_run(cls, run: RunRow) -> RunSpec:
        """The spec a stored run was started from, set to resume it.

        Raises:
            ConfigError: the run stored no spec (started before specs were stored), or parts of
                it were live objects or credentials the store never keeps (each is named).
        """
        stored = run.config.get("spec")
        if not isinstance(stored, dict):
            raise ConfigError(f"run {run.id}: no run spec was stored with it")
        missing = run.config.get("spec_incomplete") or {}
        if missing:
            listed = "; ".join(f"{field}: {why}" for field, why in missing.items())
            raise ConfigError(
                f"run {run.id}: its stored spec is incomplete ({listed}); resume it with "
                "run(..., resume=...) and the same arguments instead"
            )
        spec = cls.parse(stored, source=f"run {run.id}")
        return spec.model_copy(update={"resume": run.id, "run_id": None})


def reference_of(obj: Any, field: str) -> str:
    """The ``module:qualname`` that imports ``obj`` back, or a :class:`ConfigError`."""
    named = obj.fn if isinstance(obj, Scorer) else obj
    module = getattr(named, "__module__", None)
    qualname = getattr(named, "__qualname__", None)
    if module and qualname and "<" not in qualname and module != "__main__":
        ref = f"{module}:{qualname}"
        try:
            imported = import_reference(ref, field)
        except ConfigError:
            imported = None
        # A plain function comes back as Scorer(fn): the same scorer only under fn's own name.
        same_scorer = named is not obj and getattr(named, "__name__", None) == obj.name
        if imported is obj or (imported is named and same_scorer):
            return ref
    raise ConfigError(
        f"{field}: {brief(obj)} cannot be referenced by import path (a lambda, a nested or "
        "__main__ function, a renamed scorer); define it at module level in an importable module "
        "(with @scorer(name=...) to name it), or pass it to run()"
    )


def import_reference(ref: str, field: str) -> Any:
    """Import ``"package.module:qualname"``; a :class:`ConfigError` names the field."""
    module_name, sep, qualname = ref.partition(":")
    if not sep or not module_name or not qualname:
        raise ConfigError(f"{field}: {ref!r} is not an import reference 'package.module:name'")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{field}: cannot import {ref!r}: {exc}") from None
    return obj


def resolve_scorers(entries: Sequence[ScorerEntry]) -> list[Scorer | Callable[..., Any] | str]:
    """Scorer entries as ``run_async`` takes them: references imported, options bound."""
    resolved: list[Scorer | Callable[..., Any] | str] = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            is_ref = ":" in entry
            resolved.append(import_reference(entry, f"scorers[{i}]") if is_ref else entry)
            continue
        ((name, options),) = entry.items()
        options = dict(options or {})
        rename = options.pop("name", None)
        if name == "llm_judge":
            from aieval.scorers import llm_judge

            resolved.append(llm_judge(name=rename, **options) if rename else llm_judge(**options))
        else:
            resolved.append(get_scorer(name).with_options(name=rename, **options))
    return resolved


def _scorer_entry(item: Any, index: int) -> ScorerEntry:
    field = f"scorers[{index}]"
    if isinstance(item, str | dict):
        return item
    if isinstance(item, Scorer):
        registered = _registered(item)
        if registered and is_builtin(item):
            return item.name
        if item.options and not registered:
            raise ConfigError(
                f"{field}: {brief(item)} has bound options; register it with @scorer(name=...) "
                "or give it as a mapping {name: {options}}"
            )
    try:
        return reference_of(item, field)
    except ConfigError:
        # registered in this process only (a notebook, a script): its name works here
        if isinstance(item, Scorer) and _registered(item):
            return item.name
        raise


def _registered(item: Scorer) -> bool:
    try:
        return get_scorer(item.name) is item
    except ConfigError:
        return False


def is_builtin(item: Scorer) -> bool:
    """Whether a scorer's function comes with aieval (any process resolves its name)."""
    module = getattr(item.fn, "__module__", None) or type(item.fn).__module__
    return isinstance(module, str) and (module == "aieval" or module.startswith("aieval."))
