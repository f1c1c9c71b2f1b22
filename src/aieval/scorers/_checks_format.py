"""Deterministic format checks: JSON (with a JSON Schema), XML, HTML and SQL.

Each scores 1.0 when the output is well-formed (and valid), else 0.0 with the parser's reason;
``negate=True`` inverts it. A ``None`` output counts as empty text, which is none of these.
XML is parsed by ``defusedxml`` (no entity expansion, no external entities), HTML by
``html5lib`` and SQL by ``sqlglot`` (these two are in the ``checks`` extra).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

from aieval._types import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import _expressions
from aieval.scorers._answers import text_of
from aieval.scorers._check import check, outcome

__all__ = ["is_html", "is_sql", "is_xml", "json_schema"]


def _outside_refs(node: Any) -> Iterator[str]:
    """Every ``$ref`` of the schema that names a resource by URL (a file, a web address)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and _names_a_resource(value):
                yield value
            else:
                yield from _outside_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _outside_refs(item)


def _names_a_resource(ref: str) -> bool:
    scheme = ref.split(":", 1)[0].lower() if ":" in ref else ""
    return scheme in {"http", "https", "file", "ftp", "ftps", "data"}


def _schema_validator(schema: dict[str, Any]) -> None:
    for ref in _outside_refs(schema):
        raise ConfigError(
            f"json_schema.schema: $ref {ref!r} names a file or URL; schemas are never fetched "
            "(put the definition under $defs and refer to it as #/$defs/...)"
        )
    # checking compiles the schema's patterns, which may take minutes: under the limit
    try:
        answer = _expressions.evaluate(
            "json_schema", "checking the schema", ("schema_check", schema)
        )
    except ScorerError as exc:
        raise ConfigError(f"json_schema.schema: {exc}") from None
    if "error" in answer:
        message = _expressions.shown(answer["error"])
        raise ConfigError(f"json_schema.schema: not a valid JSON Schema: {message}")
    if "raised" in answer:
        raise ConfigError(f"json_schema.schema: checking it raised {answer['raised']}")


_checked: set[str] = set()


def _checked_key(schema: dict[str, Any]) -> str:
    """The schema as canonical JSON, after the checks of :func:`_schema_validator` (once)."""
    key = json.dumps(schema, sort_keys=True, default=repr)
    if key not in _checked:
        _schema_validator(schema)
        if len(_checked) >= 1024:
            _checked.clear()
        _checked.add(key)
    return key


def _valid_schema(options: dict[str, Any]) -> None:
    if options.get("schema") is not None:
        _schema_validator(options["schema"])


@check(_valid_schema, bounded=True)
def json_schema(
    prediction: Any,
    _expected: Any = None,
    *,
    schema: dict[str, Any] | None = None,
    contains: bool = False,
    negate: bool = False,
) -> Score:
    """Whether the output is JSON (and, with ``schema``, valid under that JSON Schema).

    With ``contains=True`` the JSON may be embedded in other text (a fenced block, a sentence
    around it): the first JSON object or array in the output that is valid counts. Validation
    uses the ``jsonschema`` library, with the draft the schema's ``$schema`` names (2020-12 if
    none), in a worker under the per-sample expression limit (1 s, 256 MB: a ``pattern`` that
    backtracks without end is that sample's error). Schemas are never fetched: a ``$ref`` to a
    file or URL is refused when the check is set up, and a reference that does not resolve
    inside the schema is that sample's error.

    Example:
        >>> schema = {"type": "object", "required": ["city"]}
        >>> json_schema('{"city": "Paris"}', schema=schema).value
        1.0
        >>> json_schema('Here: {"city": "Paris"} done', schema=schema, contains=True).value
        1.0
        >>> json_schema('{"town": "Paris"}', schema=schema).reason
        "JSON at $ fails the schema: 'city' is a required property"
    """
    text = text_of(prediction)
    if schema is None and not contains:
        try:  # linear in the output: no worker needed
            json.loads(text)
            found = True
        except (ValueError, RecursionError):
            found = False
        if not found:
            return outcome(False, "output is not JSON", negate=negate, raw=0)
        return outcome(True, "output is JSON", negate=negate)
    # the search, and the validation (Python's re for pattern and patternProperties), run
    # under the expression limit: a crafted output or pattern is that sample's error
    key = "" if schema is None else _checked_key(schema)
    request = ("json_schema", text, contains, key, schema)
    answer = _expressions.evaluate("json_schema", "validating the output", request)
    if "raised" in answer:
        raise ScorerError(
            f"json_schema: validating the output raised {answer['raised']}: {answer['message']}"
        )
    if not answer["found"]:
        where = "contains no JSON object or array" if contains else "is not JSON"
        return outcome(False, f"output {where}", negate=negate, raw=0)
    if schema is None:
        return outcome(True, "output is JSON", negate=negate)
    if answer["valid"]:
        return outcome(True, "output is JSON valid under the schema", negate=negate)
    return outcome(False, answer["error"], negate=negate, raw=answer["found"])


@check()
def is_xml(prediction: Any, _expected: Any = None, *, negate: bool = False) -> Score:
    """Whether the output is one well-formed XML document (parsed by ``defusedxml``; a DTD
    with entities is refused as unsafe, and fails).

    Example:
        >>> is_xml("<a><b>1</b></a>").value, is_xml("<a><b></a>").value
        (1.0, 0.0)
    """
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    text = text_of(prediction)
    try:
        root = fromstring(text.strip())
    except ParseError as exc:
        return outcome(False, f"output is not XML: {exc}", negate=negate)
    except DefusedXmlException as exc:
        return outcome(False, f"output is refused as unsafe XML: {exc}", negate=negate)
    return outcome(True, f"output is XML with root <{root.tag}>", negate=negate)


def _needs(module: str, check_name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"{check_name} needs {module}: pip install 'aieval[checks]'") from None


def _html_parser(_options: dict[str, Any]) -> None:
    _needs("html5lib", "is_html")


@check(_html_parser, bounded=True)
def is_html(prediction: Any, _expected: Any = None, *, negate: bool = False) -> Score:
    """Whether the output is HTML: it has at least one element and ``html5lib`` (the WHATWG
    parsing algorithm) reports no parse error. A text starting with ``<!doctype`` or
    ``<html`` is parsed as a document, anything else as a fragment.

    Example:
        >>> is_html("<p>Hello <b>you</b></p>").value, is_html("Hello").value
        (1.0, 0.0)
    """
    _needs("html5lib", "is_html")
    text = text_of(prediction).strip()
    # html5lib's tree building is quadratic on some inputs: under the expression limit
    answer = _expressions.evaluate("is_html", "parsing the output", ("html", text))
    if "raised" in answer:
        raise ScorerError(f"is_html: parsing the output raised {answer['raised']}")
    if answer["errors"]:
        line, column, code = answer["first"]
        says = f"output is not clean HTML: {code} at line {line}, column {column}"
        return outcome(False, says, negate=negate, raw=answer["errors"])
    if not answer["element"]:
        return outcome(False, "output has no HTML element", negate=negate, raw=0)
    return outcome(True, "output is HTML", negate=negate, raw=0)


@functools.lru_cache(maxsize=32)
def _dialect(name: str | None) -> Any:
    sqlglot = _needs("sqlglot", "is_sql")
    if name is None:
        return None
    try:
        return sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        raise ConfigError(f"is_sql.dialect: unknown SQL dialect {name!r}") from None


def _valid_dialect(options: dict[str, Any]) -> None:
    _dialect(options.get("dialect"))


@check(_valid_dialect, bounded=True)
def is_sql(
    prediction: Any, _expected: Any = None, *, dialect: str | None = None, negate: bool = False
) -> Score:
    """Whether the output is one or more SQL statements (``;``-separated) that ``sqlglot``
    parses in ``dialect`` (its generic dialect if none), each a query, DML or DDL statement (a
    bare word or expression is not SQL).

    Example:
        >>> is_sql("SELECT name FROM users WHERE id = 1").value
        1.0
        >>> is_sql("SELECT FROM WHERE").value, is_sql("hello world").value
        (0.0, 0.0)
    """
    _dialect(dialect)
    # sqlglot's parser takes seconds per megabyte: under the expression limit
    request = ("sql", text_of(prediction), dialect)
    answer = _expressions.evaluate("is_sql", "parsing the output", request)
    if "raised" in answer:
        raise ScorerError(f"is_sql: parsing the output raised {answer['raised']}")
    if "error" in answer:
        return outcome(False, f"output is not SQL: {answer['error']}", negate=negate)
    found = answer["found"]
    if not found:
        return outcome(False, "output has no SQL statement", negate=negate, raw=0)
    if "other" in answer:
        kind, shown = answer["other"]
        says = f"output is not SQL: {shown!r} is a {kind}, not a statement"
        return outcome(False, says, negate=negate, raw=found)
    return outcome(True, f"output is {found} SQL statement(s)", negate=negate, raw=found)
