"""A row's ``recorded_error`` stands in for its prediction: stored as the sample's error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.datasets import load_dataset
from aieval.errors import DatasetError


def _file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rows_that_only_recorded_errors_run_and_count_as_errors(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        [
            {"id": "a", "prompt": "q", "expected": "x", "recorded_error": "upstream timed out"},
            {"id": "b", "prompt": "q", "expected": "x", "recorded_error": "rate limited"},
        ],
    )
    assert load_dataset(path).scan().with_prediction == 2
    result = run(name="errs", dataset=path, scorers=["exact_match"], store=False)
    assert {s.id: s.error for s in result.samples} == {
        "a": "upstream timed out",
        "b": "rate limited",
    }
    assert result.error_count == 2


@pytest.mark.parametrize(
    ("row", "message"),
    [
        pytest.param({"prediction": "x", "recorded_error": "boom"}, "keep one", id="both"),
        pytest.param({"recorded_error": 3}, "non-empty text", id="not-text"),
        pytest.param({"recorded_error": ""}, "non-empty text", id="empty"),
    ],
)
def test_a_bad_recorded_error_is_refused(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    path = _file(tmp_path, [{"id": "a", "prompt": "q", **row}])
    with pytest.raises(DatasetError, match=message):
        load_dataset(path).scan()
