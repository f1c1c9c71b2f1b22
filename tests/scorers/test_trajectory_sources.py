"""trajectory_match on recorded runs, traces and conversations: one matcher, three sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval import run
from aieval.conversations import Played, scenario_from_row
from aieval.core import (
    TRAJECTORY_KEY,
    Conversation,
    ConversationOutcome,
    ToolCall,
    Trajectory,
    Turn,
)
from aieval.errors import ConfigError, DatasetError
from aieval.runner import load_eval, run_eval
from aieval.scorers import trajectory_match
from aieval.store import Store
from aieval.traces import TraceReading, iter_trace_runs
from aieval.workflows import StepResult, WorkflowRun

TRACES = Path(__file__).parents[1] / "conformance" / "agent_traces"


def _message(*calls: tuple[str, dict[str, Any]]) -> str:
    return json.dumps(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": str(i), "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(calls)
            ],
        }
    )  # fmt: skip


def test_a_recorded_run_scores_stores_and_reads_back_the_trajectory(tmp_path: Path) -> None:
    rows = [
        {
            "id": "three-of-four",
            "prompt": "plan my trip",
            "prediction": _message(("search", {"q": "Oslo"}), ("weather", {"city": "oslo"})),
            "expected_tool_calls": [
                {"name": "search", "arguments": {"q": "Oslo"}},
                {"name": "weather", "arguments": {"city": "Oslo"}},
                {"name": "book", "arguments": {"hotel": 1}},
            ],
            "checks": [{"trajectory_match": {"mode": "superset", "normalize": ["case"],
                                             "threshold": 0.6, "name": "lenient"}}],
        },
        {
            "id": "exact",
            "prompt": "weather",
            "prediction": _message(("weather", {"city": "Oslo"})),
            "expected_tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}}],
        },
    ]  # fmt: skip
    result = run(
        name="trajectories",
        dataset=rows,
        scorers=[trajectory_match("in_order")],
        store=tmp_path / "runs.db",
    )
    by_id = {s.id: s for s in result.samples}
    strict = by_id["three-of-four"].scores["trajectory_match"]
    assert strict.value == pytest.approx(1 / 3)  # search matched; weather's city differs in case
    assert strict.reason == "in_order: matched search; wrong arguments for weather; missing book"
    lenient = by_id["three-of-four"].scores["row:lenient"]
    assert lenient.value == pytest.approx(2 / 3)  # passes its own threshold of 0.6
    assert by_id["exact"].scores["trajectory_match"].value == 1.0
    assert by_id["exact"].passed and not by_id["three-of-four"].passed
    stored = Store(tmp_path / "runs.db").get_sample(result.id, "three-of-four")
    trajectory = Trajectory.from_dict(stored.scores["trajectory_match"].metadata[TRAJECTORY_KEY])
    assert [c.name for c in trajectory.called] == ["search", "weather"]
    assert trajectory.recall == pytest.approx(1 / 3)


def test_a_row_naming_an_unknown_normalizer_is_refused_when_read(tmp_path: Path) -> None:
    rows = [
        {"id": "r", "prompt": "x", "prediction": "[]", "expected_tool_calls": [],
         "checks": [{"trajectory_match": {"normalize": ["builtins:eval"]}}]},
    ]  # fmt: skip
    with pytest.raises(DatasetError, match=r"trajectory_match.normalize: unknown normalizer"):
        run(name="bad", dataset=rows, scorers=[], store=tmp_path / "runs.db")


def test_a_rows_bad_check_is_the_one_cause_given_when_the_eval_has_no_scorers(
    tmp_path: Path,
) -> None:
    row = {"id": "a", "input": "x", "prediction": "[]", "expected_tool_calls": ["search"],
           "checks": [{"trajectory_match": {"normalize": ["builtins:eval"]}}]}  # fmt: skip
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    spec = {"name": "e", "dataset": "rows.jsonl", "scorers": []}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(DatasetError, match=r"unknown normalizer 'builtins:eval'") as refused:
        load_eval(tmp_path / "eval.yaml")
    assert "give at least one scorer" not in str(refused.value)
    assert "rows.jsonl, line 1: checks[0]: trajectory_match.normalize" in str(refused.value)


def test_a_run_over_a_real_trace_scores_its_tool_calls() -> None:
    scorer = trajectory_match(
        "superset", arguments="ignore", expected_calls=["get_order", "refund"]
    )
    result = run(
        name="traced",
        dataset=TRACES / "openai_v2_handoffs.jsonl",
        scorers=[scorer],
        store=None,
    )
    [sample] = result.samples
    score = sample.scores["trajectory_match"]
    assert score.value == 0.5  # get_order made, refund never
    assert score.reason == "superset: matched get_order; missing refund"
    [trace] = list(iter_trace_runs(TRACES / "openai_v2_handoffs.jsonl", TraceReading()))
    direct = scorer.fn(None, None, **scorer.options, output=trace)
    assert Trajectory.from_dict(direct.metadata[TRAJECTORY_KEY]).called == (
        Trajectory.from_dict(score.metadata[TRAJECTORY_KEY]).called
    )


def test_a_traced_tool_failure_is_the_calls_error() -> None:
    steps = [
        StepResult("plan", metadata={"tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}),
        StepResult(
            "act",
            metadata={"tool_calls": [{"name": "book", "arguments": {}, "executed": True,
                                      "status": "failed", "error": "503 from booking"}]},
        ),
    ]  # fmt: skip
    scorer = trajectory_match("strict", arguments="ignore")
    score = scorer.fn(
        None, ["search", "book"], **scorer.options, output=WorkflowRun("r", steps=steps)
    )
    trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert score.value == 1.0  # it still passed: it recovered from the tool error
    assert [c.error for c in trajectory.called] == [None, "503 from booking"]


def test_a_conversation_is_matched_with_its_scenarios_expected_calls() -> None:
    scenario = scenario_from_row(
        {"id": "refund", "goal": "get a refund",
         "expected_tool_calls": ["lookup_order", {"name": "refund", "arguments": {"order": "A1"}}]},
        source="scenarios.jsonl",
    )  # fmt: skip
    turns = (
        Turn("user", "refund A1 please", "scripted"),
        Turn("assistant", "", "live",
             tool_calls=(ToolCall("c1", "lookup_order", '{"order": "A1"}', "shipped"),)),
        Turn("tool", "shipped", "scripted", tool_call_id="c1"),
        Turn("assistant", "", "live",
             tool_calls=(ToolCall("c2", "refund", '{"order": "A1"}', None, "no tool named refund"),
                         ToolCall("c3", "delete_order", "{bad", None))),
        Turn("assistant", "Done.", "live"),
    )  # fmt: skip
    conversation = Conversation("refund", 0, turns, ConversationOutcome("user_done", True))  # type: ignore[arg-type]
    scorer = trajectory_match("subset", forbidden=["delete_order"])
    score = scorer.fn(None, None, **scorer.options, output=Played(scenario, conversation))
    assert score.value == 0.0  # a forbidden tool was called
    assert score.reason == ("subset: matched lookup_order, refund; extra delete_order (forbidden)")
    trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert trajectory.called[1].error == "no tool named refund"
    assert trajectory.called[2].argument_error is not None
    assert trajectory.precision == pytest.approx(2 / 3)


def test_a_scenarios_bad_expected_calls_are_refused_naming_row_and_field() -> None:
    with pytest.raises(DatasetError, match=r"line 4: field 'expected_tool_calls'"):
        scenario_from_row(
            {"id": "x", "goal": "g", "expected_tool_calls": [{"arguments": {}}]},
            source="scenarios.jsonl",
            line=4,
        )


def test_a_conversation_run_scores_the_transcripts_calls(tmp_path: Path) -> None:
    lookup = {
        "name": "lookup_order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
        "calls": [{"arguments": {"order_id": 1}, "result": "shipped"}],
    }
    rows = [
        {"id": "track", "goal": "track order 1", "user_turns": ["where is order 1?"],
         "max_turns": 1, "tools": [lookup],
         "expected_tool_calls": [{"name": "lookup_order", "arguments": {"order_id": 1}},
                                 "send_survey"]},
    ]  # fmt: skip
    (tmp_path / "scenarios.yaml").write_text(yaml.safe_dump(rows), encoding="utf-8")
    (tmp_path / "eval.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "tools",
                "dataset": "scenarios.yaml",
                "conversation": {"target": "tests.scorers._trajectory_agent:agent"},
                "scorers": [{"trajectory_match": {"mode": "in_order"}}],
            }
        ),
        encoding="utf-8",
    )
    (result,) = run_eval(load_eval(tmp_path / "eval.yaml"), store=tmp_path / "runs.db")
    [sample] = result.samples
    score = sample.scores["trajectory_match"]
    assert score.value == 0.5
    assert score.reason == "in_order: matched lookup_order; missing send_survey"
    trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert trajectory.called[0].arguments == {"order_id": 1}


def test_a_delegated_agents_calls_are_out_of_the_trajectory_but_a_forbidden_one_counts(
    tmp_path: Path,
) -> None:
    # the real openai-v2 delegation trace, with delete_account called inside policy_agent
    # (the agent billing used as a tool): docs/workflows.md "Handoffs and delegation"
    from tests.workflows.test_delegated_calls import _with_a_call_inside_the_delegated_agent

    [trace] = list(
        iter_trace_runs(_with_a_call_inside_the_delegated_agent(tmp_path), TraceReading())
    )
    plain = trajectory_match("strict", arguments="ignore", expected_calls=["check_refund_policy"])
    score = plain.fn(None, None, **plain.options, output=trace)
    assert (score.value, score.reason) == (1.0, "strict: matched check_refund_policy")
    guarded = trajectory_match(
        "strict",
        arguments="ignore",
        expected_calls=["check_refund_policy"],
        forbidden=["delete_account"],
    )
    score = guarded.fn(None, None, **guarded.options, output=trace)
    assert score.value == 0.0
    assert score.reason == (
        "strict: matched check_refund_policy (a forbidden tool was called by an agent used as "
        "a tool: delete_account)"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "sideways"}, r"trajectory_match\.mode: unknown mode 'sideways'"),
        ({"arguments": "fuzzy"}, r"trajectory_match\.arguments: unknown argument mode 'fuzzy'"),
        ({"normalize": ["os.system"]}, r"trajectory_match\.normalize: unknown normalizer"),
        ({"expected_calls": [{"arguments": {}}]}, r"expected_calls\[0\]: a tool call needs"),
    ],
)
def test_an_eval_files_bad_options_are_refused_at_load_naming_file_and_option(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    (tmp_path / "rows.jsonl").write_text('{"id": "a", "input": "x", "prediction": "[]"}\n')
    spec = {"name": "e", "dataset": "rows.jsonl", "scorers": [{"trajectory_match": options}]}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match=message) as refused:
        run_eval(load_eval(tmp_path / "eval.yaml"), store=tmp_path / "runs.db")
    assert "eval.yaml: trajectory_match." in str(refused.value)  # the file, scorer and option
    assert not (tmp_path / "runs.db").exists() or not Store(tmp_path / "runs.db").list_runs()


def test_a_samples_error_names_the_scorer_once(tmp_path: Path) -> None:
    rows = [{"id": "a", "input": "x", "prediction": "[]", "expected_tool_calls": 42}]
    result = run(
        name="once",
        dataset=rows,
        scorers=[trajectory_match("strict")],
        store=tmp_path / "runs.db",
        max_error_rate=1.0,
    )
    error = result.samples[0].scores["trajectory_match"].error
    assert error is not None and "expected a list of tool calls" in error
    assert "trajectory_match: trajectory_match" not in f"trajectory_match: {error}"
    assert not error.startswith("trajectory_match")


# --- parallel calls: each source says which calls were issued together --------------------


def test_each_source_gives_the_batch_its_calls_were_issued_in() -> None:
    messages = [
        {"role": "user", "content": "weather in SF and London?"},
        json.loads(_message(("weather", {"city": "SF"}), ("weather", {"city": "London"}))),
        {"role": "tool", "content": "sunny"},
        json.loads(_message(("book", {}))),
    ]
    made = trajectory_match("strict", arguments="ignore").fn(
        None, ["weather", "weather", "book"], mode="strict", arguments="ignore", output=messages
    )
    assert [c.batch for c in Trajectory.from_dict(made.metadata[TRAJECTORY_KEY]).called] == [
        1, 1, 3
    ]  # fmt: skip
    steps = [
        StepResult("plan", metadata={"tool_calls": [{"name": "search"}, {"name": "weather"}]}),
        StepResult("think"),
        StepResult("act", metadata={"tool_calls": [{"name": "book"}]}),
    ]
    traced = trajectory_match("strict").fn(
        None, ["search"], mode="strict", output=WorkflowRun("r", steps=steps)
    )
    assert [c.batch for c in Trajectory.from_dict(traced.metadata[TRAJECTORY_KEY]).called] == [
        0, 0, 2
    ]  # fmt: skip
    turns = (
        Turn("user", "refund A1 and A2", "scripted"),
        Turn("assistant", "", "live",
             tool_calls=(ToolCall("c1", "refund", '{"order": "A2"}', "ok"),
                         ToolCall("c2", "refund", '{"order": "A1"}', "ok"))),
        Turn("tool", "ok", "scripted", tool_call_id="c1"),
        Turn("assistant", "", "live", tool_calls=(ToolCall("c3", "notify", "{}", "ok"),)),
    )  # fmt: skip
    conversation = Conversation("r", 0, turns, ConversationOutcome("user_done", True))  # type: ignore[arg-type]
    talked = trajectory_match("strict").fn(
        None,
        [{"name": "refund", "arguments": {"order": "A1"}},
         {"name": "refund", "arguments": {"order": "A2"}}, {"name": "notify"}],
        mode="strict",
        output=conversation,
    )  # fmt: skip
    stored = Trajectory.from_dict(talked.metadata[TRAJECTORY_KEY])
    assert [c.batch for c in stored.called] == [1, 1, 3]
    assert talked.value == 1.0  # the two refunds of one turn, in either order
    flat = trajectory_match("strict").fn(None, ["a"], mode="strict", output=[{"name": "a"}])
    assert Trajectory.from_dict(flat.metadata[TRAJECTORY_KEY]).called[0].batch is None


def test_expected_calls_given_as_messages_have_batches_a_flat_list_none() -> None:
    scorer = trajectory_match("strict", arguments="ignore")
    as_messages = [json.loads(_message(("a", {}), ("b", {}))), json.loads(_message(("c", {})))]
    score = scorer.fn(None, as_messages, **scorer.options, output=["a", "b", "c"])
    stored = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert [e.batch for e in stored.expected] == [0, 0, 1]
    flat = scorer.fn(None, ["a", "b"], **scorer.options, output=["a", "b"])
    assert [e.batch for e in Trajectory.from_dict(flat.metadata[TRAJECTORY_KEY]).expected] == [
        None, None
    ]  # fmt: skip


def test_a_recorded_call_cannot_set_its_own_batch() -> None:
    # only the message structure says which calls were issued together: a "batch" key in a
    # recorded call is data, so a flat list reordered still fails strict
    made = [{"name": "b", "arguments": {}, "batch": 0}, {"name": "a", "arguments": {}, "batch": 0}]
    score = trajectory_match("strict").fn(None, ["a", "b"], mode="strict", output=made)
    stored = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert [c.batch for c in stored.called] == [None, None]
    assert score.value == pytest.approx(0.5)
