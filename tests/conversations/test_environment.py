"""The environment the author's tools share: one per conversation, its snapshot stored with the
sample and checked against the scenario's expected state (docs/tools.md "Final state")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import run_main

from aieval import Store
from aieval.conversations import Environment, load_scenarios, run_conversation
from aieval.errors import ConfigError, DatasetError
from aieval.runner import load_eval, run_eval

STATE = "tests.conversations._state"


def _row(n: int, **more: Any) -> dict[str, Any]:
    return {
        "id": f"refund-{n}",
        "goal": f"refund order {n}",
        "user_turns": [f"please refund order {n}"],
        "max_turns": 1,
        "expected_state": {
            "refunded": [n],
            "orders": {"1": "open", "2": "open", str(n): "refunded"},
        },
        **more,
    }


def _eval(folder: Path, target: str, rows: list[dict[str, Any]], **conversation: Any) -> Path:
    (folder / "scenarios.yaml").write_text(yaml.safe_dump(rows), encoding="utf-8")
    data = {
        "name": "shop",
        "dataset": "scenarios.yaml",
        "conversation": {
            "target": f"{STATE}:{target}",
            "tools": f"{STATE}:TOOLS",
            "environment": f"{STATE}:Shop",
            "builtin_checks": ["final_state"],
            **conversation,
        },
    }
    path = folder / "eval.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _samples(path: Path, db: Path, **overrides: Any) -> dict[str, Any]:
    (result,) = run_eval(load_eval(path), store=db, **overrides)
    with Store(db) as store:
        return {s.id: s for s in store.iter_samples(result.id)}


def test_each_conversation_gets_its_own_environment_and_its_snapshot_is_stored(
    tmp_path: Path,
) -> None:
    samples = _samples(_eval(tmp_path, "refunder", [_row(1), _row(2)]), tmp_path / "r.db")
    for n in (1, 2):
        sample = samples[f"refund-{n}"]
        assert sample.scores["final_state"].value == 1.0
        # fresh per conversation: the other scenario's refund is not in this one's state
        assert sample.extra["final_state"]["refunded"] == [n]


def test_a_wrong_final_state_fails_with_the_diff_and_aieval_show_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = _samples(_eval(tmp_path, "wrong_order", [_row(1)]), tmp_path / "r.db")
    score = samples["refund-1"].scores["final_state"]
    assert score.value == 0.0
    diff = score.metadata["state_diff"]
    assert diff["changed"] == [
        {"path": "/orders/1", "expected": "refunded", "actual": "open"},
        {"path": "/orders/2", "expected": "open", "actual": "refunded"},
        {"path": "/refunded/0", "expected": 1, "actual": 2},
    ]
    done = run_main(capsys, monkeypatch, "show", "shop", "--db", "r.db", cwd=tmp_path)
    shown = done.stdout
    assert "final_state  0.000  the final state differs at 3 paths (3 changed):" in shown
    assert "~ /orders/1:" in shown and '-"refunded"' in shown and '+"open"' in shown


def test_the_target_cannot_set_the_environment_through_its_arguments(tmp_path: Path) -> None:
    samples = _samples(_eval(tmp_path, "sneaky", [_row(1)]), tmp_path / "r.db")
    sample = samples["refund-1"]
    call = sample.extra["conversation"]["turns"][1]["tool_calls"][0]
    assert call["error"] == "'environment' is not an argument of this tool"
    assert sample.extra["final_state"]["refunded"] == []  # the tool never ran
    assert sample.scores["final_state"].value == 0.0


def test_a_scenario_may_loosen_the_match_but_never_name_code(tmp_path: Path) -> None:
    loose = _row(2, expected_state={"refunded": [1]}, state_match={"ignore": ["/orders"]})
    samples = _samples(_eval(tmp_path, "wrong_order", [loose]), tmp_path / "r.db")
    assert samples["refund-2"].scores["final_state"].value == 0.0  # refunded [2], not [1]
    with pytest.raises(DatasetError, match=r"state_match.check'?: not a matching option"):
        load_scenarios([_row(1, state_match={"check": "os:system"})])


def test_a_snapshot_that_is_not_json_is_that_samples_error_only(tmp_path: Path) -> None:
    path = _eval(tmp_path, "refunder", [_row(1)], environment=f"{STATE}:unsnappable", tools=None)
    score = _samples(path, tmp_path / "r.db")["refund-1"].scores["final_state"]
    assert score.value is None
    assert "the environment's snapshot is not a JSON document" in (score.error or "")


def test_a_tool_that_takes_the_environment_needs_one_at_load(tmp_path: Path) -> None:
    path = _eval(tmp_path, "refunder", [_row(1)], environment=None)
    with pytest.raises(ConfigError, match="'refund' take the conversation's environment"):
        run_eval(load_eval(path), store=False)
    with pytest.raises(ConfigError, match="give the final state once"):
        run_eval(load_eval(_eval(tmp_path, "refunder", [_row(1)], state=f"{STATE}:Shop")))


def test_a_replay_keeps_the_recorded_state_unless_it_branched(tmp_path: Path) -> None:
    path = _eval(tmp_path, "refunder", [_row(1)])
    first = _samples(path, tmp_path / "r.db")["refund-1"]
    assert first.scores["final_state"].value == 1.0
    # every turn and tool result is the record's: the state is the one the record left
    replayed = _samples(path, tmp_path / "r.db", replay="shop", replay_mode="all")["refund-1"]
    assert replayed.scores["final_state"].value == 1.0
    assert replayed.extra["final_state"] == first.extra["final_state"]
    # a branch ran tools on an environment that never saw the replayed calls: unknown
    changed = _eval(tmp_path, "wrong_order", [_row(1)])
    branched = _samples(changed, tmp_path / "r.db", replay="shop", replay_mode="branch")
    score = branched["refund-1"].scores["final_state"]
    assert score.value is None
    assert "the environment did not change" in (score.error or "")
    assert "final_state" not in branched["refund-1"].extra


async def test_run_conversation_takes_an_environment_from_python() -> None:
    from tests.conversations._state import TOOLS, refunder

    (scenario,) = load_scenarios([_row(1)])
    environment = Environment({"refunded": [], "orders": {}})
    await run_conversation(scenario, refunder, tools=TOOLS, environment=environment)
    assert environment.snapshot() == {"refunded": [1], "orders": {"1": "refunded"}}
    with pytest.raises(ConfigError, match="give environment="):
        await run_conversation(scenario, refunder, tools=TOOLS)


def test_the_authors_state_check_holds_without_an_expected_state(tmp_path: Path) -> None:
    rows = [{k: v for k, v in _row(1).items() if k != "expected_state"}]
    check = {"state_check": f"{STATE}:one_refund"}
    passed = _samples(_eval(tmp_path, "refunder", rows, **check), tmp_path / "a.db")
    assert passed["refund-1"].scores["final_state"].value == 1.0
    failed = _samples(_eval(tmp_path, "sneaky", rows, **check), tmp_path / "b.db")
    score = failed["refund-1"].scores["final_state"]
    assert (score.value, score.reason) == (0.0, "the state check failed")
    # a row never names the check: only the eval file's author does
    with pytest.raises(DatasetError, match="state_check"):
        load_scenarios([{**rows[0], "state_check": f"{STATE}:one_refund"}])
