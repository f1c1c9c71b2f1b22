"""Trajectory matching against agentevals itself, on the cases of its README and tests.

Every case of ``cases.json`` runs under every trajectory mode agentevals has (strict,
unordered, subset, superset) and every argument mode (exact, ignore, subset, superset), once
through agentevals 0.0.9 and once through ``aieval.scorers.trajectory_match``: aieval passes
exactly when agentevals says True, except the mode pairs a case lists under ``divergences``
(aieval decides otherwise on purpose, and there it must still differ). The results agentevals'
own README and tests state are checked against agentevals too. No network is used: connecting
a socket fails the test.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentevals.trajectory.match import create_trajectory_match_evaluator

from aieval.scorers import trajectory_match

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "cases.json").read_text(encoding="utf-8")
)["cases"]
MODES = ("strict", "unordered", "subset", "superset")
ARGUMENT_MODES = ("exact", "ignore", "subset", "superset")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("trajectory matching used the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    yield


def _casefold_city(called: dict[str, Any], expected: dict[str, Any]) -> bool:
    # the README's override for get_weather, as agentevals takes it
    return bool(called["city"].lower() == expected["city"].lower())


def _theirs(case: dict[str, Any], mode: str, arguments: str) -> bool:
    overrides: dict[str, Callable[[Any, Any], bool]] | None = (
        {"get_weather": _casefold_city} if case.get("overrides") else None
    )
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode,  # type: ignore[arg-type]
        tool_args_match_mode=arguments,  # type: ignore[arg-type]
        tool_args_match_overrides=overrides,  # type: ignore[arg-type]
    )
    result = evaluator(outputs=case["outputs"], reference_outputs=case["reference_outputs"])
    assert isinstance(result, dict)
    return bool(result["score"])


def _ours(case: dict[str, Any], mode: str, arguments: str) -> bool:
    per_tool = {"get_weather": ["case"]} if case.get("overrides") else None
    score = trajectory_match(mode, arguments=arguments, per_tool=per_tool)(
        case["outputs"], case["reference_outputs"]
    )
    assert score.value is not None
    return bool(score.value >= 1.0)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_pass_fail_equals_agentevals_for_every_mode(case: dict[str, Any]) -> None:
    divergences = case.get("divergences", {})
    for mode in MODES:
        for arguments in ARGUMENT_MODES:
            key = f"{mode}/{arguments}"
            theirs, ours = _theirs(case, mode, arguments), _ours(case, mode, arguments)
            if key in divergences:
                assert ours != theirs, f"{key}: listed as a divergence but both say {ours}"
            else:
                assert ours == theirs, f"{key}: agentevals {theirs}, aieval {ours}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_documented_results_are_agentevals_own(case: dict[str, Any]) -> None:
    assert case["documented"]
    for key, stated in case["documented"].items():
        mode, arguments = key.split("/")
        assert _theirs(case, mode, arguments) is stated, key


def test_every_divergence_says_why() -> None:
    listed = [(c["id"], k, why) for c in CASES for k, why in c.get("divergences", {}).items()]
    assert listed  # on purpose: aieval compares calls, not the messages around them
    assert all(isinstance(why, str) and len(why) > 40 for _, _, why in listed)


def test_first_fit_in_agentevals_misses_a_pairing_the_best_one_finds() -> None:
    # not one of agentevals' cases: why aieval's pairing is a maximum matching (docs/tools.md)
    def message(*arguments: dict[str, Any]) -> list[dict[str, Any]]:
        calls = [{"function": {"name": "weather", "arguments": json.dumps(a)}} for a in arguments]
        return [{"role": "assistant", "content": "", "tool_calls": calls}]

    case = {
        "outputs": message({"city": "SF", "unit": "C"}, {"city": "SF"}),
        "reference_outputs": message({"city": "SF"}, {"city": "SF", "unit": "C"}),
    }
    for mode in ("unordered", "superset"):
        assert _theirs(case, mode, "superset") is False
        assert _ours(case, mode, "superset") is True


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_in_order_is_between_strict_and_superset(case: dict[str, Any]) -> None:
    # agentevals has no subsequence mode: in_order holding means agentevals' superset holds,
    # and aieval's strict holding means in_order holds
    for arguments in ARGUMENT_MODES:
        in_order = _ours(case, "in_order", arguments)
        if in_order:
            assert _theirs(case, "superset", arguments), arguments
        if _ours(case, "strict", arguments):
            assert in_order, arguments
