"""Scores of a conversation: checks per assistant turn (their ``min`` and ``mean`` over the
turns) and per conversation (the author's, and the built-in goal reached and final state).

Each is an ordinary scorer of the run, so thresholds, gates (``min_scores``) and reports read
them as any score. A check a scenario does not name scores ``None`` for it (not scored, never
a 0); a conversation that failed is the sample's error and is not scored at all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.conversations._fidelity import SimulatorFidelity
from aieval.conversations._scenario import Scenario
from aieval.core import Conversation, Score
from aieval.errors import ScorerError
from aieval.scorers import Scorer
from aieval.scorers.state import compare_state

__all__ = ["Played", "check_scorers", "final_answer", "turn_score_names"]

#: a turn check's two scores: the least value over the assistant turns, and the mean
AGGREGATES = ("min", "mean")


@dataclass(frozen=True, slots=True)
class Played:
    """What the conversation target produces for a sample: the scenario, its record, the
    simulated user's fidelity (``None`` when no simulated user spoke) and the environment's
    final state (``None`` without an environment; ``final_state_error`` says why it has none)."""

    scenario: Scenario
    conversation: Conversation
    fidelity: SimulatorFidelity | None = None
    final_state: Any = None
    final_state_error: str | None = None


def final_answer(conversation: Conversation) -> str | None:
    """The last assistant turn's text (the sample's prediction)."""
    for turn in reversed(conversation.turns):
        if turn.role == "assistant" and not turn.tool_calls:
            return turn.content
    return None


def turn_score_names(name: str) -> tuple[str, str]:
    """The scores of turn check ``name``: ``name@min`` and ``name@mean``."""
    return f"{name}@min", f"{name}@mean"


def check_scorers(
    turn_checks: Mapping[str, Callable[..., Any]],
    conversation_checks: Mapping[str, Callable[..., Any]],
    state: Callable[..., Any] | None,
    builtins: Sequence[str] = (),
    *,
    state_check: Callable[..., Any] | None = None,
) -> list[Scorer]:
    """One scorer per score: ``NAME@min`` and ``NAME@mean`` per turn check, ``NAME`` per
    conversation check, and the ``builtins`` asked for (``goal_reached``, ``final_state``,
    with the author's ``state_check`` over the final state)."""
    scorers: list[Scorer] = []
    for name, fn in turn_checks.items():
        for aggregate, score_name in zip(AGGREGATES, turn_score_names(name), strict=True):
            scorers.append(Scorer(_TurnScore(name, fn, aggregate), name=score_name))
    for name, fn in conversation_checks.items():
        scorers.append(Scorer(_WholeScore(name, fn), name=name))
    if "goal_reached" in builtins:
        scorers.append(Scorer(_goal_reached, name="goal_reached"))
    if "final_state" in builtins:
        scorers.append(Scorer(_FinalState(state, state_check), name="final_state"))
    return scorers


class _TurnScore:
    """A turn check over every assistant answer (tool-call requests included), with the turn
    and its history: the ``min`` or ``mean`` of the values; the reason names the first turn
    below 1 (numbered from 1, as the record's turns)."""

    def __init__(self, name: str, fn: Callable[..., Any], aggregate: str) -> None:
        self.name, self.fn, self.aggregate = name, fn, aggregate

    async def __call__(self, prediction: Any, *, output: Any = None) -> Score:
        played = _played(output)
        if (invalid := _invalid(played)) is not None:
            return invalid
        if self.name not in played.scenario.checks.turn:
            return _not_named(played.scenario, self.name)
        turns = played.conversation.turns
        values: dict[int, float] = {}
        for index, turn in enumerate(turns):
            if turn.role != "assistant":
                continue
            values[index + 1] = _value(
                await _called(self.fn, turn, turns[:index], played.scenario), self.name
            )
        if not values:
            return Score(None, reason="no assistant turn to check")
        numbers = list(values.values())
        value = min(numbers) if self.aggregate == "min" else sum(numbers) / len(numbers)
        low = next((n for n, v in values.items() if v < 1.0), None)
        reason = f"turn {low} scored {values[low]:g}" if low is not None else "every turn 1"
        per_turn = {str(n): v for n, v in values.items()}
        return Score(value, reason=reason, metadata={"turns": per_turn})


class _WholeScore:
    """A conversation check over the whole record."""

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.name, self.fn = name, fn

    async def __call__(self, prediction: Any, *, output: Any = None) -> Score:
        played = _played(output)
        if (invalid := _invalid(played)) is not None:
            return invalid
        if self.name not in played.scenario.checks.conversation:
            return _not_named(played.scenario, self.name)
        result = await _called(self.fn, played.conversation, played.scenario)
        if isinstance(result, Score):
            return result
        return Score(_value(result, self.name))


def _goal_reached(prediction: Any, *, output: Any = None) -> Score:
    """1 when the scenario's goal check ended the conversation; ``None`` without one."""
    played = _played(output)
    if (invalid := _invalid(played)) is not None:
        return invalid
    if played.scenario.stop.goal_check is None:
        return Score(None, reason="the scenario has no goal check")
    reached = played.conversation.outcome.stop_reason == "goal_reached"
    return Score(
        1.0 if reached else 0.0,
        reason=f"ended by {played.conversation.outcome.stop_reason}",
    )


class _FinalState:
    """1 when the final state matches the scenario's ``expected_state`` (under its
    ``state_match``), else 0 with the diff (reason and ``state_diff`` metadata).

    The final state is the environment's snapshot, else the author's
    ``state(conversation, scenario)``, else the final assistant answer. The author's
    ``check(state)``, when given, must hold too (and then no ``expected_state`` is needed)."""

    def __init__(
        self, state: Callable[..., Any] | None, check: Callable[..., Any] | None = None
    ) -> None:
        self.state, self.check = state, check

    async def __call__(self, prediction: Any, *, output: Any = None) -> Score:
        played = _played(output)
        if (invalid := _invalid(played)) is not None:
            return invalid
        expected = played.scenario.expected_state
        if expected is None and self.check is None:
            return Score(None, reason="the scenario has no expected_state")
        if played.final_state_error is not None:
            raise ScorerError(f"the final state was not recorded: {played.final_state_error}")
        if played.final_state is not None:
            actual = played.final_state
        elif self.state is not None:
            actual = await _called(self.state, played.conversation, played.scenario)
        else:
            actual = final_answer(played.conversation)
        verdict = None if self.check is None else await _called(self.check, actual)
        return compare_state(
            actual,
            expected,
            match=played.scenario.state_match,
            verdict=verdict,
            has_expected=expected is not None,
        )


def _played(output: Any) -> Played:
    if not isinstance(output, Played):
        raise TypeError("a conversation check scores conversation samples only")
    return output


def _invalid(played: Played) -> Score | None:
    """Not applicable when the simulated user failed fidelity: such a conversation measures the
    simulator, not the target, so none of its checks counts for or against the target."""
    if played.fidelity is None or played.fidelity.valid:
        return None
    return Score(None, reason=f"invalid conversation (simulator): {played.fidelity.reason()}")


def _not_named(scenario: Scenario, name: str) -> Score:
    return Score(None, reason=f"scenario {scenario.id!r} does not name check {name!r}")


async def _called(fn: Callable[..., Any], *args: Any) -> Any:
    result = fn(*args)
    return await result if inspect.isawaitable(result) else result


def _value(result: Any, name: str) -> float:
    if isinstance(result, Score):
        result = result.value
    if isinstance(result, bool):
        return 1.0 if result else 0.0
    if isinstance(result, int | float) and 0.0 <= result <= 1.0:
        return float(result)
    raise ValueError(f"check {name!r} returned {result!r}; return a bool or a number in 0..1")
