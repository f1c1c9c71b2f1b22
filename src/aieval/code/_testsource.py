"""What a problem's test source does: whether it runs anything, and what the prompt lends it."""

from __future__ import annotations

import ast
import symtable
from collections.abc import Sequence

from aieval.sandbox import bound_names, check_runnable

__all__ = ["check_runnable", "prompt_definitions", "with_prompt_definitions"]

_DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


def _used(source: str) -> set[str]:
    """Global names ``source`` reads in any scope."""
    try:
        table = symtable.symtable(source, "<tests>", "exec")
    except (SyntaxError, ValueError):
        return set()
    used: set[str] = set()
    pending = [table]
    while pending:
        scope = pending.pop()
        module = scope.get_type() == "module"
        for symbol in scope.get_symbols():
            if symbol.is_referenced() and (module or symbol.is_global()):
                used.add(symbol.get_name())
        pending.extend(scope.get_children())
    return used


def prompt_definitions(prompt: str, entry_point: str | None, tests: str | Sequence[str]) -> str:
    """The prompt's own definitions the tests use, as source to run beside the tests.

    HumanEval's ``decode_cyclic`` tests call the prompt's ``encode_cyclic``; they must get
    the prompt's function, not the candidate's (which could be rewritten to suit its answer).
    Returns the prompt's imports, assignments, functions and classes other than the entry
    point and the names the tests define themselves, when the tests use one of them; else
    ``""`` (also when there is no entry point, or the prompt does not parse).
    """
    if not entry_point:
        return ""
    try:
        module = ast.parse(prompt)
    except (SyntaxError, ValueError):
        return ""
    sources = [tests] if isinstance(tests, str) else list(tests)
    own = set().union(*(bound_names(source) for source in sources))
    used = set().union(*(_used(source) for source in sources)) - own
    kept: list[ast.stmt] = []
    lent: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, _DEFINITIONS) or _is_future_import(statement):
            continue
        names = _namesbound_names(statement)
        if entry_point in names or names & own:
            continue
        kept.append(statement)
        if not isinstance(statement, ast.Import | ast.ImportFrom):
            lent |= names
    if not lent & used:
        return ""
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def _is_future_import(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.ImportFrom) and statement.module == "__future__"


def _namesbound_names(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    else:
        return set()
    return {
        node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)
    }


def with_prompt_definitions(
    prompt: str, entry_point: str | None, tests: str | Sequence[str]
) -> str | list[str]:
    """The tests to run: each followed by :func:`prompt_definitions` when there are some.

    The definitions come after the test source, so its line numbers stay as written; they
    exist before ``check(candidate)`` is called.
    """
    extra = prompt_definitions(prompt, entry_point, tests)
    if not extra:
        return tests if isinstance(tests, str) else list(tests)

    def joined(source: str) -> str:
        return f"{source.rstrip()}\n\n\n{extra}\n"

    return joined(tests) if isinstance(tests, str) else [joined(source) for source in tests]
