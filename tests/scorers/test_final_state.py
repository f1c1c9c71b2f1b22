"""Final state: the structured diff, its matching options, the scorer on recorded rows and the
gate (docs/tools.md "Final state")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.errors import ConfigError, DatasetError
from aieval.grading import evaluate_gates, gate_names
from aieval.scorers.state import (
    MAX_DIFF_ENTRIES,
    MAX_STATE_BYTES,
    StateMatch,
    diff_state,
    final_state,
    final_state_matches,
    state_snapshot,
)
from aieval.store import Store

DB = {"orders": [{"id": 1, "status": "refunded", "total": 10.0}], "customer": {"tier": "gold"}}


def test_the_diff_names_added_removed_and_changed_paths_as_json_pointers() -> None:
    actual = {
        "orders": [{"id": 1, "status": "shipped", "total": 10.0}, {"id": 2}],
        "note/x": 1,
    }
    diff = diff_state(DB, actual).to_dict()
    assert diff["changed"] == [
        {"path": "/orders/0/status", "expected": "refunded", "actual": "shipped"}
    ]
    assert diff["added"] == [
        {"path": "/orders/1", "actual": {"id": 2}},
        {"path": "/note~1x", "actual": 1},
    ]
    assert diff["removed"] == [{"path": "/customer", "expected": {"tier": "gold"}}]
    assert (diff["total"], diff["truncated"]) == (4, False)


def test_options_ignore_paths_tolerate_numbers_and_pair_unordered_lists() -> None:
    expected = {"items": [{"sku": "a", "at": 1}, {"sku": "b", "at": 2}], "total": 9.99}
    actual = {"items": [{"sku": "b", "at": 7}, {"sku": "a", "at": 8}], "total": 10.0}
    assert not diff_state(expected, actual).matches
    loose = StateMatch(ignore=("/items/*/at",), tolerance=0.02, unordered=("/items",))
    assert diff_state(expected, actual, loose).matches
    # each option only where asked: an ordered list, a number past the tolerance
    assert diff_state([1, 2], [2, 1], StateMatch(unordered=("/other",))).total == 2
    assert diff_state({"t": 1.0}, {"t": 1.5}, StateMatch(tolerance=0.1)).total == 1
    # a bool is not the number 1, a string not the number
    assert diff_state({"x": 1}, {"x": True}).total == 1
    assert diff_state({"x": 1}, {"x": "1"}).total == 1


def test_wildcard_paths_reach_inside_an_unordered_list_under_a_wildcard() -> None:
    expected = {"orders": [{"items": [{"sku": "a", "at": 1}, {"sku": "b", "at": 2}]}]}
    actual = {"orders": [{"items": [{"sku": "b", "at": 7}, {"sku": "a", "at": 8}]}]}
    loose = StateMatch(ignore=("/orders/*/items/*/at",), unordered=("/orders/*/items",))
    assert diff_state(expected, actual, loose).matches
    # the same paths written with the list's own index apply as well; other lists' do not
    assert diff_state(
        expected, actual, StateMatch(("/orders/0/items/*/at",), 0, loose.unordered)
    ).matches
    other = StateMatch(("/orders/1/items/*/at",), 0, loose.unordered)
    assert diff_state(expected, actual, other).total == 4


def test_a_big_diff_is_capped_and_counts_what_it_left_out() -> None:
    diff = diff_state({str(i): i for i in range(200)}, {str(i): -i for i in range(1, 200)})
    shown = diff.to_dict()
    assert (diff.total, len(diff.changes), shown["truncated"]) == (200, MAX_DIFF_ENTRIES, True)
    assert diff.describe().endswith(f"... and {200 - MAX_DIFF_ENTRIES} more")


def test_an_unordered_list_pairs_identical_items_first_and_bounds_the_rest() -> None:
    from aieval.errors import ScorerError
    from aieval.scorers.state import MAX_PAIRINGS

    big = list(range(5_000))
    unordered = StateMatch(unordered=("/a",))
    # identical items pair by their JSON: 5,000 x 5,000 never compared one by one
    assert diff_state({"a": big}, {"a": big[::-1]}, unordered).matches
    shifted = {"a": [x + 0.5 for x in big]}
    with pytest.raises(ScorerError, match=f"at most {MAX_PAIRINGS:,} comparisons"):
        diff_state({"a": big}, shifted, StateMatch(unordered=("/a",), tolerance=1))
    # a few that differ are still paired under the options, the others named
    near = diff_state({"a": [1, 2, 3]}, {"a": [3, 1.01, 9]}, StateMatch(("",), 0.05, ("/a",)))
    assert near.matches  # the whole state ignored: nothing compared
    loose = diff_state({"a": [1, 2, 3]}, {"a": [3, 1.01, 9]}, StateMatch((), 0.05, ("/a",)))
    assert loose.to_dict()["removed"] == [{"path": "/a/1", "expected": 2}]
    assert loose.to_dict()["added"] == [{"path": "/a/2", "actual": 9}]


def test_exact_matching_pairs_an_unordered_list_without_comparing_its_items() -> None:
    unordered = StateMatch(unordered=("/a",))
    # nothing equal: 400 x 400 items that can never pair, no comparisons, a 0 with the diff
    diff = diff_state({"a": [0] * 400}, {"a": [1] * 400}, unordered)
    assert (diff.total, diff.to_dict()["truncated"]) == (800, True)
    assert diff.changes[0].to_dict() == {"path": "/a/0", "expected": 0}
    # the head counts every difference, not only the 50 kept
    head = "the final state differs at 800 paths (400 added, 400 removed):"
    assert diff.describe().startswith(head + "\n- /a/0: 0 (missing)")
    # equal as the exact walk has it: 1 and 1.0, mappings whatever their key order
    same = diff_state(
        {"a": [1, {"k": [1, 2], "j": "x"}, True]},
        {"a": [True, {"j": "x", "k": [1.0, 2]}, 1.0]},
        unordered,
    )
    assert same.matches
    # but never a bool for a number, a text for a number, nor a reordered inner list
    assert diff_state({"a": [1, "1"]}, {"a": [True, 1.5]}, unordered).total == 4
    assert diff_state({"a": [[1, 2]]}, {"a": [[2, 1]]}, unordered).total == 2
    assert diff_state(
        {"a": [[1, 2]]}, {"a": [[2, 1]]}, StateMatch(unordered=("/a", "/a/*"))
    ).matches


def test_a_diff_shows_its_values_as_json() -> None:
    reason = diff_state({"a": "1", "b": "x"}, {"a": 1, "b": None}).describe()
    assert '~ /a:\n    -"1"\n    +1' in reason
    assert '~ /b:\n    -"x"\n    +null' in reason


def test_a_snapshot_must_be_json_within_the_cap() -> None:
    from aieval.errors import ScorerError

    assert state_snapshot({"a": (1, 2)}) == {"a": [1, 2]}
    with pytest.raises(ScorerError, match="not a JSON document"):
        state_snapshot({"a": object()})
    with pytest.raises(ScorerError, match="not a JSON document"):
        state_snapshot({"a": float("nan")})
    with pytest.raises(ScorerError, match="over the 1,000,000-byte cap"):
        state_snapshot({"a": "x" * MAX_STATE_BYTES})


def test_bad_matching_options_are_refused_naming_the_option() -> None:
    with pytest.raises(ValueError, match=r"state_match.ignores: not a matching option"):
        StateMatch.parse({"ignores": ["/a"]}, "state_match")
    with pytest.raises(ValueError, match=r"state_match.tolerance: must be a finite number"):
        StateMatch.parse({"tolerance": -1}, "state_match")
    with pytest.raises(ValueError, match=r"is not a JSON pointer"):
        StateMatch.parse({"ignore": ["a/b"]}, "state_match")


def _recorded(tmp_path: Path, rows: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    scorer = final_state.with_options(**options) if options else final_state
    result = run(name="state", dataset=rows, scorers=[scorer], store=tmp_path / "r.db")
    with Store(tmp_path / "r.db") as db:
        return {s.id: s.scores["final_state"] for s in db.iter_samples(result.id)}


def test_recorded_rows_carry_their_final_state_and_a_failing_one_shows_the_diff(
    tmp_path: Path,
) -> None:
    wrong = {**DB, "orders": [{"id": 1, "status": "open", "total": 10.0}]}
    rows = [
        {
            "id": "field",
            "input": "q",
            "prediction": "done",
            "final_state": DB,
            "expected_state": DB,
        },
        {
            "id": "in-prediction",
            "input": "q",
            "prediction": json.dumps({"answer": "done", "final_state": wrong}),
            "expected_state": DB,
        },
        {"id": "none-expected", "input": "q", "prediction": "done", "final_state": DB},
        {
            "id": "loosened",
            "input": "q",
            "prediction": "done",
            "final_state": {"orders": [], "at": 5},
            "expected_state": {"orders": [], "at": 1},
            "state_match": {"ignore": ["/at"]},
        },
    ]
    scores = _recorded(tmp_path, rows)
    assert scores["field"].value == 1.0
    failed = scores["in-prediction"]
    assert failed.value == 0.0
    assert '~ /orders/0/status:\n    -"refunded"\n    +"open"' in (failed.reason or "")
    assert failed.metadata["state_diff"]["changed"] == [
        {"path": "/orders/0/status", "expected": "refunded", "actual": "open"}
    ]
    assert scores["none-expected"].value is None  # nothing to check: n/a, never a pass
    assert scores["loosened"].value == 1.0


def test_a_row_without_a_recorded_state_is_a_scorer_error_not_a_fail(tmp_path: Path) -> None:
    scores = _recorded(
        tmp_path, [{"id": "r", "input": "q", "prediction": "x", "expected_state": DB}]
    )
    assert scores["r"].value is None
    assert "no final state was recorded" in (scores["r"].error or "")


def test_the_authors_python_check_runs_over_the_state(tmp_path: Path) -> None:
    def refunded(state: Any) -> bool:
        return all(o["status"] == "refunded" for o in state["orders"])

    other = {"orders": [{"id": 1, "status": "open"}]}
    rows = [
        {"id": "ok", "input": "q", "prediction": "x", "final_state": DB},
        {"id": "bad", "input": "q", "prediction": "x", "final_state": other},
    ]
    scores = _recorded(tmp_path, rows, check=refunded)
    assert (scores["ok"].value, scores["bad"].value) == (1.0, 0.0)
    assert scores["bad"].reason == "the state check failed"


def test_a_row_cannot_name_code_nor_a_bad_option(tmp_path: Path) -> None:
    row = {"id": "r", "input": "q", "prediction": "x", "final_state": DB, "expected_state": DB}
    with pytest.raises(DatasetError, match="check"):
        run(
            name="rowcheck",
            dataset=[{**row, "checks": [{"final_state": {"check": "os:system"}}]}],
            scorers=[final_state],
            store=False,
        )
    scores = _recorded(tmp_path, [{**row, "state_match": {"run": "os:system"}}])
    assert scores["r"].value is None
    assert "state_match.run: not a matching option" in (scores["r"].error or "")


def test_the_authors_options_are_checked_when_bound() -> None:
    with pytest.raises(ConfigError, match="check: expected a Python function"):
        import asyncio

        asyncio.run(final_state("x", check="os:system"))  # type: ignore[arg-type]


def test_the_gate_is_registered_and_holds_the_state_against_the_expected_one() -> None:
    assert "final_state_matches" in gate_names()
    inputs = {"actual": {"a": [2, 1]}, "expected": {"a": [1, 2]}}
    failed, passed, missing = (
        evaluate_gates(
            ["final_state_matches"] * 3,
            {"final_state_matches": inputs},
        )[0],
        final_state_matches(**inputs, unordered=["/a"]),
        final_state_matches(actual=None, expected={}),
    )
    assert not failed.passed and "2 changed" in failed.reason
    assert failed.evidence["state_diff"]["total"] == 2
    assert passed.passed
    assert not missing.passed and "recorded no final state" in missing.reason
    too_big = final_state_matches(actual={"a": "x" * MAX_STATE_BYTES}, expected={})
    assert not too_big.passed and "over the 1,000,000-byte cap" in too_big.reason
