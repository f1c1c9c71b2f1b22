"""The ``python`` check: an inline expression, written by the eval's author, over the output.

The expression is evaluated by ``simpleeval`` (an AST interpreter with a whitelist of nodes and
functions: no imports, no dunder attributes, no ``eval``), never by Python's ``eval``; the model
output is only data bound to the name ``output``. The expression is parsed when the check is
configured, so a syntax error fails before the first sample, and evaluated in a reused worker
process under the per-sample expression limit (:mod:`aieval.scorers._expressions`: 1 s, 256 MB).
"""

from __future__ import annotations

import functools
from typing import Any

from aieval._types import Example, Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import _expressions
from aieval.scorers._answers import text_of
from aieval.scorers._check import check, outcome
from aieval.scorers._expression_worker import MAX_RESULT_LENGTH, PYTHON_FUNCTIONS

__all__ = ["MAX_EXPRESSION_LENGTH", "MAX_RESULT_LENGTH", "PYTHON_FUNCTIONS", "python"]


#: The longest expression a ``python`` check takes (characters): a parsed expression takes
#: about 200 times its length in memory.
MAX_EXPRESSION_LENGTH = 10_000


@functools.lru_cache(maxsize=256)  # the expressions only (the parse is the worker's)
def _valid_expression_text(expression: str) -> None:
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise ConfigError(
            f"python.expression: {len(expression):,} characters, over the "
            f"{MAX_EXPRESSION_LENGTH:,} an expression may have; write a shorter one"
        )
    # parsed in a worker: a crafted expression may exhaust the parser's memory or stack
    what = f"parsing {_expressions.shown(repr(expression))}"
    try:
        answer = _expressions.evaluate("python", what, ("parse", expression))
    except ScorerError as exc:
        raise ConfigError(f"python.expression: {exc}") from None
    if "error" in answer:
        raise ConfigError(
            f"python.expression: {_expressions.shown(repr(expression))} {answer['error']}"
        )


def _valid_expression(options: dict[str, Any]) -> None:
    _valid_expression_text(options["expression"])


@check(_valid_expression, bounded=True)
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
    ...) and the methods of the values (``output.lower()``). Anything else it returns, an error
    it raises, or going past the expression limit (1 s, 256 MB, a value of more than 10 million
    characters or items) is that sample's error, naming the expression.

    Example:
        >>> python("42 apples", expression="output.split()[0].isdigit()").value
        1.0
        >>> python("abc", expression="1 / (len(output) + 1)").value
        0.25
    """
    _valid_expression_text(expression)
    shown = _expressions.shown(repr(expression))
    names = {
        "output": text_of(prediction),
        "expected": expected,
        "row": dict(example.fields) if example is not None else {},
    }
    answer = _expressions.evaluate("python", shown, ("python", expression, names))
    if "refused" in answer:
        raise ScorerError(f"python: {answer['refused']}")
    if "raised" in answer:
        raise ScorerError(f"python: {shown} raised {answer['raised']}: {answer['message']}")
    if "bool" in answer:
        result = bool(answer["bool"])
        says = f"{_expressions.shown(expression)} is {result}"
        return outcome(result, says, negate=negate, raw=result)
    if "score" in answer:
        score = answer["score"]
        if negate:
            raise ScorerError(f"python: {shown} gave the score {score}; negate needs a bool")
        return Score(float(score), score, f"{_expressions.shown(expression)} = {score:g}")
    raise ScorerError(
        f"python: {shown} gave {answer['other']} {answer['shown']}; "
        "return a bool or a number in 0..1"
    )
