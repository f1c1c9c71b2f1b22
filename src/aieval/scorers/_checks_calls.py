"""Checks on how an output was made: its latency, its cost and the model's finish reason.

They read the sample's model-call records, which the runner keeps while it scores the sample
(the target's calls, and a recorded row's ``recorded_calls``). They need no output text: a
``None`` output is checked like any other. A figure that is not known (a callable target makes
no call record, a provider reports no cost and the check has no price for the model) leaves
the check not applicable (``Score(None)`` with the reason), never passed: the run counts it
apart and reports a check that scored no sample.
"""

from __future__ import annotations

from typing import Any

from aieval._calls import current_calls, current_prices, measured_latency
from aieval._records import CallRecord
from aieval._types import Example, Score
from aieval._usage_figures import ModelPrice, call_cost
from aieval.errors import ConfigError
from aieval.scorers._check import check, outcome

__all__ = ["cost", "finish_reason", "latency"]


def _target_calls() -> list[CallRecord] | None:
    calls = current_calls()
    return None if calls is None else [c for c in calls if c.purpose == "target"]


def _not_applicable(reason: str) -> Score:
    return Score(None, reason=reason)


def _positive(key: str) -> Any:
    def rule(options: dict[str, Any]) -> None:
        if options[key] < 0:
            raise ConfigError(f"{key}: must be >= 0, got {options[key]}")

    return rule


@check(_positive("max_s"))
def latency(
    _prediction: Any,
    _expected: Any = None,
    *,
    max_s: float,
    negate: bool = False,
    example: Example | None = None,
) -> Score:
    """Whether the target answered within ``max_s`` seconds.

    The latency is the row's ``recorded_latency_s`` when it has one, else the sum of the
    target's recorded model calls (a retried call counts from its first attempt; a cache hit
    keeps the original call's latency), else the time the runner measured around the target
    (a Python callable's answer, end to end). Not applicable when none is known (a call
    outside a run).

    Example:
        >>> latency("answer", max_s=2.0).reason
        'no recorded latency for this sample (no model call of the target was recorded)'
    """
    recorded = example.fields.get("recorded_latency_s") if example is not None else None
    if isinstance(recorded, int | float) and not isinstance(recorded, bool):
        seconds = float(recorded)
    else:
        calls = _target_calls() or []
        known = [c.latency_s for c in calls if c.latency_s is not None]
        measured = measured_latency()
        if not calls and measured is not None:
            return _latency_outcome(measured, max_s, negate)
        if not calls or len(known) < len(calls):
            what = "a call's latency is unknown" if calls else "no model call of the target"
            return _not_applicable(f"no recorded latency for this sample ({what} was recorded)")
        seconds = sum(known)
    return _latency_outcome(seconds, max_s, negate)


def _latency_outcome(seconds: float, max_s: float, negate: bool) -> Score:
    passed = seconds <= max_s
    says = f"latency {seconds:.3f} s {'<=' if passed else '>'} max_s {max_s:g} s"
    return outcome(passed, says, negate=negate, raw=seconds)


def _valid_cost(options: dict[str, Any]) -> None:
    _positive("max_usd")(options)


@check(_valid_cost)
def cost(
    _prediction: Any,
    _expected: Any = None,
    *,
    max_usd: float,
    prices: dict[str, ModelPrice] | None = None,
    negate: bool = False,
) -> Score:
    """Whether the target's model calls for this sample cost at most ``max_usd`` (USD).

    A call's cost is what the provider reported, else its tokens priced from ``prices``
    (``{model: {input_per_mtok, output_per_mtok}}``, USD per million tokens), else from the
    run's own ``prices`` (the check's win for a model both name). Judge calls are not
    counted. Not applicable when any target call's cost is unknown, or no target call was
    recorded.

    Example:
        >>> cost("answer", max_usd=0.01).value is None
        True
    """
    calls = _target_calls()
    if not calls:
        return _not_applicable("no recorded model call of the target for this sample")
    priced = {**current_prices(), **(prices or {})}
    figures = [call_cost(c, priced) for c in calls if c.error is None]
    if None in figures:
        unpriced = sorted({str(c.model) for c, f in zip(calls, figures, strict=False) if f is None})
        return _not_applicable(
            f"cost unknown: no reported cost and no price for {', '.join(unpriced)}"
        )
    total = sum(f for f in figures if f is not None)
    passed = total <= max_usd
    says = f"cost ${total:.6f} {'<=' if passed else '>'} max_usd ${max_usd:g}"
    return outcome(passed, says, negate=negate, raw=total)


def _valid_reasons(options: dict[str, Any]) -> None:
    if not options["value"]:
        raise ConfigError("finish_reason.value: give at least one finish reason")


@check(_valid_reasons)
def finish_reason(
    _prediction: Any,
    _expected: Any = None,
    *,
    value: str | list[str],
    negate: bool = False,
) -> Score:
    """Whether the target's last model call finished for ``value`` (one reason, or any of a
    list), in OpenAI's words: ``stop``, ``length``, ``tool_calls``, ``content_filter`` (the
    Anthropic provider maps its stop reasons to these).

    Not applicable when the provider reported none (a recorded row, a callable target).

    Example:
        >>> finish_reason("answer", value="stop").value is None
        True
    """
    wanted = [value] if isinstance(value, str) else value
    calls = _target_calls()
    reported = calls[-1].finish_reason if calls else None
    if reported is None:
        return _not_applicable("no finish reason was reported for this sample's target call")
    passed = reported in wanted
    allowed = " or ".join(map(repr, wanted))
    says = f"finish reason {reported!r} {'is' if passed else 'is not'} {allowed}"
    return outcome(passed, says, negate=negate, raw=reported)
