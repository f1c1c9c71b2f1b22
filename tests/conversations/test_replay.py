"""Replaying recorded conversations: strict, all (no connection at all) and branch; every miss
fails closed, naming scenario and turn."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from tests.conversations._fake import Fake, no_connections, responder, scenario_row
from tests.conversations._sdk import SDKAssistant, serve, through_the_sdk
from tests.support.openai_server import OpenAIServer, Reply

from aieval.conversations import (
    ChatTarget,
    Replay,
    Scenario,
    Tool,
    load_scenarios,
    run_conversation,
    run_conversations,
)
from aieval.core import Conversation, ConversationOutcome, ToolCall, Turn


def _scenarios(count: int, **changes: object) -> list[Scenario]:
    return list(load_scenarios([scenario_row(n, **changes) for n in range(count)]))


async def _recorded(fake: Fake, scenarios: Sequence[Scenario]) -> list[Conversation]:
    """Live conversations, through their JSON (as a store keeps them)."""
    live = await run_conversations(scenarios, fake.target(), user=fake.user())
    assert {c.outcome.stop_reason for c in live} == {"user_done"}
    return [Conversation.from_json(c.to_json()) for c in live]


def _user_calls(fake: Fake) -> int:
    return sum(r.body["model"] == "user-model" for r in fake.server.requests)


async def test_20_replays_give_byte_identical_transcripts_and_all_mode_connects_nowhere(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios = _scenarios(20)
    records = await _recorded(fake, scenarios)
    users = _user_calls(fake)

    strict = await run_conversations(scenarios, fake.target(), records=records, mode="strict")
    assert [c.transcript() for c in strict] == [r.transcript() for r in records]
    assert [c.outcome for c in strict] == [r.outcome for r in records]
    assert _user_calls(fake) == users  # the simulated user was not asked again
    sources = {(t.role, t.source) for c in strict for t in c.turns}
    assert sources == {("user", "replayed"), ("assistant", "live"), ("tool", "replayed")}

    asked = len(fake.server.requests)
    with no_connections(monkeypatch) as attempts:
        replayed = await run_conversations(scenarios, fake.target(), records=records, mode="all")
    assert attempts == []
    assert len(fake.server.requests) == asked
    assert [c.transcript() for c in replayed] == [r.transcript() for r in records]
    assert [c.outcome for c in replayed] == [r.outcome for r in records]
    assert {t.source for c in replayed for t in c.turns} == {"replayed"}
    # the replay spends nothing; strict spends only the target's tokens
    assert _tokens(replayed) == 0
    assert 0 < _tokens(strict) < _tokens(records)


def _tokens(conversations: Sequence[Conversation]) -> int:
    return sum(
        (t.usage.input_tokens or 0) + (t.usage.output_tokens or 0)
        for c in conversations
        for t in c.turns
        if t.usage is not None
    )


async def test_the_socket_guard_refuses_a_live_call(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios = _scenarios(1)
    records = await _recorded(fake, scenarios)
    with no_connections(monkeypatch) as attempts:
        (strict,) = await run_conversations(scenarios, fake.target(), records=records)
    assert attempts != []
    assert strict.outcome.failure_type == "ProviderConnectionError"


def _miss(conversation: Conversation, scenario_id: str, turn: int) -> None:
    assert conversation.outcome.stop_reason == "failed"
    assert conversation.outcome.failure_type == "ReplayMissError"
    assert f"scenario {scenario_id!r}, turn {turn}:" in (conversation.outcome.failure or "")


async def test_every_replay_miss_fails_closed_with_scenario_and_turn(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios = _scenarios(3)
    records = await _recorded(fake, scenarios)
    record = records[2]  # order 2: asks, insists twice, is done (13 turns)
    scenario = scenarios[2]
    cut = replace(record, turns=record.turns[:5], outcome=ConversationOutcome("max_turns", False))
    other_args = replace(
        record.turns[1],
        tool_calls=(replace(record.turns[1].tool_calls[0], arguments='{"order_id": 9}'),),
    )
    wrong_tool = replace(record, turns=(record.turns[0], other_args, *record.turns[2:]))
    swapped = replace(record, turns=(record.turns[1], *record.turns[1:]))
    tool_calls: list[object] = []
    lookup = Tool("lookup_order", lambda **kw: tool_calls.append(kw) or "live result")
    user_calls = _user_calls(fake)

    cases = [
        (cut, "strict", 6),  # the record ends at turn 5: the target is not asked past it
        # the target answers turn 6 live (the record holds it); its tool result is missing
        (replace(cut, turns=record.turns[:6]), "strict", 7),
        (cut, "all", 6),
        (replace(cut, turns=record.turns[:2]), "all", 3),  # the tool result is missing
        (wrong_tool, "strict", 3),  # the target asked what the record did not answer
        (swapped, "strict", 1),  # an assistant turn where the user speaks
    ]
    for broken, mode, turn in cases:
        replay = Replay(broken, mode)  # type: ignore[arg-type]
        with no_connections(monkeypatch) if mode == "all" else _nothing():
            conversation = await run_conversation(
                scenario, fake.target(), user=fake.user(), tools=[lookup], replay=replay
            )
        _miss(conversation, scenario.id, turn)

    opening = load_scenarios(
        [scenario_row(2, initial_messages=[{"role": "assistant", "content": "Welcome"}])]
    ).scenarios[0]
    _miss(await run_conversation(opening, fake.target(), replay=Replay(record)), "order-2", 1)
    (missing,) = await run_conversations(
        _scenarios(5)[4:], fake.target(), user=fake.user(), records=records
    )
    _miss(missing, "order-4", 1)
    assert tool_calls == []
    assert _user_calls(fake) == user_calls


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _nothing() -> _Nothing:
    return _Nothing()


def _answers(changes: dict[int, dict[int, str]]) -> Callable[[Any], Reply]:
    """The scripted model as a target answering the last user turn; in scenario ``n``
    (its questions say "of n") its k-th answer (0-based) changed as ``changes[n]`` says when it
    is asked (a change "tool" asks for ``lookup_order``)."""

    def respond(body: Any) -> Reply:
        messages = body["messages"]
        k = sum(m["role"] == "assistant" for m in messages)
        n = int(messages[0]["content"].rpartition(" of ")[2])
        last = messages[-1]
        if last["role"] == "tool":
            return Reply(f"the tool said {last['content']}")
        change = changes.get(n, {}).get(k)
        if change == "tool":
            return Reply("", tool_calls=((f"c{k}", "lookup_order", '{"order_id": 1}'),))
        return Reply(f"{change or 'answer'} {k}: {last['content']}")

    return respond


def _said(turns: Sequence[Turn]) -> list[tuple[str, str, tuple[ToolCall, ...]]]:
    return [(t.role, t.content, t.tool_calls) for t in turns]


@pytest.mark.slow
async def test_branch_replay_records_the_first_changed_turn(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 seeded changes of the target, which calls the scripted model through the real openai
    client: the branch turn is the first changed one each time."""
    serve(monkeypatch, openai_server.base_url)
    target = SDKAssistant()
    changes: dict[int, dict[int, str]] = {}
    openai_server.responder = _answers(changes)
    rows = [
        scenario_row(n, user_turns=[f"question {i} of {n}" for i in range(5)], max_turns=5)
        for n in range(50)
    ]
    scenarios = list(load_scenarios(rows))
    records = await run_conversations(scenarios, target)
    firsts = []
    for seed in range(len(scenarios)):
        rng = random.Random(seed)
        first = rng.randrange(5)
        changes[seed] = {rng.randrange(first, 6): "later change"}  # a change after the first
        changes[seed][first] = "tool" if seed % 2 else "changed"
        firsts.append(first)
    branches = await run_conversations(scenarios, target, records=records, mode="branch")
    for seed, (record, branched, first) in enumerate(zip(records, branches, firsts, strict=True)):
        position = 2 * first + 1  # user, assistant, user, assistant...
        assert branched.branched_at == position + 1, seed
        assert _said(branched.turns[:position]) == _said(record.turns[:position])
        assert _said(branched.turns[position:]) != _said(record.turns[position:])
        assert branched.turns[position].source == "live"
        assert (
            branched.turns[position].tool_calls
            if seed % 2
            else "changed" in branched.turns[position].content
        )
        after = [t for t in branched.turns[position + 1 :] if t.role != "assistant"]
        assert {t.source for t in after} <= {"scripted", "live"}
        assert branched.outcome.stop_reason in ("max_turns", "script_end")

    changes.clear()
    unchanged = await run_conversation(scenarios[0], target, replay=Replay(records[0], "branch"))
    assert unchanged.branched_at is None
    assert through_the_sdk(openai_server.requests)
    await target.aclose()


async def test_after_a_branch_the_simulated_user_goes_on_live(fake: Fake) -> None:
    scenarios = _scenarios(3)
    record = (await _recorded(fake, scenarios))[2]
    inner = fake.target()

    class Changed(ChatTarget):
        async def respond(self, turns, tools):  # type: ignore[no-untyped-def]
            reply = await inner.respond(turns, tools)
            answered = sum(t.role == "assistant" and not t.tool_calls for t in turns)
            return (
                replace(reply, content="Sorry, I cannot tell.")
                if answered == 1 and not reply.tool_calls
                else reply
            )

    before = _user_calls(fake)
    branched = await run_conversation(
        scenarios[2],
        Changed(inner.provider, "target-model"),
        user=fake.user(),
        replay=Replay(record, "branch"),
    )
    # turn 8 is the second answer (user, call, tool, answer, user, call, tool, answer)
    assert branched.branched_at == 8
    assert branched.turns[7].content == "Sorry, I cannot tell."
    assert _user_calls(fake) > before
    assert branched.turns[8].source == "simulated"
    assert branched.outcome.stop_reason == "user_done"


async def test_a_record_cut_anywhere_fails_closed_at_the_first_missing_turn(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenarios = _scenarios(20)
    records = await _recorded(fake, scenarios)
    users = _user_calls(fake)
    failed = ConversationOutcome("failed", False, "interrupted")
    cases = 0
    for scenario, record in zip(scenarios, records, strict=True):
        for cut in range(len(record.turns)):
            short = replace(record, turns=record.turns[:cut], outcome=failed)
            with no_connections(monkeypatch) as attempts:
                replayed = await run_conversation(scenario, replay=Replay(short, "all"))
            assert attempts == []
            _miss(replayed, scenario.id, cut + 1)
            if scenario.id in ("order-1", "order-2"):  # strict calls the target: a few suffice
                strict = await run_conversation(scenario, fake.target(), replay=Replay(short))
                # the first turn the record lacks is the miss: the target is not asked past it
                _miss(strict, scenario.id, cut + 1)
            cases += 1
    assert cases > 150
    assert _user_calls(fake) == users


async def test_a_changed_scripted_turn_or_opening_fails_closed_naming_both_texts(
    fake: Fake,
) -> None:
    """A replay of a record whose scenario's script (or initial message) changed since is a
    miss in every mode, never the old turn played under the new scenario."""
    script = ["Where is my order 0?", "And on Monday?"]
    (old,) = _scenarios(1, user_turns=script)
    (record,) = await _recorded(fake, [old])
    assert record.turns[4].content == "And on Monday?"
    (changed,) = _scenarios(1, user_turns=[script[0], "And on Tuesday?"])
    (opened,) = _scenarios(
        1, user_turns=script, initial_messages=[{"role": "user", "content": "Hi"}]
    )
    asked = len(fake.server.requests)
    for mode in ("strict", "all", "branch"):
        replayed = await run_conversation(changed, fake.target(), replay=Replay(record, mode))
        _miss(replayed, "order-0", 5)
        said = replayed.outcome.failure or ""
        assert "'And on Tuesday?'" in said and "'And on Monday?'" in said, said
        assert [t.content for t in replayed.turns if t.role == "user"] == [script[0]]
        opening = await run_conversation(opened, fake.target(), replay=Replay(record, mode))
        _miss(opening, "order-0", 1)
        assert "'Hi'" in (opening.outcome.failure or "")
    user_calls = [r for r in fake.server.requests[asked:] if r.body["model"] == "user-model"]
    assert user_calls == []


async def test_a_record_cut_at_its_end_is_a_miss_in_strict_and_branch_never_a_branch(
    fake: Fake,
) -> None:
    """A record whose last user turn was removed (its outcome still `user_done`) ends short:
    strict fails where the record lacks the turn; branch calls that a miss, not a changed
    answer, and asks the simulated user nothing."""
    (scenario,) = _scenarios(2)[1:]
    (record,) = await _recorded(fake, [scenario])
    assert record.turns[-1].role == "user" and record.outcome.stop_reason == "user_done"
    users = _user_calls(fake)
    for length in (len(record.turns) - 1, 3):  # the closing turn cut; cut before an answer
        short = replace(record, turns=record.turns[:length])
        for mode in ("strict", "branch"):
            replayed = await run_conversation(scenario, fake.target(), replay=Replay(short, mode))
            _miss(replayed, "order-1", length + 1)
            assert replayed.branched_at is None
            assert len(replayed.turns) == length
    assert _user_calls(fake) == users


async def test_a_user_done_with_only_the_marker_keeps_its_turn_and_replays(fake: Fake) -> None:
    """The simulated user's closing turn is kept even when it said only the done marker, so a
    record that ended by `user_done` always ends with the user's turn."""

    def terse(body: Any) -> Reply:
        reply = responder(body)
        return Reply("[DONE]") if reply.text.endswith("[DONE]") else reply

    fake.server.responder = terse
    (scenario,) = _scenarios(1)
    (record,) = await _recorded(fake, [scenario])
    assert (record.turns[-1].role, record.turns[-1].content) == ("user", "")
    for mode in ("strict", "branch", "all"):
        replayed = await run_conversation(scenario, fake.target(), replay=Replay(record, mode))
        assert replayed.transcript() == record.transcript()
        assert replayed.outcome == record.outcome


async def test_a_miss_on_a_tool_result_keeps_the_answer_that_asked_for_it(fake: Fake) -> None:
    """The stored record holds the turns played up to the miss: the target's tool-call turn
    (turn 2) is kept, and the message names the tool turn after it (turn 3)."""
    (scenario,) = _scenarios(3)[2:]
    (record,) = await _recorded(fake, [scenario])
    asked = record.turns[1]
    other = replace(asked, tool_calls=(replace(asked.tool_calls[0], arguments='{"order_id": 9}'),))
    changed = replace(record, turns=(record.turns[0], other, *record.turns[2:]))
    replayed = await run_conversation(scenario, fake.target(), replay=Replay(changed))
    _miss(replayed, "order-2", 3)
    assert len(replayed.turns) == 2
    kept = replayed.turns[1]
    assert (kept.role, kept.source) == ("assistant", "live")
    assert [(c.name, c.arguments, c.result) for c in kept.tool_calls] == [
        ("lookup_order", '{"order_id": 2}', None)
    ]
    assert Conversation.from_json(replayed.to_json()) == replayed


async def test_miss_messages_name_the_tool_call_and_advise_no_mode_already_in_use(
    fake: Fake,
) -> None:
    (scenario,) = _scenarios(3)[2:]
    (record,) = await _recorded(fake, [scenario])
    call = record.turns[1].tool_calls[0]
    unanswered = replace(record, turns=record.turns[:2])
    (replayed,) = await run_conversations([scenario], records=[unanswered], mode="all")
    _miss(replayed, "order-2", 3)
    said = replayed.outcome.failure or ""
    assert 'tool call lookup_order({"order_id": 2}) here' in said, said
    assert call.id not in said
    assert said.endswith("record the conversation again, or replay in branch mode")
    branch = await run_conversation(scenario, fake.target(), replay=Replay(unanswered, "branch"))
    _miss(branch, "order-2", 3)
    assert (branch.outcome.failure or "").endswith("record the conversation again")
    (missing,) = await run_conversations(
        _scenarios(5)[4:], fake.target(), records=[record], mode="branch"
    )
    _miss(missing, "order-4", 1)
    assert "branch mode" not in (missing.outcome.failure or "")
