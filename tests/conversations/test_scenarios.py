"""Scenario rows from JSONL and YAML: validated with row and field, content-hashed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conversations._fake import scenario_row

from aieval.conversations import load_scenarios
from aieval.errors import DatasetError

FULL: dict[str, Any] = {
    "id": "refund-1",
    "goal": "get a refund for order 7",
    "persona": "an impatient customer",
    "initial_messages": [{"role": "assistant", "content": "Hi! How can I help?"}],
    "user_turns": ["I want my money back"],
    "max_turns": 5,
    "stop": {"user_done": True, "goal_check": "refunded"},
    "tools": [
        {
            "name": "refund",
            "description": "Refund an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
            "calls": [{"arguments": {"order_id": 7}, "result": {"ok": True}}],
            "result": "no such order",
        }
    ],
    "expected_state": {"refunded": [7]},
    "checks": {"turn": ["polite"], "conversation": ["resolved"]},
    "metadata": {"team": "support"},
}
NAMES = {"checks": {"polite", "resolved"}, "goal_checks": {"refunded"}}


def _jsonl(tmp_path: Path, rows: list[Any]) -> Path:
    path = tmp_path / "scenarios.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_field_is_read(tmp_path: Path) -> None:
    (scenario,) = load_scenarios(_jsonl(tmp_path, [FULL]), **NAMES)
    assert scenario.id == "refund-1" and scenario.max_turns == 5
    assert scenario.initial_messages[0].role == "assistant"
    assert scenario.user_turns == ("I want my money back",)
    assert scenario.stop.goal_check == "refunded"
    tool = scenario.tool("refund")
    assert tool is not None
    assert tool.result_for({"order_id": 7}) == '{"ok": true}'
    assert tool.result_for({"order_id": 8}) == "no such order"
    # a recorded result answers the same JSON only: 7.0 or true is not 7
    assert tool.result_for({"order_id": 7.0}) == "no such order"
    assert tool.result_for({"order_id": True}) == "no such order"
    assert scenario.expected_state == {"refunded": [7]}
    assert scenario.checks.turn == ("polite",) and scenario.checks.conversation == ("resolved",)


def test_yaml_and_jsonl_give_the_same_scenarios_and_version(tmp_path: Path) -> None:
    import yaml

    rows = [FULL, scenario_row(3)]
    yaml_path = tmp_path / "scenarios.yaml"
    yaml_path.write_text(yaml.safe_dump({"scenarios": rows}), encoding="utf-8")
    from_yaml = load_scenarios(yaml_path, **NAMES)
    from_jsonl = load_scenarios(_jsonl(tmp_path, rows), **NAMES)
    assert from_yaml.scenarios == from_jsonl.scenarios
    assert from_yaml.version == from_jsonl.version


def test_the_version_is_the_rows_in_any_order_and_changes_with_any_row() -> None:
    rows = [scenario_row(n) for n in range(5)]
    version = load_scenarios(rows).version
    assert load_scenarios(list(reversed(rows))).version == version
    changed = [*rows[:4], scenario_row(4, persona="someone else")]
    assert load_scenarios(changed).version != version
    assert len(version) == 32


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"goal": ""}, "goal", "non-empty string"),
        ({"max_turns": 0}, "max_turns", "from 1 to 1000"),
        ({"max_turns": True}, "max_turns", "whole number"),
        ({"user_turns": "hello"}, "user_turns", "expected a list"),
        ({"user_turns": ["a", 3]}, "user_turns[1]", "non-empty string"),
        ({"max_turns": 1, "user_turns": ["a", "b"]}, "user_turns", "more than max_turns"),
        (
            {"initial_messages": [{"role": "system", "content": "x"}]},
            "initial_messages[0].role",
            "'user' or 'assistant'",
        ),
        ({"stop": {"user_done": "yes"}}, "stop.user_done", "true or false"),
        ({"stop": {"after": 3}}, "stop.after", "unknown field"),
        (
            {"stop": {"goal_check": "os.system"}},
            "stop.goal_check",
            "not a goal check the eval registered",
        ),
        ({"checks": {"turn": ["exec"]}}, "checks.turn[0]", "not a check the eval registered"),
        ({"tools": [{"name": "t", "function": "os:system"}]}, "tools[0].function", "unknown field"),
        ({"tools": [{"name": "t"}, {"name": "t"}]}, "tools[1].name", "declared twice"),
        (
            {"tools": [{"name": "t", "calls": [{"arguments": {}}]}]},
            "tools[0].calls[0].result",
            "missing",
        ),
        ({"provider": "openai"}, "provider", "unknown field"),
        ({"base_url": "http://evil.example"}, "base_url", "unknown field"),
        ({"expected_state": float("nan")}, "expected_state", "not a plain JSON value"),
    ],
)
def test_a_bad_row_is_refused_naming_line_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, says: str
) -> None:
    rows = [scenario_row(1), scenario_row(2, **change)]
    path = tmp_path / "scenarios.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_scenarios(path, checks={"polite"}, goal_checks={"refunded"})
    message = str(caught.value)
    assert message.startswith(f"{path}, line 2: field {field!r}: ")
    assert says in message
    assert caught.value.line == 2


def test_a_bad_yaml_row_is_named_by_its_position(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.yaml"
    path.write_text("- id: a\n  goal: g\n- id: b\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"scenarios.yaml: row 2: field 'goal': missing"):
        load_scenarios(path)


def test_values_json_cannot_carry_are_refused_in_rows_given_in_python() -> None:
    row = scenario_row(1, tools=[{"name": "t", "parameters": {"enum": {1, 2}}}])
    with pytest.raises(DatasetError, match=r"row 1: field 'tools\[0\].parameters': not a plain"):
        load_scenarios([row])


def test_check_names_are_refused_when_the_eval_registered_none() -> None:
    with pytest.raises(
        DatasetError, match=r"row 1: field 'checks.turn\[0\]': 'polite' is not a check"
    ):
        load_scenarios([scenario_row(1, checks={"turn": ["polite"]})])


def test_duplicate_ids_and_unknown_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"line 2: duplicate scenario id 'order-1'"):
        load_scenarios(_jsonl(tmp_path, [scenario_row(1), scenario_row(1)]))
    bad = tmp_path / "scenarios.csv"
    bad.write_text("id,goal\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"use \.jsonl, \.yaml or \.yml"):
        load_scenarios(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "goal": "g"}\n{"id": \n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"broken.jsonl, line 2: invalid JSON"):
        load_scenarios(broken)
