"""Code problems (HumanEval / MBPP style) and the programs built from their completions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval.code._jsonl import read_jsonl
from aieval.code._testsource import check_runnable
from aieval.errors import DatasetError
from aieval.scorers.code import extract_code

__all__ = ["CodeProblem", "build_program", "load_problems"]


@dataclass(slots=True, frozen=True)
class CodeProblem:
    """One problem: the prompt the model completes and the tests that judge it.

    Attributes:
        task_id: the problem's id (``HumanEval/0``, ``11``...).
        prompt: the text given to the model (for HumanEval, a signature and docstring).
        tests: HumanEval's ``check(candidate)`` source with ``entry_point``, else MBPP-style
            assert snippets (a list counts each snippet as one test).
        entry_point: the function ``check`` receives, or ``None`` for plain asserts.
        canonical_solution: the reference completion, when the data has one.
    """

    task_id: str
    prompt: str
    tests: str | tuple[str, ...]
    entry_point: str | None = None
    canonical_solution: str | None = None


def load_problems(source: str | Path | Iterable[Mapping[str, Any]]) -> list[CodeProblem]:
    """Read problems from a JSONL file (``.jsonl`` or ``.jsonl.gz``) or from dicts.

    Each row needs ``task_id``, ``prompt`` (MBPP's ``text`` is accepted) and tests: ``test``
    (source) or ``test_list`` (assert snippets, with optional ``test_setup_code``); with
    ``entry_point`` the tests define ``check(candidate)``; without it they must run something
    themselves (asserts), or every program would pass.

    Raises:
        DatasetError: the file cannot be read, a line is not UTF-8 or not JSON, or a row lacks
            a field (file, row and field named).
    """
    where = str(source) if isinstance(source, str | Path) else "the problems"
    rows = (
        read_jsonl(Path(source), "problems")
        if isinstance(source, str | Path)
        else enumerate(source, 1)
    )
    problems: list[CodeProblem] = []
    seen: set[str] = set()
    for line, row in rows:
        problem = _problem(row, f"{where}, row {line}")
        if problem.task_id in seen:
            raise DatasetError(f"{where}, row {line}: task_id {problem.task_id!r} is repeated")
        seen.add(problem.task_id)
        problems.append(problem)
    if not problems:
        raise DatasetError(f"{where} holds no problems")
    return problems


def _problem(row: Any, where: str) -> CodeProblem:
    if not isinstance(row, Mapping):
        raise DatasetError(f"{where}: expected a JSON object, got {type(row).__name__}")
    task_id = row.get("task_id")
    prompt = row.get("prompt", row.get("text"))
    if task_id is None or isinstance(task_id, bool) or not isinstance(task_id, str | int):
        raise DatasetError(f"{where}: field 'task_id' is missing or not a string")
    if not isinstance(prompt, str):
        raise DatasetError(f"{where}: field 'prompt' (or MBPP's 'text') must be a string")
    entry_point = row.get("entry_point")
    if entry_point is not None and not (
        isinstance(entry_point, str) and entry_point.isidentifier()
    ):
        raise DatasetError(f"{where}: field 'entry_point' must be a function name")
    tests: str | tuple[str, ...]
    if isinstance(row.get("test"), str) and row["test"].strip():
        tests = row["test"]
    elif _snippets(row.get("test_list")):
        setup = row.get("test_setup_code") or ""
        tests = tuple(f"{setup}\n{snippet}" if setup else snippet for snippet in row["test_list"])
    else:
        raise DatasetError(
            f"{where}: give the tests as 'test' (source) or 'test_list' (assert snippets)"
        )
    check_runnable(tests, entry_point, where)
    canonical = row.get("canonical_solution", row.get("code"))
    return CodeProblem(
        task_id=str(task_id),
        prompt=prompt,
        tests=tests,
        entry_point=entry_point,
        canonical_solution=canonical if isinstance(canonical, str) else None,
    )


def _snippets(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and bool(value)
        and all(isinstance(item, str) for item in value)
    )


_IMPORT = re.compile(r"^(?:import|from)\s+\S.*$", re.MULTILINE)


def build_program(problem: CodeProblem, completion: str) -> str:
    """The program to run: the prompt followed by the completion, or the model's whole function.

    The code is the completion's first Python fenced block when it has one. When that code
    defines the entry point itself, it replaces the prompt, keeping the prompt's imports;
    otherwise it continues the prompt (HumanEval's completion-only style).

    Example:
        >>> p = CodeProblem("t", "def f():\\n", "assert f() == 1", None)
        >>> build_program(p, "    return 1\\n")
        'def f():\\n    return 1\\n'
    """
    code = extract_code(completion)
    name = problem.entry_point
    if name and re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", code, re.MULTILINE):
        imports = "\n".join(_IMPORT.findall(problem.prompt))
        return f"{imports}\n\n{code}" if imports else code
    if not name:
        # MBPP: the prompt is prose, the completion is the whole program.
        return code
    return code if code.startswith(problem.prompt) else problem.prompt + code
