"""A dataset row nests at most MAX_ROW_DEPTH levels: deeper is a DatasetError naming the file and
line, however the row arrives, never a RecursionError traceback (docs/checks.md, "Depth";
threat model in docs/security.md, "Dataset rows and their checks")."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aieval
from aieval import Score, load_dataset, run
from aieval.datasets._depth import MAX_ROW_DEPTH
from aieval.errors import DatasetError
from aieval.scorers import scorer

#: Deeper than Python's JSON decoder goes (it raises RecursionError near 1000 levels).
UNDECODABLE = 3000


def _nested(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _row(levels: int, row_id: str = "deep") -> dict[str, Any]:
    """A row nesting ``levels`` deep in all: the row, its metadata, then ``levels - 2`` lists."""
    return {"id": row_id, "input": "q", "prediction": "a", "metadata": {"m": _nested(levels - 2)}}


def _deep_text(levels: int) -> str:
    """The JSON of :func:`_row`, written without the encoder (which gives up as deep)."""
    inner = "[" * (levels - 2) + "]" * (levels - 2)
    return '{"id": "deep", "input": "q", "prediction": "a", "metadata": {"m": ' + inner + "}}"


def _jsonl(path: Path, *lines: str) -> Path:
    ok = json.dumps({"id": "ok", "input": "q", "prediction": "a"})
    path.write_text("\n".join([ok, *lines]) + "\n", encoding="utf-8")
    return path


def test_a_row_at_the_limit_is_read_one_level_more_is_refused(tmp_path: Path) -> None:
    at_limit = _jsonl(tmp_path / "ok.jsonl", json.dumps(_row(MAX_ROW_DEPTH)))
    assert load_dataset(at_limit).scan().count == 2
    over = _jsonl(tmp_path / "data.jsonl", json.dumps(_row(MAX_ROW_DEPTH + 1)))
    with pytest.raises(DatasetError, match=r"data\.jsonl, line 2: the row nests deeper than 100"):
        load_dataset(over).scan()


def test_a_row_the_decoder_gives_up_on_names_the_file_and_line(tmp_path: Path) -> None:
    data = _jsonl(tmp_path / "data.jsonl", _deep_text(UNDECODABLE))
    with pytest.raises(DatasetError, match=r"data\.jsonl, line 2: the row nests too deeply"):
        load_dataset(data).scan()


def test_a_json_file_names_the_line_of_the_deep_row(tmp_path: Path) -> None:
    data = tmp_path / "data.json"
    data.write_text('[\n{"id": "ok", "input": "q"},\n' + _deep_text(UNDECODABLE) + "\n]\n")
    with pytest.raises(DatasetError, match=r"data\.json, line 3: the file nests too deeply"):
        load_dataset(data).scan()
    data.write_text(json.dumps([_row(MAX_ROW_DEPTH + 1)]))
    with pytest.raises(DatasetError, match=r"data\.json, line 1: the row nests deeper than 100"):
        load_dataset(data).scan()


@pytest.mark.parametrize("levels", [MAX_ROW_DEPTH, UNDECODABLE])
def test_a_csv_checks_cell_is_bounded_alike(tmp_path: Path, levels: int) -> None:
    cell = '[{"contains": {"value": ' + "[" * levels + "]" * levels + "}}]"
    data = tmp_path / "data.csv"
    data.write_text('id,input,checks\nr,q,"' + cell.replace('"', '""') + '"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"data\.csv, line 2: .*nests"):
        load_dataset(data).scan()


def test_in_memory_rows_are_bounded_alike() -> None:
    with pytest.raises(DatasetError, match=r"row 2: the row nests deeper than 100"):
        load_dataset([_row(3, "ok"), _row(MAX_ROW_DEPTH + 1)]).scan()


def test_the_command_line_prints_the_error_without_a_traceback(tmp_path: Path) -> None:
    _jsonl(tmp_path / "data.jsonl", _deep_text(UNDECODABLE))
    (tmp_path / "eval.yaml").write_text("name: deep\ndataset: data.jsonl\nscorers: [exact_match]\n")
    env = {**os.environ, "PYTHONPATH": str(Path(aieval.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "eval.yaml"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert "data.jsonl, line 2: the row nests" in done.stderr


@scorer(name="deep_meta")
def deep_meta(_prediction: str, _expected: Any) -> Score:
    return Score(1.0, metadata={"tree": _nested(UNDECODABLE)})


def test_too_deep_score_metadata_is_that_scores_error_and_the_run_is_stored(
    tmp_path: Path,
) -> None:
    rows = [{"id": "a", "input": "q", "prediction": "a", "expected": "a"},
            {"id": "b", "input": "q", "prediction": "b", "expected": "b"}]  # fmt: skip
    result = run(name="deep", dataset=rows, scorers=["exact_match", deep_meta],
                 store=tmp_path / "runs.db")  # fmt: skip
    for sample in result.samples:
        assert sample.scores["exact_match"].value == 1.0
        error = sample.scores["deep_meta"].error
        assert error is not None and "nested deeper than 200 levels, too deep to store" in error
    with sqlite3.connect(tmp_path / "runs.db") as db:  # both samples were stored
        assert db.execute("SELECT count(*) FROM samples").fetchone() == (2,)
