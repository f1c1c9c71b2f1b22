import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.errors import ConfigError
from aieval.scorers.tools import (
    argument_exact_match,
    argument_f1,
    handoff_accuracy,
    handoff_graph_respected,
    no_forbidden_tool_invoked,
    parse_tool_calls,
    tool_call_schema_valid,
    tool_call_scorer,
    tool_selection_accuracy,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["C", "F"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "delete_account", "parameters": {}}},
]


def message(*calls: tuple[str, str]) -> dict[str, object]:
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ],
    }


@pytest.mark.parametrize(
    ("arguments", "passed", "problem"),
    [
        pytest.param('{"city": "Oslo", "unit": "C"}', True, "", id="valid"),
        pytest.param('{"city": "Oslo",', False, "not valid JSON", id="truncated-json"),
        pytest.param("{'city': 'Oslo'}", False, "not valid JSON", id="single-quotes"),
        pytest.param('["Oslo"]', False, "not an object", id="json-array"),
        pytest.param('{"unit": "K"}', False, "'city' is a required property", id="schema"),
        pytest.param('{"city": "Oslo", "x": 1}', False, "Additional properties", id="extra"),
        pytest.param("", True, "", id="empty-string-is-no-arguments-but-required-missing"),
    ],
)
def test_schema_gate(arguments: str, passed: bool, problem: str) -> None:
    if arguments == "":
        passed, problem = False, "required property"
    gate = tool_call_schema_valid(json.dumps(message(("get_weather", arguments))), TOOLS)
    assert gate.name == "tool_call_schema_valid"
    assert gate.passed is passed
    if not passed:
        assert problem in gate.reason
        assert gate.evidence["problems"][0]["call"] == 0


def test_schema_gate_unknown_tool() -> None:
    gate = tool_call_schema_valid([{"name": "rm_rf", "arguments": {}}], TOOLS)
    assert not gate.passed
    assert "unknown tool 'rm_rf'" in gate.reason


def test_malformed_arguments_are_kept_with_error() -> None:
    (call,) = parse_tool_calls(message(("get_weather", '{"city": Oslo}')))
    assert call.arguments is None and call.error and "not valid JSON" in call.error
    assert argument_f1(call.arguments, {"city": "Oslo"}) == 0.0
    assert argument_exact_match(call.arguments, {"city": "Oslo"}) == 0.0


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("not json", id="text"),
        pytest.param([{"function": {}}], id="no-name"),
        pytest.param([3], id="not-object"),
    ],
)
def test_unreadable_calls_raise(value: object) -> None:
    with pytest.raises(ConfigError, match="tool call"):
        parse_tool_calls(value)


def test_forbidden_gate() -> None:
    calls = message(("get_weather", "{}"), ("delete_account", "{}"))
    gate = no_forbidden_tool_invoked(calls, {"delete_account"})
    assert not gate.passed
    assert gate.evidence == {"invoked": ["delete_account"]}
    assert no_forbidden_tool_invoked(calls, {"transfer"}).passed


@pytest.mark.parametrize(
    ("called", "expected", "ordered", "want"),
    [
        pytest.param(["a", "b"], ["b", "a"], False, 1.0, id="unordered"),
        pytest.param(["a", "b"], ["b", "a"], True, 0.0, id="ordered"),
        pytest.param(["a", "a", "b"], ["a", "b"], False, 2 / 3, id="extra-call"),
        pytest.param([], [], False, 1.0, id="both-empty"),
        pytest.param([], ["a"], False, 0.0, id="missing"),
    ],
)
def test_selection(called: list[str], expected: list[str], ordered: bool, want: float) -> None:
    calls = [{"name": n, "arguments": {}} for n in called]
    assert tool_selection_accuracy(calls, expected, ordered=ordered) == pytest.approx(want)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=5))
def test_argument_metrics_reflexive(arguments: dict[str, object]) -> None:
    assert argument_f1(arguments, arguments) == 1.0
    assert argument_exact_match(arguments, json.loads(json.dumps(arguments))) == 1.0


@given(
    st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=5),
    st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=5),
)
def test_argument_f1_bounds_and_symmetry(a: dict[str, int], b: dict[str, int]) -> None:
    assert 0.0 <= argument_f1(a, b) <= 1.0
    assert argument_f1(a, b) == pytest.approx(argument_f1(b, a))


def test_handoffs() -> None:
    allowed = {"triage": {"billing", "tech"}, "billing": {"refunds"}}
    ok = handoff_graph_respected(["triage", "billing", "refunds"], allowed, start="triage")
    bad = handoff_graph_respected(["triage", "refunds"], allowed)
    wrong_start = handoff_graph_respected(["billing"], allowed, start="triage")
    assert ok.passed and not bad.passed and not wrong_start.passed
    assert "'triage' -> 'refunds'" in bad.reason
    assert "expected 'triage'" in wrong_start.reason
    assert handoff_accuracy(["triage", "billing"], ["triage", "billing", "refunds"]) == 2 / 3


def test_a_delegation_must_be_an_edge_of_the_handoff_graph() -> None:
    allowed = {"triage": {"billing"}, "billing": {"checker"}}
    ok = handoff_graph_respected(
        ["triage", "billing"], allowed, delegations=[("billing", "checker")]
    )
    bad = handoff_graph_respected(["triage", "billing"], allowed, delegations=[("triage", "admin")])
    assert ok.passed and not bad.passed
    assert "delegation 'triage' -> 'admin'" in bad.reason
    assert bad.evidence["violations"] == [
        {"step": None, "from": "triage", "to": "admin", "delegation": True}
    ]


async def test_scorers_read_predictions() -> None:
    prediction = json.dumps(message(("get_weather", '{"city": "Oslo", "unit": "F"}')))
    gold = [{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "C"}}]
    f1 = await tool_call_scorer("arguments_f1").score(prediction, gold)
    exact = await tool_call_scorer("arguments_exact").score(prediction, gold)
    valid = await tool_call_scorer("schema_valid", tools=TOOLS).score(prediction, None)
    selection = await tool_call_scorer().score(prediction, gold)
    assert (f1.value, exact.value, valid.value, selection.value) == (0.5, 0.0, 1.0, 1.0)
    with pytest.raises(ConfigError, match="needs tools"):
        tool_call_scorer("schema_valid")
