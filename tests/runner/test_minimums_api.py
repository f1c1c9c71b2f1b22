"""run(min_pass_rate=..., min_scores=...): the numbers that missed on the result and in its stored
summary; a bad minimum refused before anything runs, naming it."""

from pathlib import Path
from typing import Any

import pytest

from aieval import Store, run
from aieval.errors import ConfigError
from aieval.runner import MissedMinimum
from aieval.scorers import exact_match, token_f1

ROWS = [{"id": f"r{i}", "prompt": "p", "expected": "a b", "prediction": p}
        for i, p in enumerate(["a b", "a b", "a", "zzz"])]  # fmt: skip


def go(**kwargs: Any):  # type: ignore[no-untyped-def]
    return run(name="m", dataset=ROWS, scorers=[exact_match, token_f1], **kwargs)


def test_the_minimums_missed_are_listed_with_their_numbers(tmp_path: Path) -> None:
    result = go(min_pass_rate=0.75, min_scores={"exact_match": 0.5, "token_f1": 0.7},
                store=tmp_path / "r.db")  # fmt: skip
    assert result.pass_rate == 0.5 and result.metrics["exact_match"] == 0.5
    assert result.missed_minimums == [
        MissedMinimum("pass_rate", 0.75, 0.5),
        MissedMinimum("token_f1", 0.7, pytest.approx(result.metrics["token_f1"])),
    ]
    assert result.ok  # the run's health is another matter
    assert result.to_dict()["missed_minimums"][0] == {
        "metric": "pass_rate", "minimum": 0.75, "value": 0.5
    }  # fmt: skip
    stored = Store(tmp_path / "r.db").get_run(result.id).metrics["minimums"]
    assert stored["met"] is False and [c["met"] for c in stored["checks"]] == [False, True, False]
    assert str(result.missed_minimums[0]) == "pass rate 0.5 below its minimum 0.75"


def test_a_minimum_met_exactly_is_met_and_none_set_stores_nothing() -> None:
    assert go(min_pass_rate=0.5, min_scores={"exact_match": 0.5}, store=False).missed_minimums == []
    plain = go(store=False)
    assert plain.summary.minimums is None and plain.missed_minimums == []


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"min_scores": {"exact_mach": 0.5}}, "min: no scorer named 'exact_mach'"),
        ({"min_scores": {"exact_match": 1.5}}, "exact_match: must be a number between 0 and 1"),
        ({"min_scores": {"exact_match": True}}, "exact_match: must be a number between 0 and 1"),
        ({"min_pass_rate": -0.5}, "min_pass_rate"),
        ({"min_pass_rate": float("nan")}, "min_pass_rate"),
        ({"min_pass_rate": True}, "min_pass_rate"),
        ({"epochs": True}, "epochs"),
    ],
)
def test_a_bad_minimum_is_refused_before_anything_runs(
    tmp_path: Path, kwargs: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        go(store=tmp_path / "r.db", **kwargs)
    assert Store(tmp_path / "r.db").list_runs() == []
