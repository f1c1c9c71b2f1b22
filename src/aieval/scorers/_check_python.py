"""The ``python`` check: an inline expression, written by the eval's author, over the output.

The expression is evaluated by ``simpleeval`` (an AST interpreter with a whitelist of nodes and
functions: no imports, no dunder attributes, no ``eval``), never by Python's ``eval``; the model
output is only data bound to the name ``output``. The expression is parsed when the check is
configured, so a syntax error fails before the first sample.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
from typing import Any

from aieval._types import Example, Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers._answers import text_of
from aieval.scorers._check import check, outcome

__all__ = ["PYTHON_FUNCTIONS", "python"]

#: Seconds ``re_search``/``re_fullmatch`` may spend on one call.
_REGEX_TIMEOUT_S = 1.0


def _bounded(how: str) -> Any:
    def match(pattern: str, text: str, flags: int = 0) -> Any:
        import regex as bounded  # same syntax as ``re``, and a time limit per match

        try:
            return getattr(bounded, how)(pattern, text, flags, timeout=_REGEX_TIMEOUT_S)
        except TimeoutError:
            raise ScorerError(
                f"python: re_{how}({pattern!r}, ...) took over {_REGEX_TIMEOUT_S:g} s: "
                "the pattern backtracks too much"
            ) from None

    match.__name__ = f"re_{how}"
    return match


#: The functions an expression may call (besides methods of the values themselves).
PYTHON_FUNCTIONS: dict[str, Any] = {
    "abs": abs,
    "all": all,
    "any": any,
    "bool": bool,
    "float": float,
    "int": int,
    "len": len,
    "max": max,
    "min": min,
    "round": round,
    "sorted": sorted,
    "str": str,
    "sum": sum,
    "json_loads": json.loads,
    "re_search": _bounded("search"),
    "re_fullmatch": _bounded("fullmatch"),
    "isclose": math.isclose,
}


#: The longest text or list an expression may build (characters or items); beyond it the
#: expression is that sample's error, before anything is allocated.
MAX_RESULT_LENGTH = 10_000_000

# a width of eight digits or more in a format string ("%099999999d", "{:>100000000}")
_HUGE_WIDTH = re.compile(r"\d{8,}")


def _built_length(method: Any, args: list[Any], kwargs: dict[str, Any]) -> int:
    """How long the text (or list) a call of ``method`` will build is, at most."""
    owner = getattr(method, "__self__", None)
    name = getattr(method, "__name__", "")
    if not isinstance(owner, str | bytes):
        return 0
    size = len(owner)
    if name in {"zfill", "ljust", "rjust", "center"} and args and isinstance(args[0], int):
        return int(args[0])
    if name == "expandtabs":
        tab = args[0] if args else kwargs.get("tabsize", 8)
        tabs = owner.count("\t") if isinstance(owner, str) else owner.count(b"\t")
        return size + tabs * max(int(tab), 0)
    if name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if isinstance(old, str | bytes) and isinstance(new, str | bytes):
            count = size + 1 if not old else owner.count(old)  # type: ignore[arg-type]
            return size + count * max(len(new) - len(old), 0)
    if name == "join" and args:
        parts = list(args[0]) if not isinstance(args[0], list | tuple) else args[0]
        return sum(len(p) for p in parts if hasattr(p, "__len__")) + size * len(parts)
    if name in {"format", "format_map"} and _HUGE_WIDTH.search(str(owner)):
        return MAX_RESULT_LENGTH + 1
    return 0


def _evaluator(names: dict[str, Any]) -> Any:
    from simpleeval import EvalWithCompoundTypes

    class Bounded(EvalWithCompoundTypes):  # type: ignore[misc]
        """simpleeval that refuses a call or ``%`` building more than MAX_RESULT_LENGTH."""

        def _eval_call(self, node: ast.Call) -> Any:
            if not isinstance(node.func, ast.Attribute):
                return super()._eval_call(node)
            method = self._eval(node.func)
            args = [self._eval(a) for a in node.args]
            kwargs = dict(self._eval(k) for k in node.keywords)
            if _built_length(method, args, kwargs) > MAX_RESULT_LENGTH:
                raise ScorerError(
                    f"{getattr(method, '__name__', 'call')}(...) would build more than "
                    f"{MAX_RESULT_LENGTH:,} characters"
                )
            return method(*args, **kwargs)

        def _eval_binop(self, node: ast.BinOp) -> Any:
            if isinstance(node.op, ast.Mod):
                left = self._eval(node.left)
                if isinstance(left, str | bytes) and _HUGE_WIDTH.search(str(left)):
                    raise ScorerError(
                        f"% formatting would build more than {MAX_RESULT_LENGTH:,} characters"
                    )
            return super()._eval_binop(node)

    return Bounded(names=names, functions=PYTHON_FUNCTIONS)


@functools.lru_cache(maxsize=256)
def _parsed(expression: str) -> Any:
    try:
        return _evaluator({}).parse(expression)
    except SyntaxError as exc:
        raise ConfigError(
            f"python.expression: {expression!r} is not an expression: {exc.msg}"
        ) from None


def _valid_expression(options: dict[str, Any]) -> None:
    _parsed(options["expression"])


@check(_valid_expression)
def python(
    prediction: Any,
    expected: Any = None,
    *,
    expression: str,
    negate: bool = False,
    example: Example | None = None,
) -> Score:
    """Whether ``expression`` holds: a Python expression over ``output`` (the output text, ``""``
    for ``None``), ``expected`` (the row's expected answer) and ``row`` (the row's fields).

    A ``bool`` result is the check (1.0 or 0.0); a number in 0..1 is the score itself. The
    functions it may call are :data:`PYTHON_FUNCTIONS` (``len``, ``json_loads``, ``re_search``
    ...) and the methods of the values (``output.lower()``). Anything else it returns, or an
    error it raises, is that sample's error, naming the expression.

    Example:
        >>> python("42 apples", expression="output.split()[0].isdigit()").value
        1.0
        >>> python("abc", expression="1 / (len(output) + 1)").value
        0.25
    """
    tree = _parsed(expression)
    names = {
        "output": text_of(prediction),
        "expected": expected,
        "row": dict(example.fields) if example is not None else {},
    }
    try:
        result = _evaluator(names).eval(expression, previously_parsed=tree)
    except Exception as exc:
        raise ScorerError(f"python: {expression!r} raised {type(exc).__name__}: {exc}") from None
    if isinstance(result, bool):
        return outcome(result, f"{expression} is {result}", negate=negate, raw=result)
    if isinstance(result, int | float) and 0.0 <= result <= 1.0:
        if negate:
            raise ScorerError(
                f"python: {expression!r} gave the score {result}; negate needs a bool"
            )
        return Score(float(result), result, f"{expression} = {result:g}")
    raise ScorerError(
        f"python: {expression!r} gave {type(result).__name__} {result!r}; "
        "return a bool or a number in 0..1"
    )
