"""The worker that evaluates per-sample expressions: a script run with ``-I``, importing no aieval.

:mod:`aieval.scorers._expressions` starts it and keeps it for many samples. It limits its own
address space (``RLIMIT_AS``) before it answers anything, then reads requests (a 4-byte length
and a pickle, written by aieval itself) and answers each with one JSON line. An expression that
needs more memory is answered ``memory`` and the worker exits; one that runs too long is killed
from outside. Importing this module has no effect: the evaluator and its functions are shared
with the parent, which parses expressions when a check is configured.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import re
import reprlib
import sys
from typing import Any

__all__ = ["MAX_RESULT_LENGTH", "PYTHON_FUNCTIONS", "Refused", "evaluator", "main"]

#: The longest text, list or mapping an expression may build (characters or items); a longer
#: value is that sample's error (the worker's memory limit bounds what building it may take).
MAX_RESULT_LENGTH = 10_000_000

# a width of eight digits or more in a format string ("%099999999d", "{:>100000000}")
_HUGE_WIDTH = re.compile(r"\d{8,}")
_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 200


class Refused(Exception):
    """An expression went past a limit; the message says which (reported without a type)."""


def _matcher(how: str) -> Any:
    def match(pattern: str, text: str, flags: int = 0) -> Any:
        # no time limit of its own: the whole expression is stopped at the expression limit
        return getattr(re, how)(pattern, text, flags)

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
    "re_search": _matcher("search"),
    "re_fullmatch": _matcher("fullmatch"),
    "isclose": math.isclose,
}


def _built_length(method: Any, args: list[Any], kwargs: dict[str, Any]) -> int:
    """How long the text (or list) a call of ``method`` will build is, at most: the common
    ways of asking for a huge text are refused before they allocate, with a clear message."""
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


def _too_long(what: str) -> Refused:
    return Refused(f"{what} would build more than {MAX_RESULT_LENGTH:,} characters")


def evaluator(names: dict[str, Any]) -> Any:
    """A simpleeval interpreter over ``names`` that refuses any value over MAX_RESULT_LENGTH."""
    return _bounded_class()(names=names, functions=PYTHON_FUNCTIONS)


@functools.cache
def _bounded_class() -> Any:
    from simpleeval import EvalWithCompoundTypes

    class Bounded(EvalWithCompoundTypes):  # type: ignore[misc]
        def _eval(self, node: ast.AST) -> Any:
            # every value, however it was built (str(list), % formatting, a method), is measured
            value = super()._eval(node)
            sized = isinstance(value, str | bytes | list | tuple | dict | set | frozenset)
            if sized and len(value) > MAX_RESULT_LENGTH:
                shown = ast.unparse(node)
                raise _too_long(shown if len(shown) <= 60 else f"{shown[:57]}...")
            return value

        def _eval_call(self, node: ast.Call) -> Any:
            if not isinstance(node.func, ast.Attribute):
                return super()._eval_call(node)
            method = self._eval(node.func)
            args = [self._eval(a) for a in node.args]
            kwargs = dict(self._eval(k) for k in node.keywords)
            if _built_length(method, args, kwargs) > MAX_RESULT_LENGTH:
                raise _too_long(f"{getattr(method, '__name__', 'call')}(...)")
            return method(*args, **kwargs)

        def _eval_binop(self, node: ast.BinOp) -> Any:
            if isinstance(node.op, ast.Mod):
                left = self._eval(node.left)
                if isinstance(left, str | bytes) and _HUGE_WIDTH.search(str(left)):
                    raise _too_long("% formatting")
            return super()._eval_binop(node)

    return Bounded


@functools.lru_cache(maxsize=256)
def _parsed(expression: str) -> Any:
    return evaluator({}).parse(expression)


def _parse(expression: str) -> dict[str, Any]:
    """Whether ``expression`` parses: a syntax error, or one nested too deep, says why."""
    try:
        _parsed(expression)
    except SyntaxError as exc:
        return {"error": f"is not an expression: {exc.msg}"}
    except RecursionError:
        return {"error": "is nested too deeply to parse"}
    return {}


def _python(expression: str, names: dict[str, Any]) -> dict[str, Any]:
    result = evaluator(names).eval(expression, previously_parsed=_parsed(expression))
    if isinstance(result, bool):
        return {"bool": result}
    if isinstance(result, int | float) and 0.0 <= result <= 1.0:
        return {"score": result}
    return {"other": type(result).__name__, "shown": _SHOWN.repr(result)}


_validators: dict[str, Any] = {}


def _regex(pattern: str, flags: int, full: bool, text: str) -> dict[str, Any]:
    """Whether ``pattern`` matches (all of, with ``full``) ``text``; the match's first 1,000
    characters (the reason shows a few)."""
    compiled = re.compile(pattern, flags)
    found = compiled.fullmatch(text) if full else compiled.search(text)
    return {"match": None if found is None else found.group(0)[:1000]}


def _regex_check(pattern: str, flags: int) -> dict[str, Any]:
    """Whether ``pattern`` compiles (compiling a crafted class or repeat may take minutes)."""
    try:
        re.compile(pattern, flags)
    except re.error as exc:
        return {"error": str(exc)}
    return {}


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(uri)


def _validator(key: str, schema: Any) -> Any:
    from jsonschema import validators
    from referencing import Registry

    if key not in _validators:
        if len(_validators) >= 256:
            _validators.clear()
        cls = validators.validator_for(schema)
        _validators[key] = cls(schema, registry=Registry(retrieve=_refuse))  # type: ignore[call-arg]
    return _validators[key]


def _schema_check(schema: Any) -> dict[str, Any]:
    """Whether ``schema`` is a valid JSON Schema (checking compiles its ``pattern``s)."""
    from jsonschema import SchemaError, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        return {"error": exc.message}
    return {}


_OPENS = re.compile(r"[\[{]")


def json_values(text: str, embedded: bool) -> Any:
    """The whole text as JSON, or (``embedded``) each JSON object or array found in it, left to
    right: the search goes on after the end of a value found, never inside it, and keeps none."""
    if not embedded:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return
        yield value
        return
    decoder = json.JSONDecoder()
    found = _OPENS.search(text)
    while found is not None:
        at = found.start()
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            found = _OPENS.search(text, at + 1)
            continue
        yield value
        found = _OPENS.search(text, end)


def _json_schema(text: str, contains: bool, key: str, schema: Any) -> dict[str, Any]:
    """The JSON values found in ``text``: how many were tried, and whether one is valid under
    ``schema`` (``None``: any is), else the first one's first error."""
    validator = None if schema is None else _validator(key, schema)
    first_error = None
    tried = 0
    for value in json_values(text, contains):
        tried += 1
        if validator is None:
            return {"found": tried, "valid": True}
        error = next(iter(sorted(validator.iter_errors(value), key=lambda e: e.path)), None)
        if error is None:
            return {"found": tried, "valid": True}
        if first_error is None:
            first_error = f"JSON at {error.json_path} fails the schema: {error.message}"
    return {"found": tried, "valid": False, "error": first_error}


def _html(text: str) -> dict[str, Any]:
    """``html5lib``'s first parse error and their count, or whether the text has an element."""
    import html5lib  # type: ignore[import-untyped]

    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=False)
    document = text[:9].lower() == "<!doctype" or text[:5].lower() == "<html"
    tree = parser.parse(text) if document else parser.parseFragment(text)
    if parser.errors:
        (line, column), code, _ = parser.errors[0]
        return {"errors": len(parser.errors), "first": [line, column, code]}
    element = any(True for e in tree.iter() if isinstance(e.tag, str) and e is not tree)
    return {"errors": 0, "element": element}


def _sql(text: str, dialect: str | None) -> dict[str, Any]:
    """The statements ``sqlglot`` parses in ``text``: the first error, or each one's kind."""
    import sqlglot
    from sqlglot import exp

    statements = (exp.Query, exp.DML, exp.DDL, exp.Drop, exp.Command, exp.Use, exp.Set)
    read = None if dialect is None else sqlglot.Dialect.get_or_raise(dialect)
    try:
        parsed = sqlglot.parse(text, read=read, error_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.SqlglotError as exc:
        return {"error": str(exc).splitlines()[0]}
    except (AttributeError, TypeError, IndexError, KeyError) as exc:
        # sqlglot's parser itself fails on some malformed text (e.g. '{=' in sqlite): what it
        # cannot parse is not SQL it parses; the reason names the failure
        return {"error": f"sqlglot's parser failed on it ({type(exc).__name__})"}
    found = [item for item in parsed if item is not None]
    for item in found:
        if not isinstance(item, statements):
            return {"found": len(found), "other": [type(item).__name__, item.sql()[:60]]}
    return {"found": len(found)}


def _levenshtein(text: str, wanted: str) -> dict[str, Any]:
    from rapidfuzz.distance import Levenshtein

    return {
        "distance": Levenshtein.distance(text, wanted),
        "similarity": Levenshtein.normalized_similarity(text, wanted),
    }


def _import(module: str) -> dict[str, Any]:
    """Import ``module`` before the first request that needs it (its time does not count)."""
    import importlib

    importlib.import_module(module)
    return {}


_JOBS: dict[str, Any] = {
    "python": _python,
    "parse": _parse,
    "regex": _regex,
    "regex_check": _regex_check,
    "json_schema": _json_schema,
    "schema_check": _schema_check,
    "html": _html,
    "sql": _sql,
    "levenshtein": _levenshtein,
    "import": _import,
}


def _answer(request: tuple[Any, ...]) -> dict[str, Any]:
    kind, *args = request
    try:
        answer: dict[str, Any] = _JOBS[kind](*args)
    except Refused as exc:
        return {"refused": str(exc)}
    except MemoryError:
        raise
    except Exception as exc:
        return {"raised": type(exc).__name__, "message": _SHOWN.repr(str(exc))[1:-1]}
    return answer


def _limit_memory(megabytes: int) -> None:
    import resource

    limit = megabytes * 1024 * 1024
    for which in ("RLIMIT_AS", "RLIMIT_DATA"):  # macOS enforces only the second
        if hasattr(resource, which):
            try:
                resource.setrlimit(getattr(resource, which), (limit, limit))
            except (ValueError, OSError):
                continue


def _read(stream: Any, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def main() -> None:
    """Serve requests until stdin closes (argv[1]: the parent's import path and memory limit)."""
    import pickle
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    paths, megabytes = json.loads(sys.argv[1])
    sys.path[:0] = paths
    import jsonschema  # noqa: F401  (imported before any request's time counts)
    import simpleeval  # noqa: F401

    _limit_memory(megabytes)
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    writer.write(b'{"ready": true}\n')
    writer.flush()
    while True:
        try:
            body = _read(reader, int.from_bytes(_read(reader, 4), "big"))
        except EOFError:
            return
        try:
            answer = _answer(pickle.loads(body))
        except MemoryError:
            answer = {"memory": True}
        except Exception as exc:  # a value of a class this process cannot import
            answer = {"unreadable": _SHOWN.repr(str(exc))[1:-1]}
        writer.write(json.dumps(answer).encode() + b"\n")
        writer.flush()
        if "memory" in answer:
            return  # a fresh worker takes over: nothing half-built stays behind


if __name__ == "__main__":
    main()
