"""JSON lines read by msgspec (when installed) give the rows, the errors and the version the
standard parser gives, to the byte: a repeated key is refused even when escapes hide it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aieval._json import DuplicateKeyError, loads_strict, loads_strict_line
from aieval.datasets import load_dataset
from aieval.errors import DatasetError

#: Lines whose strings hold escapes, quotes and backslashes in every arrangement that could
#: hide a quote from a count, with and without a repeated key.
LINES = [
    r'{"a": 1, "a": 2}',
    r'{"a": "x\\", "a": 2}',
    r'{"a": "x\"y", "b": "q\"", "b": 1}',
    r'{"a": "x\"y", "b": "q\""}',
    r'{"a": "\\\"", "b": "\\\\"}',
    r'{"a": "\\\"", "b": "\\\\", "b": 0}',
    r'{"a": {"b": 1, "b": 1}}',
    r'[{"x": "y", "x": "z"}]',
    r'{"k": [1, 2, {"z": "q", "w": ["\u0022", "\\"]}]}',
    r'{"k": [1, 2, {"z": "q", "z": ["\u0022"]}]}',
    r'{"a": NaN, "b": Infinity}',
    r'{"a": 1e400}',
    r'{"a": "\ud800"}',
    r'{"a": 123456789012345678901234567890}',
    r'{"a": 1,}',
    r'{"a": "é ✓ \t"}',
    '\ufeff{"a": 1}',
    "[" * 120 + "]" * 120,
]


def _outcome(parse: object, line: str) -> tuple[str, str]:
    try:
        return "value", repr(parse(line))  # type: ignore[operator]
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("line", LINES)
def test_a_line_reads_as_the_standard_parser_reads_it(line: str) -> None:
    assert _outcome(loads_strict_line, line) == _outcome(loads_strict, line)


def test_a_repeated_key_behind_escaped_quotes_is_refused() -> None:
    with pytest.raises(DuplicateKeyError, match="'b'"):
        loads_strict_line(r'{"a": "\\\"", "b": "\"", "b": "\\"}')


ROWS = [
    {"id": 1, "input": "é ✓ q", "expected": ["a", {"b": None}], "prediction": "x"},
    {"id": "two", "messages": [{"role": "user", "content": "\udc80"}], "expected": None},
    {"input": "q3", "n": 10**30, "f": 1e-300, "g": 1e16, "h": -0.0},
    {"input": 'ctl \x00\x1f\x7f \u2028 "q" \\ /', "z": True, "a": False, "m": None},
    {"input": "\U0001f600", "\uffff": 1, "é": 2, "B": 3, "a": 4, "": 5},
    {"input": "big", "n": -(2**70), "k": 2**63},
]


def test_jsonl_rows_have_the_version_and_examples_of_the_same_rows_in_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    from_file, in_memory = load_dataset(path), load_dataset(ROWS)
    assert from_file.scan().version == in_memory.scan().version
    assert [e.fields for e in from_file] == [e.fields for e in in_memory]


def test_a_jsonl_row_repeating_a_key_behind_an_escape_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"input": "a"}\n' + r'{"input": "q\"", "expected": "\\", "expected": 1}' + "\n"
    )
    with pytest.raises(DatasetError, match="duplicate key 'expected'") as info:
        load_dataset(path).scan()
    assert "rows.jsonl" in str(info.value) and "2" in str(info.value)
