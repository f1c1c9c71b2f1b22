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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aieval._keys import pydantic_problems
from aieval._yaml import load_yaml_file
from aieval.errors import ConfigError, UserError
from aieval.online._model import OnlineRule
from aieval.online._rule_schema import (
    MAX_CONDITIONS,
    MAX_RULE_NAME,
    MAX_TEXT,
    RuleModel,
    RulesFile,
    built_rule,
    check_rule_name,
)
from aieval.online._rule_scoring import RuleOrigin, checked_scoring, may_judge

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
        listed = RulesFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(pydantic_problems(exc.errors(), RulesFile))
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
    """The stored spec of ``rule`` (JSON; unset attribute conditions left out).

    Raises:
        ConfigError: the rule holds a value JSON cannot keep (named by the rule).
    """
    try:
        return _spec(rule)
    except ValueError as exc:
        raise ConfigError(f"rule {rule.name!r}: {exc}") from None


def _spec(rule: OnlineRule) -> str:
    data = dataclasses.asdict(rule)
    data["filter"]["attributes"] = [
        {k: v for k, v in a.items() if v is not None or k == "key"}
        for a in data["filter"]["attributes"]
    ]
    try:
        return json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        # a YAML date or a NaN in a scorer's options: a spec is JSON, read back the same
        raise ValueError(
            f"scoring: holds a value that is not JSON ({exc}); quote dates and give finite numbers"
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
    return built_rule(_validated(data, "stored rule", None))


def _parse(data: Any, origin: RuleOrigin, index: str | None) -> OnlineRule:
    name = data.get("name") if isinstance(data, dict) else None
    who = _who(index, name)
    model = _validated(data, origin.where, index)
    with _naming(f"{origin.where}: {who}"):
        scoring = checked_scoring(model.scoring, origin)
    if model.review is not None and not may_judge(scoring):
        raise ConfigError(
            f"{origin.where}: {who}: review: the queue {model.review!r} checks a judge, and "
            "the rule's scoring has none; add a judge (llm_judge, rubric_judge) to its "
            "scorers, or remove review"
        )
    rule = dataclasses.replace(built_rule(model), scoring=scoring)
    try:
        _spec(rule)
    except ValueError as exc:
        raise ConfigError(f"{origin.where}: {who}: {exc}") from None
    return rule


def _who(index: str | None, name: Any) -> str:
    shown = f"rule {name!r}" if isinstance(name, str) and name else None
    if index is None:
        return shown or "rule"
    return f"{index} ({shown})" if shown else index


def _validated(data: Any, where: str, index: str | None) -> RuleModel:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: {index or 'rule'}: a rule is a mapping with name, scoring")
    try:
        return RuleModel.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(pydantic_problems(exc.errors(), RuleModel))
        raise ConfigError(f"{where}: {_who(index, data.get('name'))}: {problems}") from None


@contextmanager
def _naming(prefix: str) -> Iterator[None]:
    """A ConfigError (or workflow, rubric, dataset error) raised inside names the rule."""
    try:
        yield
    except ConfigError as exc:
        exc.args = (f"{prefix}: {exc.args[0] if exc.args else exc}", *exc.args[1:])
        raise
    except UserError as exc:
        raise ConfigError(f"{prefix}: scoring: {exc}") from exc
