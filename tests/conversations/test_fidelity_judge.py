"""The fidelity judge (a model on loopback, through the real provider): its flags join the
offline checks', and an answer that is not the JSON asked for, names another kind or a turn the
simulated user did not say is refused, naming the scenario."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval.conversations import check_fidelity, judge_fidelity, scenario_from_row
from aieval.core import Conversation, ConversationOutcome, Turn
from aieval.errors import ConversationError
from aieval.providers import OpenAIProvider

SCENARIO = scenario_from_row(
    {"id": "hours", "goal": "find out the opening hours", "user_turns": ["Hi."]}, source="test"
)
CONVERSATION = Conversation(
    "hours",
    0,
    (
        Turn("user", "Hi.", "scripted"),
        Turn("assistant", "Hello! What do you need?", "live"),
        Turn("user", "When do you open on Sunday? Asking for my shop manager.", "simulated"),
        Turn("assistant", "We open at ten.", "live"),
    ),
    ConversationOutcome("user_done", True),
)


@pytest.fixture
async def judge(openai_server: OpenAIServer) -> AsyncIterator[OpenAIProvider]:
    provider = OpenAIProvider(openai_server.base_url, timeout=10.0)
    yield provider
    await provider.aclose()


def _answer(*flags: dict[str, object]) -> Reply:
    return Reply(json.dumps({"flags": list(flags)}))


async def test_the_judge_flags_join_the_offline_checks(
    openai_server: OpenAIServer, judge: OpenAIProvider
) -> None:
    flag = {"kind": "persona_break", "turn": 3, "evidence": "speaks for someone else"}
    openai_server.enqueue(_answer(flag))
    judged = await judge_fidelity(CONVERSATION, SCENARIO, judge, "judge-model", seed=3)
    assert [(f.kind, f.turn, f.evidence) for f in judged.flags] == [
        ("persona_break", 3, "judge: speaks for someone else")
    ]
    offline = check_fidelity(CONVERSATION, SCENARIO, goal_met=True)
    assert offline.valid and not offline.merged(judged).valid
    body = openai_server.requests[-1].body
    brief = body["messages"][1]["content"]
    # the scripted turn is not the simulated user's; the goal and the done marker are said
    assert "[1] user: Hi." in brief and "[3] SIMULATED USER:" in brief
    assert "find out the opening hours" in brief and "DONE" in brief
    assert body["seed"] == 3 and body["model"] == "judge-model"


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param("The user was fine.", "is not JSON", id="prose"),
        pytest.param('{"verdict": "ok"}', "expected an object with a list of flags", id="shape"),
        pytest.param('{"flags": [{"kind": "rude", "turn": 3, "evidence": ""}]}', "kind", id="kind"),
        pytest.param(
            '{"flags": [{"kind": "goal_leak", "turn": 1, "evidence": "x"}]}',
            "flags turn 1, which the simulated user did not say",
            id="scripted-turn",
        ),
    ],
)
async def test_a_bad_answer_is_refused_naming_the_scenario(
    openai_server: OpenAIServer, judge: OpenAIProvider, answer: str, message: str
) -> None:
    openai_server.enqueue(Reply(answer))
    with pytest.raises(ConversationError, match="scenario 'hours': the fidelity judge") as info:
        await judge_fidelity(CONVERSATION, SCENARIO, judge, "judge-model")
    assert message in str(info.value)


async def test_no_simulated_user_means_no_call(
    openai_server: OpenAIServer, judge: OpenAIProvider
) -> None:
    scripted = Conversation(
        "hours", 0, CONVERSATION.turns[:2], ConversationOutcome("script_end", True)
    )
    assert (await judge_fidelity(scripted, SCENARIO, judge, "judge-model")).valid
    assert openai_server.requests == []
