"""What a problem's test source does: whether it runs anything, and what the prompt lends it."""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator, Sequence

from aieval.errors import DatasetError

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
            defines = " (it defines check(candidate))" if "check" in _bound(tests) else ""
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


def _bound(source: str) -> set[str]:
    """Names ``source`` binds at module level (its own helpers); none if it does not parse."""
    try:
        table = symtable.symtable(source, "<tests>", "exec")
    except (SyntaxError, ValueError):
        return set()
    return {symbol.get_name() for symbol in table.get_symbols() if symbol.is_local()}


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
    own = set().union(*(_bound(source) for source in sources))
    used = set().union(*(_used(source) for source in sources)) - own
    kept: list[ast.stmt] = []
    lent: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, _DEFINITIONS) or _is_future_import(statement):
            continue
        names = _names_bound(statement)
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


def _names_bound(statement: ast.stmt) -> set[str]:
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
