"""Tasks for an MCP server: a prompt, the tool use expected and/or a check of the final answer.

A task file (YAML list or JSONL, one task a row) is the eval author's; each row is still read
field by field from an allow-list (anything else is refused, naming the row and the field), and
it never names code, a provider, an endpoint or a key. Each task becomes one conversation
scenario (the prompt as its one scripted user turn), so the conversation engine plays it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval.errors import DatasetError

__all__ = ["REPEAT", "ExpectedCall", "McpTask", "load_tasks", "task_of"]

_FIELDS = frozenset({"id", "prompt", "expect_tools", "answer_contains", "answer_matches"})
_CALL_FIELDS = frozenset({"name", "arguments"})
#: the longest ``answer_matches`` pattern (a check, not a program)
MAX_PATTERN = 500
#: the scores a task's checks give (the run's scorers)
TOOL_USE, ANSWER = "tool_use", "answer"
#: between a task's id and its repeat's number in a sample's id (``weather@3``)
REPEAT = "@"


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A tool call the task expects: the tool, and arguments the call must include."""

    name: str
    arguments: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class McpTask:
    """One task.

    Attributes:
        id: unique in its file.
        prompt: what the user asks.
        expect_tools: calls expected in this order (others may come between them); each
            call's arguments must include the expected ones.
        answer_contains: texts the final answer must contain (case-insensitive).
        answer_matches: a regular expression the final answer must match.
    """

    id: str
    prompt: str
    expect_tools: tuple[ExpectedCall, ...] = ()
    answer_contains: tuple[str, ...] = ()
    answer_matches: str | None = None

    def scenario_row(self, answer: int | None = None) -> dict[str, Any]:
        """The task as a conversation scenario row; ``answer`` (from 1) makes it the row of
        that repeat, ``ID@N``, so that two runs pair repeat by repeat."""
        checks = [TOOL_USE]
        if self.answer_contains or self.answer_matches is not None:
            checks.append(ANSWER)
        return {
            "id": self.id if answer is None else f"{self.id}{REPEAT}{answer}",
            "goal": self.prompt,
            "user_turns": [self.prompt],
            "max_turns": 1,
            "checks": {"conversation": checks},
            "metadata": {
                "mcp_task": {
                    "expect_tools": [c.to_dict() for c in self.expect_tools],
                    "answer_contains": list(self.answer_contains),
                    "answer_matches": self.answer_matches,
                }
            },
        }


def load_tasks(source: str | Path | Sequence[Mapping[str, Any]]) -> tuple[McpTask, ...]:
    """The tasks of a file (``.yaml``/``.yml``: a list; ``.jsonl``: a task a line) or rows.

    Raises:
        DatasetError: a row or field is wrong (named), an id repeats, or there is no task.
    """
    label = str(source) if isinstance(source, str | Path) else "tasks"
    rows = _rows(source) if isinstance(source, str | Path) else list(source)
    tasks: list[McpTask] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, 1):
        task = _task(row, f"task {number}", label)
        if task.id in seen:
            raise DatasetError(f"task {number}: id {task.id!r} is used twice", source=label)
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise DatasetError("no tasks: give at least one", source=label)
    return tuple(tasks)


def _rows(path: str | Path) -> list[Any]:
    from aieval._yaml import load_yaml_file

    file = Path(path)
    if file.suffix in (".yaml", ".yml"):
        data = load_yaml_file(file, error=DatasetError)
        if not isinstance(data, list):
            raise DatasetError("expected a list of tasks", source=str(path))
        return data
    if file.suffix != ".jsonl":
        raise DatasetError("a task file is .yaml, .yml or .jsonl", source=str(path))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read the task file: {exc}", source=str(path)) from None
    rows = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise DatasetError(f"line {line_no}: not JSON ({exc})", source=str(path)) from None
    return rows


def _task(row: Any, where: str, label: str) -> McpTask:
    def bad(message: str) -> DatasetError:
        return DatasetError(f"{where}: {message}", source=label)

    if not isinstance(row, Mapping):
        raise bad("expected a mapping (id, prompt, expect_tools, answer_contains, answer_matches)")
    unknown = sorted(set(row) - _FIELDS)
    if unknown:
        raise bad(f"{unknown[0]!r} is not a task field; the fields are {sorted(_FIELDS)}")
    task_id, prompt = row.get("id"), row.get("prompt")
    if not isinstance(task_id, str) or not task_id.strip():
        raise bad("id: expected a non-empty string")
    where = f"task {task_id!r}"
    if not isinstance(prompt, str) or not prompt.strip():
        raise bad("prompt: expected a non-empty string")
    calls = tuple(
        _call(c, f"{where}: expect_tools[{i}]", label)
        for i, c in enumerate(_list(row, "expect_tools", where, label))
    )
    contains = row.get("answer_contains") or ()
    if isinstance(contains, str):
        contains = (contains,)
    if not isinstance(contains, Sequence) or not all(isinstance(c, str) and c for c in contains):
        raise bad("answer_contains: expected a text or a list of texts")
    pattern = row.get("answer_matches")
    if pattern is not None:
        if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
            raise bad(
                f"answer_matches: expected a regular expression of at most {MAX_PATTERN} characters"
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise bad(f"answer_matches: not a regular expression ({exc})") from None
    if not calls and not contains and pattern is None:
        raise bad("give expect_tools, answer_contains or answer_matches (nothing would be checked)")
    return McpTask(task_id, prompt, calls, tuple(contains), pattern)


def _list(row: Mapping[str, Any], key: str, where: str, label: str) -> list[Any]:
    value = row.get(key) or []
    if not isinstance(value, list):
        raise DatasetError(f"{where}: {key}: expected a list", source=label)
    return value


def _call(data: Any, where: str, label: str) -> ExpectedCall:
    if isinstance(data, str):
        data = {"name": data}
    if not isinstance(data, Mapping) or set(data) - _CALL_FIELDS:
        raise DatasetError(f"{where}: expected a tool name or {{name, arguments}}", source=label)
    name, arguments = data.get("name"), data.get("arguments")
    if not isinstance(name, str) or not name:
        raise DatasetError(f"{where}: name: expected a tool name", source=label)
    if arguments is not None and not isinstance(arguments, Mapping):
        raise DatasetError(f"{where}: arguments: expected a mapping", source=label)
    return ExpectedCall(name, None if arguments is None else dict(arguments))


def task_of(sample_id: str) -> tuple[str, int | None]:
    """A sample id's task and repeat (``weather@3`` -> ``("weather", 3)``)."""
    task, sep, number = sample_id.rpartition(REPEAT)
    if sep and number.isdigit():
        return task, int(number)
    return sample_id, None
