"""The engine against a scripted model on loopback: each stop rule, tools, history, failures."""

from __future__ import annotations

import json
from typing import Any

from tests.conversations._fake import LOOKUP, Fake, scenario_row
from tests.support.openai_server import Status

from aieval.conversations import (
    TargetReply,
    Tool,
    load_scenarios,
    run_conversation,
    run_conversations,
)
from aieval.core import Conversation, ToolCall, Turn


def _scenario(**changes: Any):  # type: ignore[no-untyped-def]
    return load_scenarios([scenario_row(4, **changes)], goal_checks={"shipped"}).scenarios[0]


async def test_the_simulated_user_ends_it_by_saying_it_is_done(fake: Fake) -> None:
    user = fake.user(temperature=0.3, seed=11)
    conversation = await run_conversation(_scenario(), fake.target(), user=user)
    assert conversation.outcome.stop_reason == "user_done"
    assert conversation.outcome.completed is True
    roles = [(t.role, t.source) for t in conversation.turns]
    # order 4: asks, is answered (tool call, result, answer), insists once, then is done
    assert roles == [
        ("user", "simulated"),
        ("assistant", "live"),
        ("tool", "scripted"),
        ("assistant", "live"),
        ("user", "simulated"),
        ("assistant", "live"),
        ("tool", "scripted"),
        ("assistant", "live"),
        ("user", "simulated"),
    ]
    assert conversation.turns[-1].content == "Thanks, that is all."
    user_requests = [r.body for r in fake.server.requests if r.body["model"] == "user-model"]
    assert {(r["temperature"], r["seed"]) for r in user_requests} == {(0.3, 11)}
    # the user's side sees the assistant as "user"; its own words as "assistant"
    assert user_requests[1]["messages"][1:] == [
        {"role": "assistant", "content": "Hello, where is my order 4?"},
        {"role": "user", "content": "Your order is shipped-4."},
    ]


async def test_history_and_tools_are_sent_on_every_turn(fake: Fake) -> None:
    scenario = _scenario(user_turns=["where is order 4", "and again order 4"])
    conversation = await run_conversation(scenario, fake.target())
    assert conversation.outcome.stop_reason == "script_end"
    bodies = [r.body for r in fake.server.requests]
    assert all(b["tools"] == [{"type": "function", "function": LOOKUP}] for b in bodies)
    # each request holds every turn before it, the tool calls and their results included
    last = bodies[-1]["messages"]
    assert [m["role"] for m in last] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    assert last[1]["tool_calls"][0]["function"] == {
        "name": "lookup_order",
        "arguments": '{"order_id": 4}',
    }
    assert last[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": '{"status": "shipped-4"}',
    }


async def test_tool_calls_are_recorded_with_arguments_and_results(fake: Fake) -> None:
    conversation = await run_conversation(_scenario(user_turns=["where is order 4"]), fake.target())
    assistant = conversation.turns[1]
    assert assistant.tool_calls == (
        ToolCall("call_1", "lookup_order", '{"order_id": 4}', '{"status": "shipped-4"}'),
    )
    tool = conversation.turns[2]
    assert (tool.role, tool.tool_call_id, tool.content) == (
        "tool",
        "call_1",
        '{"status": "shipped-4"}',
    )
    assert assistant.usage is not None and assistant.usage.input_tokens is not None
    assert assistant.latency_s is not None and assistant.latency_s > 0


async def test_the_goal_check_ends_it(fake: Fake) -> None:

    def shipped(scenario: object, turns: tuple[Turn, ...]) -> bool:
        return turns[-1].role == "assistant" and "shipped" in turns[-1].content

    scenario = _scenario(
        stop={"goal_check": "shipped"}, user_turns=["hi", "where is order 4", "ok"]
    )
    conversation = await run_conversation(scenario, fake.target(), goal_checks={"shipped": shipped})
    assert conversation.outcome.stop_reason == "goal_reached"
    assert conversation.outcome.completed is True
    assert [t.content for t in conversation.turns if t.role == "user"] == ["hi", "where is order 4"]


async def test_the_turn_limit_ends_it(fake: Fake) -> None:
    # order 5 insists twice: with max_turns 2 the limit comes first
    row = scenario_row(5, max_turns=2)
    scenario = load_scenarios([row]).scenarios[0]
    user = fake.user()
    conversation = await run_conversation(scenario, fake.target(), user=user)
    assert conversation.outcome.stop_reason == "max_turns"
    assert conversation.outcome.completed is False
    assert sum(t.role == "user" for t in conversation.turns) == 2


async def test_a_user_who_may_not_stop_goes_on_to_the_limit(fake: Fake) -> None:
    scenario = _scenario(stop={"user_done": False}, max_turns=4)
    user = fake.user()
    conversation = await run_conversation(scenario, fake.target(), user=user)
    assert conversation.outcome.stop_reason == "max_turns"
    assert [t.content for t in conversation.turns if t.role == "user"][-1] == "Thanks, that is all."


async def test_scripted_turns_come_first_then_the_simulator(fake: Fake) -> None:
    scenario = _scenario(
        initial_messages=[{"role": "assistant", "content": "Welcome to the shop."}],
        user_turns=["I have a question"],
    )
    user = fake.user()
    conversation = await run_conversation(scenario, fake.target(), user=user)
    sources = [(t.role, t.source) for t in conversation.turns[:4]]
    assert sources == [
        ("assistant", "scripted"),
        ("user", "scripted"),
        ("assistant", "live"),
        ("user", "simulated"),
    ]


async def test_author_tools_run_and_unknown_tools_are_errors_the_target_sees() -> None:
    row = scenario_row(4, user_turns=["go"], tools=[{"name": "refund", "parameters": {}}])
    scenario = load_scenarios([row]).scenarios[0]
    seen: list[dict[str, Any]] = []

    async def add(a: int, b: int) -> dict[str, int]:
        seen.append({"a": a, "b": b})
        return {"sum": a + b}

    def target(turns: tuple[Turn, ...]) -> TargetReply | str:
        if turns[-1].role == "tool":
            return "done"
        calls = (
            ToolCall("1", "add", '{"a": 2, "b": 3}'),
            ToolCall("2", "refund", '{"order": 4}'),
            ToolCall("3", "rm_rf", "{}"),
            ToolCall("4", "add", "not json"),
        )
        return TargetReply("", calls)

    conversation = await run_conversation(scenario, target, tools=[Tool("add", add)])
    results = {c.name + c.id: (c.result, c.error) for c in conversation.turns[1].tool_calls}
    assert results["add1"] == ('{"sum": 5}', None)
    assert results["refund2"][1] == "tool 'refund' has no recorded result for these arguments"
    assert results["rm_rf3"][1] == "no tool named 'rm_rf'"
    assert results["add4"][1] is not None and results["add4"][1].startswith(
        "the arguments are not JSON"
    )
    assert seen == [{"a": 2, "b": 3}]
    # a function's result is live; none of these came from the row's recorded results
    assert {t.source for t in conversation.turns if t.role == "tool"} == {"live"}
    assert [t.content for t in conversation.turns if t.role == "tool"][
        2
    ] == "error: no tool named 'rm_rf'"


async def test_a_failing_target_fails_that_conversation_only(fake: Fake) -> None:
    fake.server.enqueue(Status(400))
    scenarios = load_scenarios(
        [scenario_row(1, user_turns=["hi"]), scenario_row(2, user_turns=["hi"])]
    )
    first, second = await run_conversations(scenarios.scenarios, fake.target())
    assert first.outcome.stop_reason == "failed"
    assert first.outcome.failure_type == "ProviderHTTPError"
    assert "the target failed" in (first.outcome.failure or "")
    assert second.outcome.stop_reason == "script_end"


async def test_a_target_that_never_stops_calling_tools_fails_closed() -> None:
    scenario = _scenario(user_turns=["go"])

    def target(turns: tuple[Turn, ...]) -> TargetReply:
        return TargetReply("", (ToolCall(str(len(turns)), "lookup_order", '{"order_id": 4}'),))

    conversation = await run_conversation(scenario, target, max_tool_rounds=2)
    assert conversation.outcome.stop_reason == "failed"
    assert "max_tool_rounds" in (conversation.outcome.failure or "")
    assert sum(t.role == "assistant" for t in conversation.turns) == 3


async def test_a_conversation_round_trips_through_json(fake: Fake) -> None:
    user = fake.user()
    conversation = await run_conversation(_scenario(), fake.target(), user=user)
    text = conversation.to_json()
    back = Conversation.from_json(text)
    assert back == conversation
    assert back.to_json() == text
    assert json.loads(text)["turns"][1]["tool_calls"][0]["arguments"] == '{"order_id": 4}'


async def test_a_goal_check_that_raises_fails_that_conversation_only() -> None:
    def broken(scenario: object, turns: tuple[Turn, ...]) -> bool:
        raise KeyError("state")

    scenario = _scenario(stop={"goal_check": "shipped"}, user_turns=["hi"])
    conversation = await run_conversation(
        scenario, lambda turns: "hello", goal_checks={"shipped": broken}
    )
    assert conversation.outcome.stop_reason == "failed"
    assert conversation.outcome.failure_type == "KeyError"
    assert "the goal check failed" in (conversation.outcome.failure or "")


async def test_an_async_python_target_and_async_goal_check() -> None:
    seen: list[int] = []

    async def target(turns: tuple[Turn, ...]) -> str:
        seen.append(len(turns))
        return f"reply to {turns[-1].content}"

    async def answered(scenario: object, turns: tuple[Turn, ...]) -> bool:
        return turns[-1].content == "reply to second"

    scenario = _scenario(stop={"goal_check": "shipped"}, user_turns=["first", "second", "third"])
    conversation = await run_conversation(scenario, target, goal_checks={"shipped": answered})
    assert conversation.outcome.stop_reason == "goal_reached"
    assert seen == [1, 3]  # the conversation so far, each time
    assert conversation.turns[-1].latency_s is not None
