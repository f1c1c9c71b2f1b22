"""The Conversation record: an exact JSON round trip; a bad record is named, not guessed."""

from __future__ import annotations

import json

import pytest

from aieval.core import Conversation, ConversationOutcome, ToolCall, Turn, Usage
from aieval.errors import ConversationError, UserError

RECORD = Conversation(
    scenario_id="refund-1",
    epoch=2,
    turns=(
        Turn("user", "Où est ma commande ? 🙂", "scripted"),
        Turn(
            "assistant",
            "",
            "live",
            (ToolCall("c1", "lookup", '{"id":  7}', "shipped", None),),
            usage=Usage(12, 3, 0.000125, 1),
            latency_s=0.25,
        ),
        Turn("tool", "shipped", "live", tool_call_id="c1"),
        Turn("assistant", "It shipped.", "replayed"),
        Turn("user", "thanks", "simulated", usage=Usage(None, None, None, 0)),
    ),
    outcome=ConversationOutcome("failed", False, "the target failed: boom", "ProviderError"),
    branched_at=4,
)


def test_the_json_round_trip_is_exact() -> None:
    text = RECORD.to_json()
    back = Conversation.from_json(text)
    assert back == RECORD
    assert back.to_json() == text
    assert Conversation.from_dict(json.loads(text)) == RECORD
    assert RECORD.turns[1].cost == 0.000125
    # arguments are kept verbatim, spaces included
    assert json.loads(text)["turns"][1]["tool_calls"][0]["arguments"] == '{"id":  7}'


def test_the_transcript_leaves_out_source_usage_and_latency() -> None:
    plain = Conversation(
        "refund-1",
        0,
        tuple(Turn(t.role, t.content, "live", t.tool_calls, t.tool_call_id) for t in RECORD.turns),
        ConversationOutcome("user_done", True),
    )
    assert plain.transcript() == RECORD.transcript()
    assert plain.to_json() != RECORD.to_json()


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        (
            ("turns", 1, "role"),
            "system",
            "scenario 'refund-1', turn 2.role: 'system' is not one of",
        ),
        (("turns", 0, "source"), "guessed", "turn 1.source: 'guessed' is not one of"),
        (
            ("turns", 1, "tool_calls", 0, "arguments"),
            {"id": 7},
            "turn 2.tool_calls[0].arguments: expected a string",
        ),
        (
            ("turns", 1, "usage", "input_tokens"),
            1.5,
            "turn 2.usage.input_tokens: expected a whole number",
        ),
        (("turns", 1, "latency_s"), "fast", "turn 2.latency_s: expected a finite number"),
        (("outcome", "completed"), "yes", "outcome.completed: expected true or false"),
        (("epoch",), -1, "epoch: expected a whole number >= 0"),
    ],
)
def test_a_bad_record_names_scenario_turn_and_field(
    path: tuple[object, ...], value: object, says: str
) -> None:
    data = json.loads(RECORD.to_json())
    node = data
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]
    with pytest.raises(ConversationError) as caught:
        Conversation.from_dict(data)
    assert says in str(caught.value)
    assert isinstance(caught.value, UserError)


def test_text_that_is_not_json_is_a_conversation_error() -> None:
    with pytest.raises(ConversationError, match="not JSON"):
        Conversation.from_json("{turns")
