"""A row's own checks read from every dataset format, and what makes a row unreadable refused
when the dataset is read, naming the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aieval.core import RowCheck
from aieval.datasets import load_dataset
from aieval.errors import DatasetError

CHECKS = [{"icontains": {"value": "refund", "threshold": 0.5}}, "is_xml"]


def _checks(source: Any) -> dict[str, tuple[RowCheck, ...]]:
    return {e.id: e.checks for e in load_dataset(source)}


def test_jsonl_rows_carry_checks_and_assert(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    rows = [
        {"id": "a", "input": "q", "checks": CHECKS},
        {"id": "b", "input": "q", "assert": [{"contains": {"value": "x", "name": "has_x"}}]},
        {"id": "c", "input": "q"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    found = _checks(path)
    assert found["a"] == (
        RowCheck("row:icontains", "icontains", {"value": "refund", "threshold": 0.5}, "checks[0]"),
        RowCheck("row:is_xml", "is_xml", {}, "checks[1]"),
    )
    assert found["b"] == (RowCheck("row:has_x", "contains", {"value": "x"}, "assert[0]"),)
    assert found["c"] == ()
    assert load_dataset(path).scan().with_checks == 2


def test_two_checks_of_one_name_in_a_row_are_numbered() -> None:
    row = {"input": "q", "checks": ["is_xml", {"contains": {"value": "a"}}, {"contains": {}}]}
    keys = [c.key for c in _checks([row])["0"]]
    assert keys == ["row:is_xml", "row:contains", "row:contains#2"]


def test_csv_checks_column_holds_json(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    cell = json.dumps(CHECKS).replace('"', '""')
    path.write_text(
        f'id,input,assert,topic\na,q,"{cell}",billing\nb,q,,billing\n', encoding="utf-8"
    )
    examples = {e.id: e for e in load_dataset(path)}
    assert [c.key for c in examples["a"].checks] == ["row:icontains", "row:is_xml"]
    assert examples["b"].checks == ()
    assert examples["a"].metadata == {"topic": "billing"}  # not a metadata column


def test_a_bad_csv_cell_names_the_column_and_line(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("id,input,checks\na,q,[]\nb,q,[{oops\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"data\.csv.*line 3.*column 'checks': invalid JSON"):
        list(load_dataset(path))


def test_json_rows_carry_checks(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"rows": [{"id": "a", "input": "q", "checks": CHECKS}]}))
    assert [c.check for c in _checks(path)["a"]] == ["icontains", "is_xml"]


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        ([{"contians": {"value": "x"}}], r"checks\[0\]: unknown scorer 'contians' \(did you mean"),
        (["is_xml", {"type": "contains", "value": "x"}], r"checks\[1\]: .*write \{contains:"),
        ({"contains": {"value": "x"}}, r"'checks' must be a list of checks"),
        ([{"contains": "x"}], r"checks\[0\]\.contains: the options must be a mapping"),
        ([{"contains": {"name": 3}}], r"checks\[0\]\.name must be a non-empty text"),
        (["os:system"], r"checks\[0\]: 'os:system': a row names registered checks only"),
        ([{"a": {}, "b": {}}], r"checks\[0\]: a check is a name or a one-key mapping"),
    ],
)
def test_an_unreadable_entry_is_refused_with_file_and_line(
    tmp_path: Path, checks: Any, message: str
) -> None:
    path = tmp_path / "data.jsonl"
    good = {"id": "ok", "input": "q", "checks": ["is_xml"]}
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({"id": "bad", "input": "q", "checks": checks}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match=r"data\.jsonl.*line 2") as caught:
        load_dataset(path).scan()
    assert caught.match(message)


def test_checks_and_assert_together_are_refused() -> None:
    row = {"input": "q", "checks": ["is_xml"], "assert": ["is_xml"]}
    with pytest.raises(DatasetError, match="both 'checks' and 'assert'"):
        list(load_dataset([row]))


def test_checks_are_part_of_the_dataset_version() -> None:
    plain = load_dataset([{"id": "a", "input": "q"}]).scan().version
    checked = load_dataset([{"id": "a", "input": "q", "checks": ["is_xml"]}]).scan().version
    assert plain != checked
