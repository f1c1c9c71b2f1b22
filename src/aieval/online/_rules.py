"""Online scoring rules read from a rules file (the server's command line) or an API body.

Every field is validated here, once: unknown keys are refused, and an error names the file,
the rule (by name, else by its index) and the field, as an eval file's errors do. A rule's
``scoring`` is checked by the eval file's own code (:func:`aieval.runner.parse_eval` for its
entries, :func:`aieval.runner.check_run` to resolve its scorers, workflow, profile and grader).

A rules file is the server owner's, as an eval file is: it may import Python files and name
workflow or profile files anywhere (relative to the file's folder). A rule sent to the API
(with the server's own token) may not import Python (no ``imports``, no ``module:name``
scorer references), and the workflow or profile files it names must lie inside the server's
dataset roots, as for ``POST /api/traces/evaluations`` (docs/online.md, "Rules")."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aieval._files import confined_to, resolve_inside
from aieval._keys import pydantic_problems
from aieval._yaml import load_yaml_file
from aieval.errors import ConfigError, IncompatibleDatasetError
from aieval.online._filter import MAX_REGEX_VALUE_CHARS, compile_regex
from aieval.online._model import (
    AlertPolicy,
    AttributeMatch,
    Budget,
    OnlineRule,
    RuleScoring,
    TraceFilter,
)

__all__ = [
    "MAX_CONDITIONS",
    "MAX_RULE_NAME",
    "MAX_TEXT",
    "RuleOrigin",
    "check_rule_name",
    "load_rules",
    "parse_rule",
    "parse_rules",
    "rule_from_json",
    "rule_to_json",
]

#: The longest rule name (it becomes part of run names).
MAX_RULE_NAME = 100
#: The longest service name, span name, attribute key or review queue name a rule may give.
MAX_TEXT = 1000
#: The most attribute conditions in one filter.
MAX_CONDITIONS = 100
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_BASELINE = re.compile(r"previous|\d{4}-\d{2}-\d{2}(T\d{2})?")
_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def check_rule_name(name: str) -> str:
    """``name`` if it is a safe rule name: 1 to :data:`MAX_RULE_NAME` characters, no ``/``
    or ``\\``, no control characters, no blank ends, not ``.`` or ``..`` (it is part of the
    run names ``online/<name>/<window>``).

    Raises:
        ValueError: the reason it is not.
    """
    if not name or len(name) > MAX_RULE_NAME:
        raise ValueError(f"a rule name has 1 to {MAX_RULE_NAME} characters, not {len(name)}")
    if "/" in name or "\\" in name or _CONTROL.search(name):
        raise ValueError(
            f"{name!r}: a rule name may not hold '/', '\\' or control characters (it is part "
            "of the run names online/<name>/<window>)"
        )
    if name != name.strip() or name in (".", ".."):
        raise ValueError(f"{name!r}: a rule name may not start or end with spaces, nor be . or ..")
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _AttributeModel(_Strict):
    key: str = Field(min_length=1, max_length=MAX_TEXT)
    # smart union: a YAML true stays a bool and 1 an int, never the string "True" or "1"
    equals: str | int | float | bool | None = None
    regex: str | None = Field(None, description="a full match (bounded: docs/online.md)")
    exists: bool | None = None

    @field_validator("equals")
    @classmethod
    def _bounded(cls, value: str | float | bool | None) -> str | float | bool | None:
        if isinstance(value, str) and len(value) > MAX_REGEX_VALUE_CHARS:
            raise ValueError(
                f"a value of {len(value):,} characters; at most {MAX_REGEX_VALUE_CHARS:,}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("a number must be finite")
        return value

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            compile_regex(value)
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> _AttributeModel:
        given = [k for k in ("equals", "regex", "exists") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"attribute {self.key!r}: give exactly one of equals, regex, exists "
                f"(given: {', '.join(given) or 'none'})"
            )
        return self


class _FilterModel(_Strict):
    service_name: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    span_name: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    attributes: list[_AttributeModel] = Field(default_factory=list, max_length=MAX_CONDITIONS)


class _ScoringModel(_Strict):
    scorers: list[str | dict[str, dict[str, Any]]] = Field(default_factory=list)
    default_checks: list[str | dict[str, dict[str, Any]]] = Field(default_factory=list)
    workflow: str | dict[str, Any] | None = None
    profile: str | None = None
    grader: str | None = None
    imports: list[str] = Field(default_factory=list)
    pass_threshold: float = Field(0.5, ge=0, le=1)
    enforce_hard_gates: bool = True


class _BudgetModel(_Strict):
    calls_per_hour: int | None = Field(None, ge=0)
    calls_per_day: int | None = Field(None, ge=0)
    tokens_per_hour: int | None = Field(None, ge=0)
    tokens_per_day: int | None = Field(None, ge=0)
    cost_per_hour: float | None = Field(None, ge=0, allow_inf_nan=False)
    cost_per_day: float | None = Field(None, ge=0, allow_inf_nan=False)


class _AlertModel(_Strict):
    metric: Literal["pass_rate", "mean"] = "pass_rate"
    scorer: str | None = Field(None, min_length=1)
    floor: float | None = Field(None, allow_inf_nan=False)
    consecutive: int = Field(3, ge=1, le=1000)
    baseline: str | None = None
    alpha: float = Field(0.01, gt=0, lt=1)
    webhook: str | None = Field(None, max_length=2048)
    min_samples: int = Field(20, ge=1)

    @field_validator("webhook")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or _CONTROL.search(value):
            raise ValueError(f"{value[:200]!r} is not an http(s) URL with a host")
        return value

    @field_validator("baseline")
    @classmethod
    def _window(cls, value: str | None) -> str | None:
        if value is not None and not _BASELINE.fullmatch(value):
            raise ValueError(
                f"{value[:100]!r}: give 'previous' or a window's start, YYYY-MM-DD or "
                "YYYY-MM-DDTHH (UTC)"
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> _AlertModel:
        if self.floor is None and self.baseline is None:
            raise ValueError("give a floor, a baseline or both: otherwise it never alerts")
        if self.metric == "mean" and self.scorer is None:
            raise ValueError("metric: mean needs the scorer whose mean score is watched")
        if self.metric == "pass_rate" and self.floor is not None and not 0 <= self.floor <= 1:
            raise ValueError(f"floor: a pass rate lies in 0..1, not {self.floor}")
        return self


class _RuleModel(_Strict):
    name: str
    filter: _FilterModel = Field(default_factory=_FilterModel)
    sampling_rate: float = Field(1.0, gt=0, le=1)
    scoring: _ScoringModel
    budget: _BudgetModel = Field(default_factory=_BudgetModel)
    window: Literal["hour", "day"] = "hour"
    settle_s: float = Field(30.0, ge=0, le=86400, allow_inf_nan=False)
    incomplete_after_s: float = Field(600.0, gt=0, le=7 * 86400, allow_inf_nan=False)
    alert: _AlertModel | None = None
    review: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    paused: bool = False

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        return check_rule_name(value)

    @model_validator(mode="after")
    def _waits(self) -> _RuleModel:
        if self.incomplete_after_s < self.settle_s:
            raise ValueError(
                f"incomplete_after_s ({self.incomplete_after_s:g}) is shorter than settle_s "
                f"({self.settle_s:g}): a trace would be called incomplete before it is looked at"
            )
        return self


class _RulesFile(_Strict):
    rules: list[dict[str, Any]]


@dataclasses.dataclass(frozen=True, slots=True)
class RuleOrigin:
    """Where a rule comes from, which decides what it may name.

    Attributes:
        source: ``"file"`` (the server's command line: imports allowed, files anywhere,
            relative to ``base_dir``) or ``"api"`` (no imports; files only inside ``roots``).
        where: how errors name it (the rules file's path, or ``"request body"``).
        base_dir: a file rule's folder (its relative paths start there).
        roots: the server's dataset roots (an API rule's files must lie inside).
    """

    source: Literal["file", "api"]
    where: str
    base_dir: Path | None = None
    roots: tuple[Path, ...] = ()


def load_rules(path: str | Path) -> list[OnlineRule]:
    """Read and validate a rules file (YAML or JSON: ``rules:``, a list of rules).

    Raises:
        ConfigError: a missing or unreadable file, an invalid rule (named by the file, the
            rule and the field), or two rules of one name.
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{file}: rules file not found")
    data = load_yaml_file(file, error=ConfigError)
    origin = RuleOrigin("file", str(file), base_dir=file.parent.resolve())
    return parse_rules(data, origin)


def parse_rules(data: Any, origin: RuleOrigin) -> list[OnlineRule]:
    """The rules of a rules file's content (see :func:`load_rules`)."""
    try:
        listed = _RulesFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(pydantic_problems(exc.errors(), _RulesFile))
        raise ConfigError(
            f"{origin.where}: {problems} (a rules file is a mapping with 'rules:', a list of rules)"
        ) from None
    rules = [_parse(item, origin, f"rules[{i}]") for i, item in enumerate(listed.rules)]
    seen: dict[str, int] = {}
    for i, rule in enumerate(rules):
        if rule.name in seen:
            raise ConfigError(
                f"{origin.where}: rules[{i}] (rule {rule.name!r}): name: the name of "
                f"rules[{seen[rule.name]}] too; each rule needs its own name"
            )
        seen[rule.name] = i
    return rules


def parse_rule(data: Any, origin: RuleOrigin) -> OnlineRule:
    """One rule (an API body, or an item of a rules file), validated and its scoring checked.

    Raises:
        ConfigError: the first problems, named ``<where>: rule 'NAME': field: problem``.
    """
    return _parse(data, origin, None)


def rule_to_json(rule: OnlineRule) -> str:
    """The stored spec of ``rule`` (JSON; unset attribute conditions left out)."""
    data = dataclasses.asdict(rule)
    data["filter"]["attributes"] = [
        {k: v for k, v in a.items() if v is not None or k == "key"}
        for a in data["filter"]["attributes"]
    ]
    try:
        return json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        # a YAML date or a NaN in a scorer's options: a spec is JSON, read back the same
        raise ConfigError(
            f"rule {rule.name!r}: scoring: holds a value that is not JSON ({exc}); quote dates "
            "and give finite numbers"
        ) from None


def rule_from_json(text: str) -> OnlineRule:
    """The rule of a stored spec (:func:`rule_to_json`), its fields validated again (its
    scoring is not imported or resolved again here: that was done when it was saved).

    Raises:
        ConfigError: a spec that is not a valid rule (named by the field).
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"stored rule: not JSON: {exc}") from None
    return _built(_validated(data, "stored rule", None))


def _parse(data: Any, origin: RuleOrigin, index: str | None) -> OnlineRule:
    name = data.get("name") if isinstance(data, dict) else None
    who = _who(index, name)
    model = _validated(data, origin.where, index)
    with _naming(f"{origin.where}: {who}"):
        scoring = _checked_scoring(model.scoring, origin)
    rule = dataclasses.replace(_built(model), scoring=scoring)
    try:
        rule_to_json(rule)
    except ConfigError as exc:
        raise ConfigError(f"{origin.where}: {who}: {str(exc).split(': ', 1)[1]}") from None
    return rule


def _who(index: str | None, name: Any) -> str:
    shown = f"rule {name!r}" if isinstance(name, str) and name else None
    if index is None:
        return shown or "rule"
    return f"{index} ({shown})" if shown else index


def _validated(data: Any, where: str, index: str | None) -> _RuleModel:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: {index or 'rule'}: a rule is a mapping with name, scoring")
    try:
        return _RuleModel.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(pydantic_problems(exc.errors(), _RuleModel))
        raise ConfigError(f"{where}: {_who(index, data.get('name'))}: {problems}") from None


@contextmanager
def _naming(prefix: str) -> Iterator[None]:
    """A ConfigError (or workflow, rubric, dataset error) raised inside names the rule."""
    try:
        yield
    except ConfigError as exc:
        exc.args = (f"{prefix}: {exc.args[0] if exc.args else exc}", *exc.args[1:])
        raise
    except Exception as exc:
        from aieval.errors import UserError

        if not isinstance(exc, UserError):
            raise
        raise ConfigError(f"{prefix}: scoring: {exc}") from exc


def _built(model: _RuleModel) -> OnlineRule:
    f, s, b = model.filter, model.scoring, model.budget
    return OnlineRule(
        name=model.name,
        filter=TraceFilter(
            service_name=f.service_name,
            span_name=f.span_name,
            attributes=tuple(
                AttributeMatch(key=a.key, equals=a.equals, regex=a.regex, exists=a.exists)
                for a in f.attributes
            ),
        ),
        sampling_rate=model.sampling_rate,
        scoring=RuleScoring(
            scorers=tuple(s.scorers),
            default_checks=tuple(s.default_checks),
            workflow=s.workflow,
            profile=s.profile,
            grader=s.grader,
            imports=tuple(s.imports),
            pass_threshold=s.pass_threshold,
            enforce_hard_gates=s.enforce_hard_gates,
        ),
        budget=Budget(**b.model_dump()),
        window=model.window,
        settle_s=model.settle_s,
        incomplete_after_s=model.incomplete_after_s,
        alert=None if model.alert is None else AlertPolicy(**model.alert.model_dump()),
        review=model.review,
        paused=model.paused,
    )


def _checked_scoring(scoring: _ScoringModel, origin: RuleOrigin) -> RuleScoring:
    """``scoring`` with its paths made absolute (a file rule: from its folder; an API rule:
    confined to the dataset roots), checked by the eval file's code."""
    from aieval.runner import check_run, import_file, parse_eval

    if origin.source == "api":
        _refuse_python(scoring)
    workflow, profile, imports = scoring.workflow, scoring.profile, list(scoring.imports)
    if origin.source == "api":
        roots = list(origin.roots)
        if isinstance(workflow, str):
            workflow = str(_confined(workflow, roots, "scoring.workflow"))
        if profile is not None and profile.endswith(_FILE_SUFFIXES):
            profile = str(_confined(profile, roots, "scoring.profile"))
    else:
        base = origin.base_dir or Path(".")
        imports = [str((base / item).resolve()) for item in imports]
        if isinstance(workflow, str):
            workflow = str((base / workflow).resolve())
        if profile is not None and profile.endswith(_FILE_SUFFIXES):
            profile = str((base / profile).resolve())
    # the eval file's own checks: entries of one key each, and something scored
    parse_eval(
        {
            "name": "online-rule",
            "dataset": {"rows": [{"input": {}}]},
            "scorers": scoring.scorers,
            "default_checks": scoring.default_checks,
            "workflow": workflow,
            "profile": profile,
            "grader": scoring.grader,
            "enforce_hard_gates": scoring.enforce_hard_gates,
        },
        source="scoring",
    )
    for item in imports:
        import_file(Path(item))
    traces = workflow is not None or profile is not None
    with confined_to(origin.roots) if origin.source == "api" else _unconfined():
        try:
            check_run(
                dataset=[{"id": "probe", "input": {}, "prediction": ""}],
                scorers=[*scoring.scorers, *scoring.default_checks],
                has_target=False,
                workflow=workflow,
                profile=profile,
                evaluator="traces" if traces else None,
                grader=scoring.grader,
            )
        except IncompatibleDatasetError:
            pass  # the probe row has no inputs; a trace's run brings its own
        except ConfigError as exc:
            raise ConfigError(f"scoring: {exc}") from None
    return RuleScoring(
        scorers=tuple(scoring.scorers),
        default_checks=tuple(scoring.default_checks),
        workflow=workflow,
        profile=profile,
        grader=scoring.grader,
        imports=tuple(imports),
        pass_threshold=scoring.pass_threshold,
        enforce_hard_gates=scoring.enforce_hard_gates,
    )


@contextmanager
def _unconfined() -> Iterator[None]:
    yield


def _refuse_python(scoring: _ScoringModel) -> None:
    """An API rule runs no code of its own: no imports, no ``module:name`` scorers."""
    if scoring.imports:
        raise ConfigError(
            "scoring.imports: a rule sent to the API may not import Python files (it would run "
            "their code with the server's keys); give it in the server's rules file "
            "(aieval serve --online FILE)"
        )
    for field in ("scorers", "default_checks"):
        for i, entry in enumerate(getattr(scoring, field)):
            named = entry if isinstance(entry, str) else next(iter(entry), "")
            if ":" in named or named.endswith(".py"):
                raise ConfigError(
                    f"scoring.{field}[{i}]: {named[:100]!r} names Python to import; a rule sent "
                    "to the API may use registered scorers only (give it in the server's rules "
                    "file to use your own)"
                )


def _confined(value: str, roots: Sequence[Path], field: str) -> Path:
    return resolve_inside(value, [root.resolve() for root in roots], field)
