"""Simulator fidelity: the simulated user is flagged when it broke persona, revealed its goal
word for word, or said it was done before the task was; scripted turns and clean conversations
are not; the verdict round-trips through JSON; the bench meets its targets."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from aieval.conversations import SimulatorFidelity, check_fidelity, scenario_from_row
from aieval.core import Conversation, ConversationOutcome, Turn
from aieval.errors import ConversationError

ROOT = Path(__file__).resolve().parents[2]
GOAL = (
    "You want a refund for order 4412 because the lamp arrived broken; you would rather have "
    "the money back on your card than store credit."
)
SCENARIO = scenario_from_row(
    {"id": "refund", "goal": GOAL, "user_turns": ["Hi, my lamp arrived broken."]},
    source="test",
)
ASK = "Sorry to hear that. Could you confirm the email on the order?"
DONE = "I've issued the refund to your card. Is there anything else I can help you with?"


def _conversation(*said: str, stop: str = "user_done", source: str = "simulated") -> Conversation:
    """The scripted opening, then user and assistant in turn from ``said``."""
    turns = [Turn("user", "Hi, my lamp arrived broken.", "scripted")]
    for i, text in enumerate(said):
        role = "assistant" if i % 2 == 0 else "user"
        turns.append(Turn(role, text, "live" if role == "assistant" else source))  # type: ignore[arg-type]
    return Conversation("refund", 0, tuple(turns), ConversationOutcome(stop, True))  # type: ignore[arg-type]


def _kinds(conversation: Conversation, goal_met: bool | None = True) -> list[tuple[str, int]]:
    fidelity = check_fidelity(conversation, SCENARIO, goal_met=goal_met)
    return [(f.kind, f.turn) for f in fidelity.flags]


CLEAN = [
    pytest.param((ASK, "sam@example.org", DONE, "Great, thanks!"), True, id="done-after-help"),
    pytest.param(
        (ASK, "Is this an AI answering me? Anyway, sam@example.org", DONE, "thanks"),
        True,
        id="asks-if-bot",
    ),
    pytest.param(
        (ASK, "sam@example.org", "I'm sorry, that is outside our policy.", "Alright, bye."),
        False,
        id="gives-up-after-refusal",
    ),
    pytest.param((ASK, "I want my money back on my card, please."), True, id="paraphrases-goal"),
]


@pytest.mark.parametrize(("said", "goal_met"), CLEAN)
def test_a_clean_conversation_is_not_flagged(said: tuple[str, ...], goal_met: bool) -> None:
    assert _kinds(_conversation(*said), goal_met) == []


FLAWED = [
    pytest.param((ASK, "As an AI, I don't have an email."), "persona_break", 3, id="says-ai"),
    pytest.param((ASK, "How can I help you today?"), "persona_break", 3, id="assistant-voice"),
    pytest.param(
        (ASK, "Could you confirm the email on the order please?"),
        "persona_break",
        3,
        id="echoes-assistant",
    ),
    pytest.param(
        (ASK, "So: I would rather have the money back on my card than store credit."),
        "goal_leak",
        3,
        id="goal-verbatim-first-person",
    ),
    pytest.param((ASK, "ok thanks bye"), "early_stop", 3, id="done-while-asked"),
]


@pytest.mark.parametrize(("said", "kind", "turn"), FLAWED)
def test_a_simulator_error_is_flagged_at_its_turn(
    said: tuple[str, ...], kind: str, turn: int
) -> None:
    assert _kinds(_conversation(*said), goal_met=kind != "early_stop") == [(kind, turn)]


def test_claiming_success_while_the_goal_is_not_met_is_an_early_stop() -> None:
    said = (ASK, "sam@example.org", "That is not possible here.", "Perfect, problem solved.")
    assert _kinds(_conversation(*said), goal_met=False) == [("early_stop", 5)]
    # the same words when the goal was met, or when nobody knows, flag nothing
    assert _kinds(_conversation(*said), goal_met=True) == []
    assert _kinds(_conversation(*said), goal_met=None) == []


def test_a_done_marker_alone_after_an_open_question_is_an_early_stop() -> None:
    # the user's message was only the marker: no turn was added after the assistant's question
    conversation = _conversation(ASK)
    assert _kinds(conversation, goal_met=False) == [("early_stop", 2)]


def test_only_the_simulated_user_is_judged() -> None:
    scripted = Conversation(
        "refund",
        0,
        (Turn("user", "As an AI, " + GOAL, "scripted"), Turn("assistant", DONE, "live")),
        ConversationOutcome("user_done", True),
    )
    assert _kinds(scripted) == []
    # a replayed user turn after the scenario's one scripted turn was the simulated user's
    replayed = _conversation(ASK, "How can I help you today?", source="replayed")
    assert _kinds(replayed) == [("persona_break", 3)]


def test_the_verdict_round_trips_and_a_bad_one_names_its_field() -> None:
    fidelity = check_fidelity(_conversation(ASK, "How can I help you?"), SCENARIO)
    assert not fidelity.valid and "persona_break at turn 3" in fidelity.reason()
    assert SimulatorFidelity.from_dict(fidelity.to_dict()) == fidelity
    assert SimulatorFidelity().to_dict() == {"valid": True, "flags": []}
    bad = {"flags": [{"kind": "rude", "turn": 1, "evidence": ""}]}
    with pytest.raises(ConversationError, match=r"fidelity\.flags\[0\]\.kind"):
        SimulatorFidelity.from_dict(bad)


def test_the_bench_meets_its_targets_on_500_conversations() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "conversation_fidelity.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    recall = re.search(r"\| all injected \| (\d+)/100 ", done.stdout)
    clean = re.search(r"\| clean \(false flags\) \| (\d+)/400 ", done.stdout)
    assert recall is not None and int(recall.group(1)) >= 90, done.stdout
    assert clean is not None and int(clean.group(1)) <= 20, done.stdout
