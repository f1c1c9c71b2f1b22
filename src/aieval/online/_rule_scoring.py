"""A rule's ``scoring`` checked by the eval file's own code, with what its origin may name:
a rules file may import Python and name files anywhere (from its folder); an API rule may not
import Python, and its workflow or profile files must lie inside the server's dataset roots."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from aieval._files import confined_to, resolve_inside
from aieval.errors import ConfigError, IncompatibleDatasetError
from aieval.online._model import RuleScoring
from aieval.online._rule_schema import ScoringModel

__all__ = ["RuleOrigin", "checked_scoring", "may_judge"]

_FILE_SUFFIXES = (".yaml", ".yml", ".json")


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


def checked_scoring(scoring: ScoringModel, origin: RuleOrigin) -> RuleScoring:
    """``scoring`` with its paths made absolute (a file rule: from its folder; an API rule:
    confined to the dataset roots), checked by the eval file's code."""
    from aieval.runner import check_run, import_file, parse_eval

    if origin.source == "api":
        _refuse_python(scoring)
        _refuse_credentials(scoring)
    _refuse_references(scoring)
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


#: The built-in judges (their scores carry the verdicts a review queue checks).
_JUDGES = frozenset({"llm_judge", "rubric_judge", "multi_judge"})


def may_judge(scoring: RuleScoring) -> bool:
    """Whether ``scoring`` holds a judge: a built-in one, or a scorer of its own imports
    (a rules file's: what it is is known only when it scores)."""
    entries = [*scoring.scorers, *scoring.default_checks]
    names = [e if isinstance(e, str) else next(iter(e), "") for e in entries]
    own = bool(scoring.imports) or any(":" in n or n.endswith(".py") for n in names)
    return own or any(n in _JUDGES for n in names)


@contextmanager
def _unconfined() -> Iterator[None]:
    yield


def _refuse_python(scoring: ScoringModel) -> None:
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


#: Options naming a key, the variable holding one, or headers (a credential's usual place).
_CREDENTIAL_OPTIONS = frozenset({"api_key", "api_key_env", "headers"})


def _refuse_credentials(scoring: ScoringModel) -> None:
    """An API rule names no key, no environment variable and no header, at any depth of its
    scorers, checks and workflow: the server must never send the value of a variable of its
    environment (its token, a password) to an endpoint a request chose, as for
    ``POST /api/evaluations``. A judge's key comes from the server's environment
    (``AIEVAL_JUDGE_*``, the provider's own variable) or from the rules file."""
    parts: list[tuple[str, Any]] = [
        *((f"scoring.scorers[{i}]", e) for i, e in enumerate(scoring.scorers)),
        *((f"scoring.default_checks[{i}]", e) for i, e in enumerate(scoring.default_checks)),
    ]
    if isinstance(scoring.workflow, dict):
        parts.append(("scoring.workflow", scoring.workflow))
    # iterative walk: the body's depth is bounded by the JSON reader, not by this stack
    while parts:
        path, value = parts.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                where = f"{path}.{key}"
                if isinstance(key, str) and (key in _CREDENTIAL_OPTIONS or key.endswith("_env")):
                    raise ConfigError(
                        f"{where}: a rule sent to the API may not name a key, an environment "
                        "variable or headers (the server would send its own secrets where the "
                        "request says); let the judge use the server's configured key "
                        "(AIEVAL_JUDGE_PROVIDER, AIEVAL_JUDGE_BASE_URL and the provider's own "
                        "variable), or give the rule in the server's rules file "
                        "(aieval serve --online FILE)"
                    )
                parts.append((where, item))
        elif isinstance(value, list):
            parts.extend((f"{path}[{i}]", item) for i, item in enumerate(value))


#: Built-in scorers that compare the output with the row's expected answer, always.
_REFERENCE_SCORERS = frozenset({"exact_match", "rouge_l", "token_f1", "bleu", "chrf"})
#: Built-in checks that compare with the expected answer unless given the option named.
_REFERENCE_UNLESS = {
    "contains": "value",
    "icontains": "value",
    "starts_with": "value",
    "equals": "value",
    "levenshtein": "value",
    "similar": "value",
    "contains_any": "values",
    "contains_all": "values",
    "icontains_any": "values",
    "icontains_all": "values",
}


def _refuse_references(scoring: ScoringModel) -> None:
    """A trace carries no expected answer: a scorer comparing with one would make every trace
    a scorer error, so it is refused when the rule is read, naming the entry."""
    for field in ("scorers", "default_checks"):
        for i, entry in enumerate(getattr(scoring, field)):
            name, options = (entry, {}) if isinstance(entry, str) else next(iter(entry.items()))
            option = _REFERENCE_UNLESS.get(name)
            if name in _REFERENCE_SCORERS:
                why = f"{name!r} compares the output with the row's expected answer"
            elif option is not None and not (isinstance(options, dict) and option in options):
                why = f"{name!r} without {option!r} compares with the row's expected answer"
            else:
                continue
            hint = f"give it {option!r}, or " if option is not None else ""
            raise ConfigError(
                f"scoring.{field}[{i}]: {why}, and a trace has none (every trace would be a "
                f"scorer error); {hint}use a scorer that needs no reference (json_valid, a "
                "check with a value, a judge, a workflow)"
            )


def _confined(value: str, roots: Sequence[Path], field: str) -> Path:
    return resolve_inside(value, [root.resolve() for root in roots], field)
