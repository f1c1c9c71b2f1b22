"""``trajectory_match``: the calls an agent made against the calls expected, with partial
credit.

The value is the mode's partial credit (F1, recall or precision of the best pairing; see
:mod:`._trajectory_match`), 1.0 exactly when the mode holds, and the scorer's own pass
threshold is 1.0: a sample passes when the mode holds, and "3 of 4 expected tools" scores
0.75 under ``superset`` rather than 0. A forbidden tool called scores 0. The reason shows the
pairing; the score's metadata holds the whole :class:`aieval.core.Trajectory` under
:data:`aieval.core.TRAJECTORY_KEY`, with precision, recall and F1.

The expected calls are, first found: the scorer's ``expected_calls`` option (the eval
author's), the row's ``expected_tool_calls`` field (a conversation scenario's
``expected_tool_calls``), else the row's ``expected``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aieval.core import TRAJECTORY_KEY, Score, ToolUse, Trajectory
from aieval.errors import ConfigError, ScorerError
from aieval.scorers._scorer import Scorer, scorer
from aieval.scorers._trajectory_args import ARGUMENT_MODES, ArgumentRule, arguments_rule
from aieval.scorers._trajectory_match import MODES, credit, describe, pair
from aieval.scorers._trajectory_sources import (
    answered_in_prose,
    called_uses,
    delegated_names,
    expected_uses,
)

__all__ = [
    "EXPECTED_FIELD",
    "MAX_TRAJECTORY_CALLS",
    "ROW_TRAJECTORY_OPTIONS",
    "check_row_trajectory",
    "match_trajectory",
    "trajectory_match",
]

#: what a dataset row may set on ``trajectory_match`` (beside name, threshold and weight)
ROW_TRAJECTORY_OPTIONS = frozenset(
    {"mode", "arguments", "per_tool", "normalize", "forbidden", "expected_calls"}
)

#: the row field (and scenario field) holding the expected calls
EXPECTED_FIELD = "expected_tool_calls"

#: the most calls made, and the most expected, one sample pairs: the pairing compares every
#: made call with every expected one (at most 250 x 250, about 0.3 s of CPU)
MAX_TRAJECTORY_CALLS = 250


def match_trajectory(
    called: Sequence[ToolUse],
    expected: Sequence[ToolUse],
    *,
    mode: str = "strict",
    arguments: str = "exact",
    per_tool: Mapping[str, Any] | None = None,
    normalize: Sequence[Any] = (),
    forbidden: Sequence[str] = (),
) -> Trajectory:
    """Pair ``called`` with ``expected`` (see :func:`trajectory_match` for the options).

    Example:
        >>> t = match_trajectory([ToolUse("search", {"q": "x"})],
        ...                      [ToolUse("search", {"q": "x"}), ToolUse("book", {})],
        ...                      mode="superset")
        >>> t.matched, t.recall
        (1, 0.5)
    """
    rules = _rules(mode, arguments, per_tool, normalize, forbidden)

    def compare(e: int, c: int) -> tuple[bool | None] | None:
        want, got = expected[e], called[c]
        if want.name != got.name:
            return None
        if want.arguments is None and want.argument_error is None:
            return (None,)  # the expectation names the tool only
        rule = rules.get(want.name, rules[""])
        try:
            return (rule.compare(got.arguments, want.arguments, error=got.argument_error),)
        except Exception as exc:  # the author's normalizer or matcher raised
            raise ScorerError(
                f"comparing the arguments of {want.name!r} raised {type(exc).__name__}: {exc}"
            ) from exc

    return Trajectory(
        called=tuple(called),
        expected=tuple(expected),
        matches=pair(called, expected, compare, mode=mode),
        forbidden=tuple(forbidden),
        mode=mode,
        arguments_mode=arguments,
    )


def _rules(
    mode: str,
    arguments: str,
    per_tool: Mapping[str, Any] | None,
    normalize: Sequence[Any],
    forbidden: Sequence[str],
) -> dict[str, ArgumentRule]:
    """Validate the options; the argument rule per tool (``""``: every other tool)."""
    if mode not in MODES:
        raise ConfigError(f"trajectory_match.mode: unknown mode {mode!r}; use {', '.join(MODES)}")
    if arguments not in ARGUMENT_MODES:
        raise ConfigError(
            f"trajectory_match.arguments: unknown argument mode {arguments!r}; use "
            f"{', '.join(ARGUMENT_MODES)}"
        )
    if isinstance(forbidden, str) or not all(isinstance(n, str) for n in forbidden):
        raise ConfigError("trajectory_match.forbidden: expected a list of tool names")
    if per_tool is not None and not isinstance(per_tool, Mapping):
        raise ConfigError("trajectory_match.per_tool: expected an object of tool name -> rule")
    rules = {"": arguments_rule(arguments, normalize, where="trajectory_match.normalize")}
    for name, override in (per_tool or {}).items():
        rules[str(name)] = arguments_rule(
            arguments, normalize, override, where=f"trajectory_match.per_tool.{name}"
        )
    return rules


def _score(
    prediction: Any,
    expected: Any,
    *,
    mode: str = "strict",
    arguments: str = "exact",
    per_tool: Mapping[str, Any] | None = None,
    normalize: Sequence[Any] = (),
    forbidden: Sequence[str] = (),
    expected_calls: Any = None,
    output: Any = None,
    example: Any = None,
) -> Score:
    """The registered scorer (options as :func:`trajectory_match`); the runner fills in
    ``output`` and ``example``."""
    gold, where = _expected(expected, expected_calls, output, example)
    if gold is None:
        return Score(None, reason="no expected tool calls for this sample")
    try:
        called = called_uses(prediction, output)
        wanted = expected_uses(gold, where)
        for what, calls in (("calls made", called), ("expected calls", wanted)):
            if len(calls) > MAX_TRAJECTORY_CALLS:
                raise ScorerError(
                    f"{len(calls):,} {what}, more than the "
                    f"{MAX_TRAJECTORY_CALLS} one sample may pair; split the task, or score "
                    "its tool calls with tool_call_scorer"
                )
        trajectory = match_trajectory(
            called,
            wanted,
            mode=mode,
            arguments=arguments,
            per_tool=per_tool,
            normalize=normalize,
            forbidden=forbidden,
        )
    except ConfigError as exc:  # the runner names the scorer: the message says it once
        raise ScorerError(str(exc)) from exc
    value = credit(trajectory)
    reason = describe(trajectory)
    if answered_in_prose(prediction, output):
        reason += " (the answer is plain text: it holds no tool calls)"
    if trajectory.forbidden_hits:  # the reason marks each such call "(forbidden)"
        value = 0.0
    nested = sorted({name for name in delegated_names(output) if name in set(forbidden)})
    if nested:
        value = 0.0
        reason += f" (a forbidden tool was called by an agent used as a tool: {', '.join(nested)})"
    return Score(
        value,
        raw=trajectory.f1,
        reason=f"{mode}: {reason}",
        metadata={
            TRAJECTORY_KEY: trajectory.to_dict(),
            "precision": trajectory.precision,
            "recall": trajectory.recall,
            "f1": trajectory.f1,
        },
    )


class _TrajectoryScorer(Scorer):
    """``trajectory_match`` with its options checked when bound (an eval file's entry, a
    row's check, ``with_options``): a bad mode is refused at load, never on every sample."""

    def with_options(self, *, name: str | None = None, **options: Any) -> _TrajectoryScorer:
        bound = super().with_options(name=name, **options)
        _check_options(bound.options)
        return _TrajectoryScorer(
            bound.fn,
            name=bound.name,
            options=bound.options,
            batch_fn=bound.batch_fn,
            threshold=bound.threshold,
            weight=bound.weight,
        )


def _check_options(options: Mapping[str, Any]) -> None:
    """Refuse invalid options (:class:`ConfigError` naming ``trajectory_match.OPTION``)."""
    if options.get("expected_calls") is not None:
        expected_uses(options["expected_calls"], "trajectory_match.expected_calls")
    _rules(
        options.get("mode", "strict"),
        options.get("arguments", "exact"),
        options.get("per_tool"),
        options.get("normalize", ()),
        options.get("forbidden", ()),
    )


#: the registered scorer; its own pass threshold is 1.0 (the mode must hold)
_trajectory_match = _TrajectoryScorer(_score, name="trajectory_match", threshold=1.0)
scorer(_trajectory_match)
# quadratic in the calls (bounded by MAX_TRAJECTORY_CALLS): a long output is scored off the
# event loop, charged to the sample's check budget
setattr(_score, "__aieval_off_loop__", True)  # noqa: B010


def _expected(expected: Any, option: Any, output: Any, example: Any) -> tuple[Any, str]:
    """The expected calls and where they came from (for errors); ``None`` when none given."""
    if option is not None:
        return option, "trajectory_match.expected_calls"
    scenario = getattr(output, "scenario", None)
    if scenario is not None and hasattr(scenario, EXPECTED_FIELD):
        return getattr(scenario, EXPECTED_FIELD), f"scenario {EXPECTED_FIELD}"
    fields = getattr(example, "fields", None)
    if isinstance(fields, Mapping) and fields.get(EXPECTED_FIELD) is not None:
        return fields[EXPECTED_FIELD], f"row field {EXPECTED_FIELD}"
    return expected, "row expected"


def check_row_trajectory(options: Mapping[Any, Any]) -> None:
    """Refuse a row's ``trajectory_match`` options that are not plain data or not valid: a
    row names built-in normalizers and argument modes only, never a function.

    Raises:
        ConfigError: naming the option and what a row may give instead.
    """
    for key in ("per_tool", "normalize"):
        if key in options and not _plain(options[key]):
            raise ConfigError(
                f"trajectory_match.{key}: a dataset row may give only names of built-in "
                "normalizers and argument modes (text, lists, {number: TOLERANCE}), never a "
                "function; give functions in the eval's own Python code"
            )
    _check_options(options)


def _plain(value: Any) -> bool:
    """Plain JSON data (text, numbers, lists, objects with text keys), nothing callable."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def trajectory_match(
    mode: str = "strict",
    *,
    arguments: str = "exact",
    per_tool: Mapping[str, str | Sequence[Any] | Callable[[Any, Any], bool]] | None = None,
    normalize: Sequence[str | Mapping[str, float] | Callable[[Any], Any]] = (),
    forbidden: Sequence[str] = (),
    expected_calls: Any = None,
    name: str | None = None,
    threshold: float | None = None,
) -> Scorer:
    """A scorer matching the sample's tool calls with the expected ones, with partial credit.

    Args:
        mode: ``strict`` (same calls, same order; the parallel calls of one message in any
            order), ``in_order`` (the expected calls in order among those made),
            ``unordered`` (same calls, any order), ``subset`` (every call made is expected),
            ``superset`` (every expected call is made).
        arguments: ``exact``, ``ignore``, ``subset`` (the call's arguments are among the
            expected ones) or ``superset`` (the expected arguments are among the call's).
        per_tool: tool name -> an argument mode, a list of normalizers, or (from Python) a
            function ``(called_arguments, expected_arguments) -> bool``.
        normalize: applied to every argument value before comparing: ``case``,
            ``whitespace``, ``path``, ``timestamp`` (the same instant in any zone),
            ``number`` or ``{"number": TOLERANCE}`` (numbers within an absolute tolerance,
            numeric text included), or (from Python) a function of one value.
        forbidden: tools that must not be called: a call scores 0.
        expected_calls: the expected calls for every sample (else the row's).
        name: the score's name (default ``trajectory_match``).
        threshold: the least value that passes (default 1.0: the mode must hold).

    Raises:
        ConfigError: an unknown mode, argument mode or normalizer, naming the option.

    Example:
        >>> s = trajectory_match("superset", arguments="ignore")
        >>> made = [{"name": "search"}, {"name": "weather"}, {"name": "hotel"}]
        >>> s(made, ["search", "weather", "hotel", "book"]).value
        0.75
    """
    options: dict[str, Any] = {"mode": mode, "arguments": arguments}
    if per_tool:
        options["per_tool"] = dict(per_tool)
    if normalize:
        options["normalize"] = list(normalize)
    if forbidden:
        options["forbidden"] = forbidden if isinstance(forbidden, str) else list(forbidden)
    if expected_calls is not None:
        options["expected_calls"] = expected_calls
    if threshold is not None:
        options["threshold"] = threshold
    return _trajectory_match.with_options(name=name, **options)
