"""`first_regressed_turn`: the first turn where a candidate conversation did worse than its
baseline, by turn check values, by a whole-conversation check, or by a failure."""

from __future__ import annotations

from aieval.conversations import CheckValues, did_worse, first_regressed_turn
from aieval.core import Conversation, ConversationOutcome, ToolCall, Turn


def record(*turns: Turn, failure: str | None = None) -> Conversation:
    outcome = (
        ConversationOutcome("failed", False, failure, "TargetError")
        if failure
        else ConversationOutcome("user_done", True)
    )
    return Conversation("s", 0, turns, outcome)


def user(text: str) -> Turn:
    return Turn("user", text, "scripted")


def bot(text: str, *calls: ToolCall) -> Turn:
    return Turn("assistant", text, "live", tool_calls=calls)


def test_a_turn_checks_drop_is_found_at_its_turn_not_at_the_last() -> None:
    base = record(user("a"), bot("fine"), user("b"), bot("fine"))
    cand = record(user("a"), bot("fine"), user("b"), bot("rude\n  <b>x</b>"))
    found = first_regressed_turn(
        base,
        cand,
        CheckValues(per_turn={"polite": {2: 1.0, 4: 1.0}}),
        CheckValues(per_turn={"polite": {2: 1.0, 4: 0.0}}),
    )
    assert found is not None
    assert (found.turn, found.exchange, found.check) == (4, 2, "polite")
    assert (found.baseline, found.candidate) == (1.0, 0.0)
    assert (found.baseline_said, found.candidate_said) == (
        "assistant: fine",
        "assistant: rude <b>x</b>",
    )


def test_an_answer_where_the_baseline_had_none_is_held_to_the_baselines_least() -> None:
    call = ToolCall("c1", "lookup", '{"id": 1}', result="ok")
    base = record(user("a"), bot("fine"))
    cand = record(
        user("a"), bot("", call), Turn("tool", "ok", "live", tool_call_id="c1"), bot("no")
    )
    found = first_regressed_turn(
        base,
        cand,
        CheckValues(per_turn={"polite": {2: 0.5}}),
        CheckValues(per_turn={"polite": {2: 1.0, 4: 0.25}}),
    )
    assert found is not None and (found.turn, found.baseline, found.candidate) == (4, 0.5, 0.25)
    assert found.baseline_said == "(no turn)"


def test_a_whole_check_that_dropped_is_placed_at_the_first_changed_turn() -> None:
    base = record(user("a"), bot("shipped"), user("b"), bot("bye"))
    cand = record(user("a"), bot("shipped"), user("b"), bot("cancelled"))
    found = first_regressed_turn(
        base, cand, CheckValues({"final_state": 1.0}), CheckValues({"final_state": 0.0})
    )
    assert found is not None and (found.turn, found.check) == (4, "final_state")


def test_a_failure_is_placed_at_the_turn_it_could_not_make() -> None:
    base = record(user("a"), bot("fine"))
    cand = record(user("a"), failure="the target timed out")
    found = first_regressed_turn(base, cand, CheckValues(), CheckValues(error="timed out"))
    assert found is not None and (found.turn, found.check) == (2, "error")
    assert found.candidate_said == "failed: the target timed out"


def test_equal_or_better_is_no_regression() -> None:
    same = record(user("a"), bot("fine"))
    checks = CheckValues({"polite@min": 1.0}, {"polite": {2: 1.0}})
    assert not did_worse(checks, checks)
    assert first_regressed_turn(same, same, checks, checks) is None
    better = CheckValues({"polite@min": 1.0}, {"polite": {2: 1.0}})
    worse_before = CheckValues({"polite@min": 0.0}, {"polite": {2: 0.0}}, passed=False)
    assert first_regressed_turn(same, same, worse_before, better) is None
    # unscored (not applicable) on one side is no drop
    assert not did_worse(CheckValues({"x": 1.0}), CheckValues({"x": None}))
    # the pass flag alone
    assert did_worse(CheckValues(passed=True), CheckValues(passed=False))
