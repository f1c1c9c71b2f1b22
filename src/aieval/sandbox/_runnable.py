"""Whether a problem's tests would run anything: tests that only define pass every program."""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator, Sequence

from aieval.errors import DatasetError

__all__ = ["bound_names", "check_runnable", "runs_nothing"]


def check_runnable(tests: str | Sequence[str], entry_point: str | None, where: str) -> None:
    """Refuse tests that would pass any program: without ``entry_point`` they must run something.

    HumanEval's tests only define ``check(candidate)``; with no entry point nothing calls it,
    and every program that loads would pass. MBPP-style asserts run by themselves.

    Raises:
        DatasetError: naming ``where`` and the field to fix.
    """
    if entry_point:
        return
    if isinstance(tests, str):
        if runs_nothing(tests):
            defines = " (it defines check(candidate))" if "check" in bound_names(tests) else ""
            raise DatasetError(
                f"{where}: field 'entry_point' is missing or null, and the test{defines} calls "
                "nothing itself, so every program would pass; name the function the tests check"
            )
        return
    for index, snippet in enumerate(tests, 1):
        if runs_nothing(snippet):
            raise DatasetError(
                f"{where}: field 'test_list' item {index} asserts and calls nothing, so every "
                "program would pass it"
            )


def runs_nothing(source: str) -> bool:
    """True when ``source`` parses and, run as a module, would assert, raise and call nothing.

    Function bodies and lambdas are not run by defining them, nor is an
    ``if __name__ == "__main__":`` block (the tests do not run as ``__main__``). Source that
    does not parse is left to the sandbox, which reports it.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return not any(isinstance(node, ast.Assert | ast.Call | ast.Raise) for node in _run(tree))


def _run(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node`` that execute when it runs at module level."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            for part in (*child.decorator_list, child.args, child.returns):
                if part is not None:
                    yield part
                    yield from _run(part)
            continue
        if isinstance(child, ast.Lambda):
            yield child.args
            yield from _run(child.args)
            continue
        if isinstance(child, ast.If) and _mentions_name_dunder(child.test):
            for statement in child.orelse:
                yield statement
                yield from _run(statement)
            continue
        yield child
        yield from _run(child)


def _mentions_name_dunder(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(test))


def bound_names(source: str) -> set[str]:
    """Names ``source`` binds at module level (its own helpers); none if it does not parse."""
    try:
        table = symtable.symtable(source, "<tests>", "exec")
    except (SyntaxError, ValueError):
        return set()
    return {symbol.get_name() for symbol in table.get_symbols() if symbol.is_local()}
