"""Rows that recorded what their prediction cost: ``recorded_calls`` and ``recorded_latency_s``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.datasets import load_dataset
from aieval.errors import DatasetError
from aieval.store import Store


def _file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_recorded_calls_and_latency_are_stored_and_counted(tmp_path: Path) -> None:
    calls = [
        {"provider": "openai", "model": "gpt-a", "input_tokens": 10, "output_tokens": 3},
        {"model": "grader", "input_tokens": 7, "output_tokens": 1, "cost": 0.25},
    ]
    rows = [
        {"id": "a", "prompt": "q", "expected": "x", "prediction": "x", "recorded_calls": calls,
         "recorded_latency_s": 1.5},
        {"id": "b", "prompt": "q", "expected": "x", "recorded_error": "timed out",
         "recorded_calls": calls[:1], "recorded_latency_s": 30},
        {"id": "c", "prompt": "q", "expected": "x", "prediction": "y"},
    ]  # fmt: skip
    db = tmp_path / "runs.db"
    result = run(name="usage", dataset=_file(tmp_path, rows), scorers=["exact_match"], store=db)
    assert (result.summary["input_tokens"], result.summary["output_tokens"]) == (27, 7)
    # the target calls of a and b record no cost: the run's cost is unknown, never a partial sum
    assert result.summary["cost"] is None and result.summary["unpriced_samples"] == 2
    samples = {s.id: s for s in Store(db).iter_samples(result.id)}
    a, b, c = samples["a"], samples["b"], samples["c"]
    assert (a.input_tokens, a.output_tokens, a.latency_s, a.cost) == (17, 4, 1.5, None)
    assert [(x.purpose, x.provider, x.model) for x in a.calls] == [
        ("target", "openai", "gpt-a"),
        ("target", None, "grader"),
    ]
    assert (b.error, b.input_tokens, b.latency_s) == ("timed out", 10, 30.0)
    assert (c.input_tokens, c.latency_s, c.calls) == (None, None, [])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param({"recorded_calls": {"model": "m"}}, "must be a list", id="not-a-list"),
        pytest.param({"recorded_calls": ["m"]}, r"recorded_calls\[0\]' must be an obj", id="item"),
        pytest.param(
            {"recorded_calls": [{"tokens": 3}]}, r"unknown key\(s\) tokens", id="unknown-key"
        ),
        pytest.param(
            {"recorded_calls": [{"input_tokens": -1}]},
            r"recorded_calls\[0\].input_tokens' must be a whole number",
            id="negative",
        ),
        pytest.param(
            {"recorded_calls": [{"output_tokens": 1.5}]}, "output_tokens", id="fractional"
        ),
        pytest.param({"recorded_calls": [{"model": 3}]}, r"\.model' must be a text", id="model"),
        pytest.param({"recorded_latency_s": "fast"}, "recorded_latency_s", id="latency-text"),
        pytest.param({"recorded_latency_s": -2}, "number >= 0", id="latency-negative"),
    ],
)
def test_a_malformed_recording_is_refused_naming_the_field_and_line(
    tmp_path: Path, extra: dict[str, Any], message: str
) -> None:
    good = {"id": "a", "prompt": "q", "prediction": "x"}
    path = _file(tmp_path, [good, {"id": "b", "prompt": "q", "prediction": "x", **extra}])
    with pytest.raises(DatasetError, match=message) as caught:
        load_dataset(path).scan()
    assert "rows.jsonl" in str(caught.value) and "2" in str(caught.value)


def test_a_json_file_that_is_neither_rows_nor_an_inspect_log_says_what_it_may_be(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(DatasetError, match=r"array of rows .*or an inspect_ai log"):
        load_dataset(path).scan()
    other = tmp_path / "data.parquet"
    other.write_bytes(b"PAR1")
    with pytest.raises(DatasetError, match=r"or an inspect_ai log \(\.eval, \.json\)"):
        load_dataset(other).scan()
