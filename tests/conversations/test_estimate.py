"""`--estimate` against what a run really calls: a counting Python target plays each
scenario (live and replayed) and the estimate must hold its count; an eval the run refuses
is refused by the estimate too."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conversations._fake import LOOKUP
from tests.support.cli import run_main

from aieval import Store
from aieval.conversations import (
    Replay,
    TargetReply,
    estimate_calls,
    estimate_run,
    load_scenarios,
    run_conversation,
)
from aieval.core import Conversation, ToolCall, Turn, Usage
from aieval.errors import ConfigError
from aieval.runner import load_eval


class Counting:
    """A target that counts its calls; it asks ``lookup_order`` ``asks`` times in a row
    before each answer."""

    def __init__(self, asks: int = 0) -> None:
        self.calls = 0
        self.asks = asks

    def __call__(self, turns: Sequence[Turn]) -> TargetReply:
        self.calls += 1
        pending = 0
        for turn in reversed(turns):
            if turn.role == "user":
                break
            pending += turn.role == "assistant"
        usage = Usage(input_tokens=10, output_tokens=2)
        if pending < self.asks:
            call = ToolCall(f"call_{self.calls}", "lookup_order", '{"order_id": 1}')
            return TargetReply("", (call,), usage)
        return TargetReply(f"answer {self.calls}", (), usage)


def scenario(**row: Any) -> Any:
    base = {"id": "s-1", "goal": "track order 1", "persona": "a customer"}
    return load_scenarios([{**base, **row}]).scenarios[0]


async def played(found: Any, target: Any, replay: Replay | None = None) -> Conversation:
    return await run_conversation(found, target, replay=replay)


async def test_a_strict_replay_counts_the_target_answers_not_the_scripted_opening() -> None:
    """An ``initial_messages`` assistant turn is scripted: replaying calls the target only
    for the answers after it (7, not 8)."""
    found = scenario(
        initial_messages=[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hello, how can I help?"},
        ],
        user_turns=[f"question {n}" for n in range(7)],
        max_turns=7,
    )
    live = await played(found, Counting())
    assert live.outcome.completed
    replaying = Counting()
    again = await played(found, replaying, Replay(live, "strict"))
    assert again.outcome.completed and replaying.calls == 7
    estimate = estimate_calls([found], 1, has_user=False, records={("s-1", 0): live}, mode="strict")
    assert (estimate.target_calls, estimate.target_calls_max) == (7, 7)
    assert estimate.tokens == 7 * 12 and estimate.tokens_unrecorded == 0


async def test_a_record_that_was_itself_replayed_is_called_again_and_its_tokens_unknown() -> None:
    """A run that replayed in mode 'all' holds only ``replayed`` turns: a strict replay of it
    still calls the target for each answer (7, not 1), and its tokens are a lower bound."""
    found = scenario(user_turns=[f"question {n}" for n in range(7)], max_turns=7)
    live = await played(found, Counting())
    copied = await played(found, None, Replay(live, "all"))
    assert copied.outcome.completed
    assert {t.source for t in copied.turns if t.role == "assistant"} == {"replayed"}
    replaying = Counting()
    await played(found, replaying, Replay(copied, "strict"))
    assert replaying.calls == 7
    estimate = estimate_calls(
        [found], 1, has_user=False, records={("s-1", 0): copied}, mode="strict"
    )
    assert estimate.target_calls == estimate.target_calls_max == 7
    assert estimate.tokens_unrecorded == 7
    assert (
        "tokens: at least 0 (7 recorded answers carry no token counts: 7 from a record that was "
        "itself replayed)" in estimate.lines()
    )


async def test_a_live_record_without_usage_says_why_not_that_it_was_replayed() -> None:
    """A live record whose target reported no usage (a Python target), or a records file's
    import without it, is not called "itself replayed": the estimate says which it is."""
    found = scenario(user_turns=[f"question {n}" for n in range(3)], max_turns=3)
    live = await played(found, Counting())
    bare = dataclasses.replace(
        live, turns=tuple(dataclasses.replace(t, usage=None) for t in live.turns)
    )
    assert {t.source for t in bare.turns if t.role == "assistant"} == {"live"}
    records = {("s-1", 0): bare}
    stored = estimate_calls([found], 1, has_user=False, records=records, mode="strict")
    assert stored.tokens_unrecorded == 3
    assert stored.lines()[3] == (
        "tokens: at least 0 (3 recorded answers carry no token counts: 3 whose target "
        "reported no usage (a Python target, or a provider that sends none))"
    )
    imported = estimate_calls(
        [found], 1, has_user=False, records=records, mode="branch", from_file=True
    )
    assert imported.lines()[3] == (
        "tokens: at least 0 (3 recorded answers carry no token counts: 3 that the records "
        "file holds without usage (an import without it))"
    )


async def test_live_tool_rounds_are_counted_up_to_the_tool_budget() -> None:
    """One user turn, two tool rounds before the answer: 3 calls, within the estimate's most,
    which says it counts the tool rounds."""
    found = scenario(
        user_turns=["where is order 1"],
        max_turns=1,
        tools=[{**LOOKUP, "calls": [{"arguments": {"order_id": 1}, "result": "shipped"}]}],
    )
    target = Counting(asks=2)
    live = await run_conversation(found, target, max_tool_rounds=2)
    assert live.outcome.completed and target.calls == 3
    estimate = estimate_calls([found], 1, has_user=False, max_tool_rounds=2)
    assert estimate.target_calls <= 3 <= estimate.target_calls_max == 3
    assert estimate.lines()[1] == (
        "target calls: 1 to 3 (the most counts up to 2 tool rounds per answer, max_tool_rounds)"
    )
    untooled = estimate_calls([scenario(max_turns=1)], 1, has_user=False, max_tool_rounds=2)
    assert untooled.target_calls_max == 1 and untooled.lines()[1] == "target calls: 1"


def test_estimate_of_a_run_without_a_target_is_refused_as_the_run_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    row = {"id": "s-1", "goal": "g", "persona": "p", "user_turns": ["hi"], "max_turns": 1}
    (tmp_path / "scenarios.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    eval_file = {"name": "support", "dataset": "scenarios.jsonl", "conversation": {}}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(eval_file), encoding="utf-8")
    said = []
    for extra in ([], ["--estimate"]):
        done = run_main(
            capsys, monkeypatch, "run", "eval.yaml", "--db", "r.db", *extra, cwd=tmp_path
        )
        assert done.returncode == 2, (extra, done.stdout)
        assert "Traceback" not in done.stderr and "target calls" not in done.stdout
        said.append(" ".join(done.stderr.split()))
    assert said[0] == said[1]
    assert "give the assistant under test as the target" in said[1]


def test_estimate_of_a_run_with_two_assistants_is_refused_as_the_run_is(tmp_path: Path) -> None:
    row = {"id": "s-1", "goal": "g", "persona": "p", "user_turns": ["hi"], "max_turns": 1}
    (tmp_path / "scenarios.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    twice = {"target": "tests.conversations._authored:kind"}
    eval_file = {"name": "support", "dataset": "scenarios.jsonl", "conversation": twice}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(eval_file), encoding="utf-8")
    config = load_eval(tmp_path / "eval.yaml")
    with Store(tmp_path / "r.db") as store:
        with pytest.raises(ConfigError, match="give the assistant under test once"):
            estimate_run(config, store=store, target="tests.conversations._authored:kind")
        assert store.list_runs() == []


async def test_the_live_least_counts_the_scripted_turns_unless_a_goal_check_can_end_early() -> None:
    """Four scripted turns are all answered (4 calls, the least 4, not 1); with a goal check
    that can end the conversation after one answer, the least stays 1."""
    found = scenario(user_turns=[f"question {n}" for n in range(4)], max_turns=6)
    target = Counting()
    live = await played(found, target)
    assert live.outcome.completed and target.calls == 4
    estimate = estimate_calls([found], 1, has_user=False)
    assert estimate.target_calls == 4 <= estimate.target_calls_max == 6
    row = {"id": "s-1", "goal": "g", "persona": "p", "user_turns": ["a", "b", "c", "d"]}
    rows = [{**row, "stop": {"goal_check": "done"}}]
    goal = load_scenarios(rows, goal_checks={"done"}).scenarios[0]
    assert estimate_calls([goal], 1, has_user=False).target_calls == 1
