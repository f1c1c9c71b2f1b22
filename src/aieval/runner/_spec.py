"""``RunSpec``: one validated, serialisable, nested description of a run.

A spec holds everything :func:`~aieval.runner.run_async` takes that can be written down, in four
sub-specs beside the run's name and data: :class:`TargetSpec` (what answers: a provider's model,
a callable, or the recorded predictions), :class:`ScoringSpec` (scorers, pass rule, workflow
grading), :class:`ExecutionSpec` (where and how wide samples run, the Ray cluster) and
:class:`StorageSpec` (the store, resume, the run id). It round-trips through JSON, so a run can
be described in a file, stored, sent to a worker or a server, and resumed from the same object.
``run()``'s keywords, eval files (:meth:`~aieval.runner.EvalConfig.specs`), the server and the
Ray executor all build or receive this one type; the flat keyword form (``RunSpec(name=...,
concurrency=4)``, and the flat specs stored by earlier versions) is accepted and nested.

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

from copy import copy
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from aieval._floors import DEFAULT_PASS_THRESHOLD
from aieval._keys import field_problems
from aieval._usage_figures import ModelPrice
from aieval.errors import ConfigError
from aieval.providers import check_env_name
from aieval.runner._references import ScorerEntry

if TYPE_CHECKING:
    from aieval.store import RunRow

__all__ = [
    "SPEC_KEYWORDS",
    "ExecutionSpec",
    "RunSpec",
    "ScoringSpec",
    "StorageSpec",
    "TargetSpec",
    "env_name",
    "spec_field",
]


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


def check_shares(value: Any) -> Any:
    """``{name: share}`` checked value by value (the message names the key)."""
    if isinstance(value, dict):
        for key, share in value.items():
            try:
                check_share(not_a_flag(share))
            except ValueError as exc:
                raise ValueError(f"{key}: {exc}") from None
    return value


def not_a_flag(value: Any) -> Any:
    """Refuse ``true``/``false`` where a share is expected (pydantic would read 1.0 or 0.0)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number between 0 and 1, got {value!r}")
    return value


#: A share (0..1); ``true``/``false`` read as 1.0/0.0 as before.
_Share = Annotated[float, BeforeValidator(check_share)]
#: A share or unset; ``true``/``false`` refused.
_ShareOrNone = Annotated[float | None, BeforeValidator(check_share), BeforeValidator(not_a_flag)]
#: ``{name: share}``, checked value by value.
_Shares = Annotated[dict[str, float], BeforeValidator(check_shares)]


def spec_field(sub: type[BaseModel], name: str) -> Any:
    """A copy of the spec's field ``name`` of ``sub`` (default, bounds, checks, description),
    for a model that validates the same setting under another roof (an eval file's
    ``settings:``), so that each setting has one default in one place."""
    return copy(sub.model_fields[name])


class _Sub(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TargetSpec(_Sub):
    """What answers each sample: a provider's model, a callable, or the recorded predictions."""

    provider: str | None = Field(None, description="provider name or preset")
    model: str | None = Field(
        None, description="the model to call; without a target, the recorded version to evaluate"
    )
    function: str | None = Field(None, description="'module:qualname' of a callable target")
    prompt_template: str | None = Field(None, description="str.format template over row fields")
    system_prompt: str | None = Field(None, description="a system message for provider targets")
    params: dict[str, Any] = Field(
        default_factory=dict, description="request parameters (temperature, max_tokens, top_p...)"
    )
    base_url: str | None = Field(None, description="endpoint of an openai-compatible provider")
    api_key_env: str | None = Field(
        None, description="the name of the environment variable holding the target's API key"
    )
    retries: int = Field(3, ge=0, le=20, description="retries per model call on 429/5xx/timeouts")
    timeout: float = Field(
        60.0, gt=0, description="seconds per model call (or per callable-target call)"
    )
    cache: bool = Field(
        True, description="reuse deterministic (temperature 0) answers from the response cache"
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per million tokens by model, for calls (target and judges) whose "
        "provider reports no cost",
    )

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        return None if value is None else env_name(value)


class ScoringSpec(_Sub):
    """How each sample is scored and graded, and what the run tolerates."""

    scorers: list[ScorerEntry] = Field(
        default_factory=list,
        description="registered scorer names, 'module:qualname' references, or one-key "
        "mappings {name: {options}} as in eval files",
    )
    imports: list[str] = Field(
        default_factory=list, description="Python files to import first (their @scorer)"
    )
    pass_threshold: _Share = Field(
        DEFAULT_PASS_THRESHOLD, ge=0, le=1, description="a sample passes when every score is >= it"
    )
    max_error_rate: _Share = Field(
        0.0, ge=0, le=1, description="share of samples that may error; above it the run is not ok"
    )
    workflow: str | dict[str, Any] | None = Field(None, description="workflow file or mapping")
    profile: str | None = Field(None, description="scoring profile id, family or file")
    evaluator: str | None = Field(
        None,
        description="an 'aieval.evaluators' plugin grading each sample; default: 'traces' "
        "for trace data, else 'workflow' when a workflow, a profile or a folder of run logs "
        "is given",
    )
    grader: str | None = Field(
        None,
        description="an 'aieval.graders' plugin deciding each sample's verdict; default: the "
        "evaluator's grader, else 'threshold'",
    )
    enforce_hard_gates: bool = Field(
        True,
        description="false: workflow gates are evaluated and reported but do not force grade F",
    )
    conversation: dict[str, Any] | None = Field(
        None,
        description="the 'conversation' evaluator's settings (simulated user, tools, goal "
        "checks, checks): the dataset is a scenario file; see docs/conversations.md",
    )
    replay: str | None = Field(
        None,
        description="a stored run whose conversations are replayed (by scenario and epoch), or "
        "a records file (a path ending in .jsonl)",
    )
    replay_mode: Literal["strict", "all", "branch"] | None = Field(
        None, description="how a replay plays: strict (default), all, branch"
    )
    min_pass_rate: _ShareOrNone = Field(
        None, ge=0, le=1, description="least pass rate the run must reach (aieval run exits 4)"
    )
    min_scores: _Shares = Field(
        default_factory=dict,
        description="{scorer: least mean score} the run must reach (aieval run exits 4 below)",
    )

    @field_validator("scorers")
    @classmethod
    def _one_key_each(cls, value: list[ScorerEntry]) -> list[ScorerEntry]:
        for i, item in enumerate(value):
            if isinstance(item, dict) and len(item) != 1:
                raise ValueError(f"scorers[{i}] must be a name or a one-key mapping name: {{...}}")
        return value


class ExecutionSpec(_Sub):
    """Where samples run and how many at once; the Ray cluster travels here only."""

    executor: Literal["local", "ray"] = Field(
        "local", description="where samples run: this process, or Ray workers (extra 'ray')"
    )
    ray_address: str | None = Field(
        None, description="Ray cluster: unset = $RAY_ADDRESS, else auto, else a local Ray"
    )
    concurrency: int = Field(16, ge=1, le=10_000, description="samples in flight at once")
    telemetry: bool | None = Field(
        None, description="emit OpenTelemetry spans (extra 'otel'); unset follows $AIEVAL_OTEL"
    )


class StorageSpec(_Sub):
    """Where the run is stored, which stored run it resumes, and the id of a new one."""

    store: str | bool | None = Field(
        True,
        description="true: $AIEVAL_DB or ./aieval.db; a path, sqlite:///path or"
        " postgresql:// URL (its password is never kept: only the redacted URL); false: in"
        " memory only",
    )
    resume: str | bool | None = Field(None, description="a run id, or true: the latest unfinished")
    run_id: str | None = Field(None, description="the id of a new run (default: a fresh one)")

    @field_validator("store")
    @classmethod
    def _location(cls, value: str | bool | None) -> str | bool | None:
        # another scheme is refused here; a URL's password never enters the spec
        if isinstance(value, str):
            from aieval.store import parse_location

            return parse_location(value).redacted
        return value


#: Which sub-spec holds each keyword of ``run()`` (``target`` is ``TargetSpec.function``).
_SUB_OF: dict[str, tuple[str, str]] = {
    **{k: ("target", k) for k in TargetSpec.model_fields if k != "function"},
    "target": ("target", "function"),
    **{k: ("scoring", k) for k in ScoringSpec.model_fields},
    **{k: ("execution", k) for k in ExecutionSpec.model_fields},
    **{k: ("storage", k) for k in StorageSpec.model_fields},
}
_SUBS = ("target", "scoring", "execution", "storage")


class RunSpec(BaseModel):
    """Everything a run needs that can be serialised, nested by concern; unknown keys are refused.

    Flat keywords (the names ``run()`` takes) are accepted and nested, so ``RunSpec(name=...,
    concurrency=4)`` and the flat specs stored by earlier versions read as before.

    Example:
        >>> spec = RunSpec(name="qa", dataset="data/qa.jsonl", scorers=["exact_match"])
        >>> spec.scoring.scorers
        ['exact_match']
        >>> RunSpec.model_validate_json(spec.model_dump_json()) == spec
        True
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="the run name; runs of one name form a history")
    dataset: str | list[dict[str, Any]] = Field(
        description="a .jsonl/.json/.csv path, a folder of workflow run logs, or inline rows"
    )
    limit: int | None = Field(None, ge=0, description="evaluate only the first rows")
    epochs: int = Field(
        1, ge=1, le=1000, strict=True, description="times each example is answered and scored"
    )
    prediction_field: str | None = Field(
        None, description="dotted path of the recorded prediction in each row"
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="free-form run metadata, stored with the run"
    )
    target: TargetSpec = Field(default_factory=TargetSpec)
    scoring: ScoringSpec = Field(default_factory=ScoringSpec)
    execution: ExecutionSpec = Field(default_factory=ExecutionSpec)
    storage: StorageSpec = Field(default_factory=StorageSpec)

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: Any) -> Any:
        """Flat keywords moved into their sub-spec (a string ``target`` is a callable's path)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in data.items():
            callable_path = key == "target" and (value is None or isinstance(value, str))
            if key in _SUB_OF and (callable_path or key not in _SUBS):
                sub, field = _SUB_OF[key]
                nested.setdefault(sub, {})[field] = out.pop(key)
        for sub, fields in nested.items():
            given = out.get(sub)
            if isinstance(given, BaseModel):
                given = given.model_dump(exclude_unset=True)
            given = given if isinstance(given, dict) else {}
            clash = [f for f in fields if f in given and given[f] != fields[f]]
            if clash:
                raise ValueError(
                    f"{clash[0]!r} is given twice, as {clash[0]}={fields[clash[0]]!r} and "
                    f"{sub}.{clash[0]}={given[clash[0]]!r}: give it once"
                )
            out[sub] = {**given, **fields}
        return out

    def replace(self, source: str = "<run spec>", /, **changes: Any) -> RunSpec:
        """A copy with fields changed, by ``run()``'s keyword names (routed to their sub-spec),
        validated as the spec is: how command-line flags and other overrides apply. An
        invalid value's error starts with ``source`` (what gave the changes).

        Inline rows given as ``dataset`` are kept as they are (the dataset reads them).

        Raises:
            ConfigError: an unknown name, or an invalid value (named).
        """
        data: dict[str, Any] = dict(self)
        for key, value in changes.items():
            if key in _SUB_OF:  # ``target`` too: the callable's path
                sub, field = _SUB_OF[key]
                given = data[sub]
                data[sub] = {
                    **(given.model_dump() if isinstance(given, BaseModel) else given),
                    field: value,
                }
            elif key in type(self).model_fields and key not in _SUBS:
                data[key] = value
            else:
                raise ConfigError(f"{key}: not a run setting")
        rows = data["dataset"] if isinstance(data["dataset"], list) else None
        spec = type(self).parse(
            {**data, "dataset": ""} if rows is not None else data, source=source, flat=True
        )
        return spec if rows is None else spec.model_copy(update={"dataset": rows})

    @classmethod
    def parse(
        cls, data: dict[str, Any], *, source: str = "<run spec>", flat: bool = False
    ) -> RunSpec:
        """Validate a mapping (nested, or flat as ``run()``'s keywords); a :class:`ConfigError`
        names the source and every bad field: by its keyword (``concurrency``) when ``flat``,
        as the caller spelled it, else by its place in the spec (``execution.concurrency``)."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = _flat_problems(exc) if flat else field_problems(exc)
            raise ConfigError(f"{source}: {problems}") from None

    @classmethod
    def of_run(cls, run: RunRow) -> RunSpec:
        """The spec a stored run was started from, set to resume it (a flat spec stored by an
        earlier version reads the same).

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
        return spec.replace(resume=run.id, run_id=None)


def _flat_problems(exc: ValidationError) -> str:
    """``exc``'s errors named by ``run()``'s keywords: a sub-spec's field by its own name."""
    problems = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        if len(loc) >= 2 and _SUB_OF.get(loc[1]) == (loc[0], loc[1]):
            loc = loc[1:]
        elif loc[:2] == ["target", "function"]:
            loc = ["target", *loc[2:]]
        problems.append(f"{'.'.join(loc) or '(top)'}: {err['msg']}")
    return "; ".join(problems)


#: The keyword names of a run's settings, as ``run()`` and :meth:`RunSpec.replace` take them.
SPEC_KEYWORDS = frozenset(_SUB_OF) | (frozenset(RunSpec.model_fields) - set(_SUBS))
