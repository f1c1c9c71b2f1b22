"""Simulator fidelity by a judge model, beside the offline checks, when the author names one.

The judge reads the goal, whether the task was done, and the transcript with turn numbers, and
answers JSON flags. Its answer is data: parsed strictly, each flag's kind checked against the
three kinds and its turn against the simulated user's turns; anything else is a
:class:`ConversationError` naming what was wrong, never a guess.
"""

from __future__ import annotations

import json
from typing import Any

from aieval.conversations._fidelity import (
    FidelityFlag,
    SimulatorFidelity,
    simulated_turn_numbers,
)
from aieval.conversations._scenario import Scenario
from aieval.core import Conversation
from aieval.errors import ConversationError
from aieval.providers import ChatRequest, Provider

__all__ = ["FIDELITY_JUDGE_PROMPT", "judge_fidelity"]

FIDELITY_JUDGE_PROMPT = (
    "You check whether a simulated user played its part in a conversation with an assistant. "
    "The simulated user was given a goal and told to act as a real user. Flag only the "
    "simulated user's turns (marked SIMULATED USER), for these errors:\n"
    "- persona_break: it said it is an AI, a model or a simulation, or spoke as the assistant "
    "would (offered help, answered its own question), or switched roles;\n"
    "- goal_leak: it repeated its goal's text word for word instead of asking as a user would;\n"
    "- early_stop: it ended the conversation (DONE) before the task was done while the "
    "assistant was still working on it.\n"
    'Answer with JSON only: {"flags": [{"kind": "...", "turn": N, "evidence": "..."}]}, '
    'with "turn" the number of the turn that shows it; {"flags": []} when it played its part.'
)


async def judge_fidelity(
    conversation: Conversation,
    scenario: Scenario,
    provider: Provider,
    model: str,
    *,
    goal_met: bool | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
) -> SimulatorFidelity:
    """The judge's flags for the simulated user of a finished conversation.

    Args:
        conversation: the finished record.
        scenario: its scenario (the goal, the scripted turns).
        provider: the judge's provider, as the author configured it (never a default).
        model: the judge model.
        goal_met: whether the task was done, when the caller knows.
        temperature: the judge's sampling temperature.
        seed: sent as the request's ``seed`` when given.

    Raises:
        ConversationError: the judge's answer is not the JSON asked for, names another kind,
            or a turn the simulated user did not say.
    """
    allowed = set(simulated_turn_numbers(conversation, scenario))
    if conversation.outcome.stop_reason == "user_done":
        allowed.add(len(conversation.turns))  # a done marker alone stops after the last turn
    if not allowed:
        return SimulatorFidelity()  # no simulated user spoke: nothing to judge
    request = ChatRequest(
        model,
        [
            {"role": "system", "content": FIDELITY_JUDGE_PROMPT},
            {"role": "user", "content": _brief(conversation, scenario, allowed, goal_met)},
        ],
        temperature=temperature,
        params={} if seed is None else {"seed": seed},
    )
    response = await provider.generate(request)
    return _verdict(response.text, allowed, conversation.scenario_id)


def _brief(
    conversation: Conversation, scenario: Scenario, simulated: set[int], goal_met: bool | None
) -> str:
    done = {True: "yes", False: "no", None: "unknown"}[goal_met]
    lines = [f"Goal of the simulated user: {scenario.goal}", f"Task done: {done}", "Transcript:"]
    for number, turn in enumerate(conversation.turns, 1):
        who = "SIMULATED USER" if number in simulated and turn.role == "user" else turn.role
        lines.append(f"[{number}] {who}: {turn.content}")
    if conversation.outcome.stop_reason == "user_done":
        lines.append("(the simulated user then ended the conversation: DONE)")
    return "\n".join(lines)


def _verdict(text: str, allowed: set[int], scenario_id: str) -> SimulatorFidelity:
    where = f"scenario {scenario_id!r}: the fidelity judge's answer"
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data: Any = json.loads(body)
    except ValueError as exc:
        raise ConversationError(f"{where} is not JSON: {exc}") from None
    try:
        fidelity = SimulatorFidelity.from_dict(data)
    except ConversationError as exc:
        raise ConversationError(f"{where}: {exc}") from None
    for flag in fidelity.flags:
        if flag.turn not in allowed:
            raise ConversationError(
                f"{where} flags turn {flag.turn}, which the simulated user did not say"
            )
    return SimulatorFidelity(
        tuple(FidelityFlag(f.kind, f.turn, "judge: " + f.evidence) for f in fidelity.flags)
    )
