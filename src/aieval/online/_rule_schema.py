"""The fields of an online rule as a rules file or an API body gives them: pydantic models
refusing unknown keys, each value bounded, read into the typed :class:`OnlineRule`."""

from __future__ import annotations

import math
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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
    "RuleModel",
    "RulesFile",
    "ScoringModel",
    "built_rule",
    "check_rule_name",
]

#: The longest rule or review queue name (it becomes part of run names).
MAX_RULE_NAME = 100
#: The longest service name, span name or attribute key a rule may give.
MAX_TEXT = 1000
#: The most attribute conditions in one filter.
MAX_CONDITIONS = 100
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_BASELINE = re.compile(r"previous|\d{4}-\d{2}-\d{2}(T\d{2})?")


def check_rule_name(name: str, what: str = "a rule name") -> str:
    """``name`` if it is a safe name (a rule's, or a review queue's): 1 to
    :data:`MAX_RULE_NAME` characters of ``A-Z a-z 0-9 . _ -``, the first a letter or digit
    (it is part of run names ``online/<name>/<window>``, an alert's ``Idempotency-Key`` header,
    a review queue's name: plain ASCII travels everywhere unchanged).

    Raises:
        ValueError: the reason it is not.
    """
    if not name or len(name) > MAX_RULE_NAME:
        raise ValueError(f"{what} has 1 to {MAX_RULE_NAME} characters, not {len(name)}")
    if not _SAFE_NAME.fullmatch(name):
        raise ValueError(
            f"{name[:MAX_RULE_NAME]!r}: {what} holds only the letters A-Z and a-z, digits, "
            "'.', '_' and '-', and starts with a letter or digit (it is part of run names, "
            "headers and queue names)"
        )
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttributeModel(_Strict):
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
    def _exactly_one(self) -> AttributeModel:
        given = [k for k in ("equals", "regex", "exists") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"attribute {self.key!r}: give exactly one of equals, regex, exists "
                f"(given: {', '.join(given) or 'none'})"
            )
        return self


class FilterModel(_Strict):
    service_name: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    span_name: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    attributes: list[AttributeModel] = Field(default_factory=list, max_length=MAX_CONDITIONS)


class ScoringModel(_Strict):
    scorers: list[str | dict[str, dict[str, Any]]] = Field(default_factory=list)
    default_checks: list[str | dict[str, dict[str, Any]]] = Field(default_factory=list)
    workflow: str | dict[str, Any] | None = None
    profile: str | None = None
    grader: str | None = None
    imports: list[str] = Field(default_factory=list)
    pass_threshold: float = Field(0.5, ge=0, le=1)
    enforce_hard_gates: bool = True


#: The contract's defaults (one place: the dataclasses of :mod:`aieval.online._model`).
_ALERT = AlertPolicy()
_RULE = OnlineRule("defaults")


class BudgetModel(_Strict):
    calls_per_hour: int | None = Field(None, ge=0)
    calls_per_day: int | None = Field(None, ge=0)
    tokens_per_hour: int | None = Field(None, ge=0)
    tokens_per_day: int | None = Field(None, ge=0)
    cost_per_hour: float | None = Field(None, ge=0, allow_inf_nan=False)
    cost_per_day: float | None = Field(None, ge=0, allow_inf_nan=False)


class AlertModel(_Strict):
    metric: Literal["pass_rate", "mean"] = "pass_rate"
    scorer: str | None = Field(None, min_length=1)
    floor: float | None = Field(None, allow_inf_nan=False)
    consecutive: int = Field(_ALERT.consecutive, ge=1, le=1000)
    baseline: str | None = None
    alpha: float = Field(_ALERT.alpha, gt=0, lt=1)
    webhook: str | None = Field(None, max_length=2048)
    min_samples: int = Field(_ALERT.min_samples, ge=1)

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
    def _complete(self) -> AlertModel:
        if self.floor is None and self.baseline is None:
            raise ValueError("give a floor, a baseline or both: otherwise it never alerts")
        if self.metric == "mean" and self.scorer is None:
            raise ValueError("metric: mean needs the scorer whose mean score is watched")
        if self.metric == "pass_rate" and self.floor is not None and not 0 <= self.floor <= 1:
            raise ValueError(f"floor: a pass rate lies in 0..1, not {self.floor}")
        return self


class RuleModel(_Strict):
    name: str
    filter: FilterModel = Field(default_factory=FilterModel)
    sampling_rate: float = Field(_RULE.sampling_rate, gt=0, le=1)
    scoring: ScoringModel
    budget: BudgetModel = Field(default_factory=BudgetModel)
    window: Literal["hour", "day"] = "hour"
    settle_s: float = Field(_RULE.settle_s, ge=0, le=86400, allow_inf_nan=False)
    incomplete_after_s: float = Field(
        _RULE.incomplete_after_s, gt=0, le=7 * 86400, allow_inf_nan=False
    )
    alert: AlertModel | None = None
    review: str | None = None
    paused: bool = False

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        return check_rule_name(value)

    @field_validator("review")
    @classmethod
    def _safe_queue(cls, value: str | None) -> str | None:
        return None if value is None else check_rule_name(value, "a review queue name")

    @model_validator(mode="after")
    def _waits(self) -> RuleModel:
        if self.incomplete_after_s < self.settle_s:
            raise ValueError(
                f"incomplete_after_s ({self.incomplete_after_s:g}) is shorter than settle_s "
                f"({self.settle_s:g}): a trace would be called incomplete before it is looked at"
            )
        return self


class RulesFile(_Strict):
    rules: list[dict[str, Any]]


def built_rule(model: RuleModel) -> OnlineRule:
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
