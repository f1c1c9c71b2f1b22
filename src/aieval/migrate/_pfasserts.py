"""promptfoo assertions to aieval checks: each assertion either maps to one check entry with
the same pass/fail on every output, or is left for a stub with the reason it was not mapped."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aieval.errors import ConfigError
from aieval.migrate._nunjucks import js_text, render
from aieval.migrate._pfconfig import Assertion
from aieval.scorers import PYTHON_FUNCTIONS, get_scorer

__all__ = [
    "MAPPED_TYPES",
    "NOT_EQUIVALENT",
    "PROMPTFOO_EMBEDDING_MODEL",
    "Mapped",
    "Unmapped",
    "embedding_provider",
    "js_pattern",
    "map_assertion",
    "uses_variables",
]


@dataclass(frozen=True, slots=True)
class Mapped:
    """An assertion translated: the aieval check ``check`` with ``options``."""

    source: Assertion
    check: str
    options: dict[str, Any] = field(default_factory=dict)
    #: how aieval's check may judge an output otherwise than promptfoo, and what to do; empty
    #: when it gives promptfoo's verdict on every output
    differs: str = ""


@dataclass(frozen=True, slots=True)
class Unmapped:
    """An assertion left for a hand-written check, and why."""

    source: Assertion
    reason: str


_JUDGED = {
    "llm-rubric",
    "g-eval",
    "factuality",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "model-graded-closedqa",
    "model-graded-factuality",
    "select-best",
    "search-rubric",
    "conversation-relevance",
}

#: MySQL is node-sql-parser's (promptfoo's is-sql parser) default
_SQL_DIALECTS = {
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgresql": "postgres",
    "postgres": "postgres",
    "sqlite": "sqlite",
    "bigquery": "bigquery",
    "snowflake": "snowflake",
    "redshift": "redshift",
    "hive": "hive",
    "transactsql": "tsql",
    "db2": None,
    "flinksql": None,
}


def uses_variables(value: Any) -> bool:
    """Whether an assertion value holds a nunjucks template (it differs per test)."""
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    if isinstance(value, Mapping):
        return any(uses_variables(v) for v in value.values())
    if isinstance(value, list):
        return any(uses_variables(v) for v in value)
    return False


def map_assertion(assertion: Assertion, test_vars: Mapping[str, Any]) -> Mapped | Unmapped:
    """The aieval check for ``assertion`` in a test with ``test_vars``; templates in its value
    are rendered with them (as promptfoo renders them before asserting)."""
    kind = assertion.type
    negate = kind.startswith("not-")
    base = kind[4:] if negate else kind
    if assertion.transform is not None:
        return Unmapped(
            assertion,
            f"transforms the output with JavaScript first (transform: {assertion.transform})",
        )
    unknown = (
        sorted(set(assertion.extra) - {"provider"})
        if base == "similar"
        else sorted(assertion.extra)
    )
    if unknown:
        return Unmapped(assertion, f"keys {unknown} are not translated")
    rule = _RULES.get(base)
    if rule is None:
        if base in _JUDGED:
            return Unmapped(
                assertion,
                "graded by an LLM; promptfoo's grading prompt has no exact aieval "
                "counterpart (write it as an llm_judge rubric)",
            )
        if base == "javascript":
            return Unmapped(assertion, "JavaScript code is not translated")
        return Unmapped(assertion, f"assertion type {kind!r} has no aieval check")
    try:
        value = _rendered(assertion.value, test_vars, assertion.where)
        found = rule(assertion, value)
    except ConfigError as exc:
        return Unmapped(assertion, str(exc))
    if isinstance(found, Unmapped):
        return found
    options = dict(found.options)
    if negate:
        options["negate"] = True
    if assertion.metric is not None:
        options["name"] = assertion.metric
    if assertion.weight != 1.0:
        options["weight"] = assertion.weight
    try:  # the check accepts these options (weight aside: the eval file carries it)
        get_scorer(found.check).with_options(
            **{k: v for k, v in options.items() if k not in {"weight", "name"}}
        )
    except ConfigError as exc:
        return Unmapped(assertion, f"aieval's {found.check} refuses it: {exc}")
    return Mapped(assertion, found.check, options, _differs(base, found))


#: What differs between promptfoo's assertion and the aieval check it maps to, and what to do.
#: Every mapped type is here or in :func:`_differs`' conditions, or is exact (the conformance
#: tests hold promptfoo's verdicts on those).
NOT_EQUIVALENT: Mapping[str, str] = {
    "cost": (
        "promptfoo prices each call from its own table of model prices; aieval's cost check "
        "takes the cost the provider reports, and OpenAI-style usage reports tokens, not cost, "
        "so without prices it is not applicable on every sample and scores nothing. Give the "
        "check prices: {MODEL: {input_per_mtok: ..., output_per_mtok: ...}} (USD per million "
        "tokens) for each model"
    ),
    "latency": (
        "promptfoo times its provider call and fails a cached answer; aieval sums the target's "
        "recorded model calls (a retried call from its first attempt) and a cached answer keeps "
        "the latency of the call that made it. Run without the cache, as promptfoo requires, "
        "and expect figures near the threshold to differ"
    ),
    "finish-reason": (
        "promptfoo fails the assertion when the provider reports no finish reason; aieval "
        "leaves the check not applicable (the run reports a check that scored no "
        "sample). Use a target that reports finish reasons (aieval's openai, anthropic, ollama "
        "and vllm do); a recorded answer has none"
    ),
    "is-json": (
        "the output is read by Python's JSON reader, which also reads NaN and Infinity "
        "(JavaScript's JSON.parse refuses them), and a schema is checked by the jsonschema "
        "library (the draft its $schema names, else 2020-12; format not checked), not by "
        "promptfoo's ajv (draft-07): such outputs, and schemas relying on one draft's keywords "
        "or on format, may be judged otherwise. Name the draft in the schema's $schema "
        "(http://json-schema.org/draft-07/schema#) when it relies on one"
    ),
    "contains-json": (
        "the JSON is found in the text by aieval's search (the first valid object or array), "
        "read by Python (which also reads NaN and Infinity) and checked by the jsonschema "
        "library (2020-12 unless $schema names a draft; format not checked), not by promptfoo's "
        "extraction and ajv (draft-07): text holding several JSON values, and schemas relying "
        "on one draft or on format, may be judged otherwise"
    ),
    "is-sql": (
        "parsed by sqlglot in the mapped dialect, not by promptfoo's node-sql-parser: the two "
        "accept different SQL at the edges (vendor extensions, statements one parser lacks). "
        "Look over the first run's is_sql verdicts"
    ),
    "is-xml": (
        "parsed by Python's expat through defusedxml (which refuses entity declarations as "
        "unsafe), not by promptfoo's XML parser (which changed across its versions): "
        "well-formed documents agree; a DTD, entities or text around the document may be "
        "judged otherwise"
    ),
    "is-html": (
        "parsed by html5lib, which fails any WHATWG parse error, not by promptfoo's own HTML "
        "test: malformed or partial HTML may be judged otherwise. Look over the first run's "
        "is_html verdicts"
    ),
    **dict.fromkeys(
        ("icontains", "icontains-any", "icontains-all"),
        "aieval compares case-folded text, promptfoo lower-cased text (JavaScript's "
        "toLowerCase): a few characters fold to others (ß to ss, ς to σ, the ligature ﬁ to fi), "
        "so 'Straße' contains 'STRASSE' in aieval and not in promptfoo. Equal on text without "
        "such characters",
    ),
    "levenshtein": (
        "promptfoo counts the distance in JavaScript's UTF-16 units, so a character beyond "
        "U+FFFF (an emoji, rare CJK) counts as two; aieval counts characters. Equal on text "
        "without such characters; near the threshold give it one more edit per such character"
    ),
}


def _differs(base: str, found: Mapped) -> str:
    """The difference note for a mapping of promptfoo type ``base`` (no ``not-``)."""
    if base == "regex" and _counts_units(found.source.value):
        return (
            "JavaScript reads a character beyond U+FFFF (an emoji, rare CJK) as two units, so "
            "., a negated class, \\S, \\W, \\D, and a repeat of such a character in the "
            "pattern, match it otherwise than Python; equal on text without such characters"
        )
    return NOT_EQUIVALENT.get(base, "")


def _counts_units(pattern: Any) -> bool:
    """Whether a JavaScript pattern has a construct that matches one UTF-16 unit (an escaped
    character other than ``\\S``, ``\\W``, ``\\D`` matches itself)."""
    if not isinstance(pattern, str):
        return False
    bare = re.sub(r"\\.", lambda m: "\\S" if m.group() in {r"\S", r"\W", r"\D"} else "", pattern)
    astral = any(ord(ch) > 0xFFFF for ch in pattern)  # a quantifier after one repeats half
    return astral or any(p in bare for p in (".", "[^", "\\S"))


def _rendered(value: Any, test_vars: Mapping[str, Any], where: str) -> Any:
    if isinstance(value, str):
        if value.startswith("file://"):
            raise ConfigError(f"{where}: a value read from {value} is not translated")
        return render(value, test_vars, where) if uses_variables(value) else value
    if isinstance(value, list):
        return [_rendered(v, test_vars, where) for v in value]
    if isinstance(value, Mapping):
        return {k: _rendered(v, test_vars, where) for k, v in value.items()}
    return value


def _text(value: Any, assertion: Assertion) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
        raise ConfigError(f"{assertion.where}: needs a text or number value, got {value!r}")
    return js_text(value, assertion.where)


def _texts(value: Any, assertion: Assertion) -> list[str]:
    if isinstance(value, str):
        if '"' in value:  # promptfoo reads quoted fields (CSV-like); plain ones are trimmed
            raise ConfigError(
                f"{assertion.where}: a quoted comma-separated list is not translated; "
                "give the values as a YAML list"
            )
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{assertion.where}: needs a list of values, got {value!r}")
    return [_text(v, assertion) for v in value]


def _value_check(name: str) -> Callable[[Assertion, Any], Mapped | Unmapped]:
    def rule(assertion: Assertion, value: Any) -> Mapped | Unmapped:
        return Mapped(assertion, name, {"value": _text(value, assertion)})

    return rule


def _values_check(name: str) -> Callable[[Assertion, Any], Mapped | Unmapped]:
    def rule(assertion: Assertion, value: Any) -> Mapped | Unmapped:
        return Mapped(assertion, name, {"values": _texts(value, assertion)})

    return rule


def _equals(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    if isinstance(value, (Mapping, list)):
        return Unmapped(assertion, "equality with a JSON value (deep comparison) is not translated")
    return Mapped(assertion, "equals", {"value": _text(value, assertion)})


def _regex(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{assertion.where}: needs a pattern, got {value!r}")
    pattern = js_pattern(value)
    if pattern is None:
        return Unmapped(assertion, f"the pattern {value!r} uses syntax JavaScript reads otherwise")
    return Mapped(assertion, "regex", {"pattern": pattern})


#: JavaScript's ``\s`` (ASCII spaces and Unicode's), for a pattern read with ``(?a)``
_JS_SPACE = r"\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
#: JavaScript's ``.`` without the ``s`` flag: anything but a line terminator
_JS_DOT = r"[^\n\r\u2028\u2029]"
#: after ``(?``: the groups JavaScript and Python both read (non-capturing, lookaround, named)
_JS_GROUPS = (":", "=", "!", "<=", "<!", "<")


def js_pattern(source: str) -> str | None:
    r"""A JavaScript ``RegExp`` source (no flags) as a pattern with the same matches in the
    ``regex`` library, or ``None`` when a construct is read differently (an inline flag group
    is an error in JavaScript, ``[^]`` is an error in Python...).

    ``\d``, ``\w`` and ``\b`` are ASCII in JavaScript: the pattern starts with ``(?a)``, and
    ``\s`` gets back JavaScript's Unicode spaces; ``.`` excludes JavaScript's line terminators;
    ``$`` outside a class matches only at the very end: it becomes ``\Z``.
    """
    out: list[str] = ["(?a)"]
    i, in_class = 0, False
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            if i + 1 >= len(source) or source[i + 1] in "AZzGhHQEpPck":
                return None  # anchors and classes Python has and JavaScript reads as letters
            escape = source[i : i + 2]
            if escape == r"\s":
                escape = _JS_SPACE if in_class else f"[{_JS_SPACE}]"
            elif escape == r"\S":
                if in_class:
                    return None
                escape = f"[^{_JS_SPACE}]"
            out.append(escape)
            i += 2
            continue
        if ch == "." and not in_class:
            out.append(_JS_DOT)
            i += 1
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            if source.startswith("[^]", i) or source.startswith("[]", i):
                return None
            in_class = True
        elif ch == "(" and source.startswith("(?", i):
            if not source[i + 2 :].startswith(_JS_GROUPS):
                return None
        elif ch == "$":
            out.append("\\Z")
            i += 1
            continue
        elif ch in "{}" and not _quantifier(source, i):
            return None  # a literal brace: JavaScript takes it as text, Python may not
        out.append(ch)
        i += 1
    return "".join(out)


def _quantifier(source: str, i: int) -> bool:
    """Whether the brace at ``i`` is part of a ``{n}``, ``{n,}`` or ``{n,m}`` quantifier."""
    if source[i] == "{":
        return re.match(r"\{\d+(,\d*)?\}", source[i:]) is not None
    start = source.rfind("{", 0, i)
    return start >= 0 and re.fullmatch(r"\{\d+(,\d*)?\}", source[start : i + 1]) is not None


def _json(contains: bool) -> Callable[[Assertion, Any], Mapped | Unmapped]:
    def rule(assertion: Assertion, value: Any) -> Mapped | Unmapped:
        options: dict[str, Any] = {"contains": True} if contains else {}
        if isinstance(value, str):
            return Unmapped(assertion, "a schema given as text or a file is not translated")
        if value is not None:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{assertion.where}: a schema is a mapping, got {value!r}")
            options["schema"] = dict(value)
        return Mapped(assertion, "json_schema", options)

    return rule


def _plain(name: str) -> Callable[[Assertion, Any], Mapped | Unmapped]:
    def rule(assertion: Assertion, value: Any) -> Mapped | Unmapped:
        if value is not None:
            return Unmapped(assertion, f"a value ({value!r}) is not translated for this type")
        return Mapped(assertion, name, {})

    return rule


def _sql(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    if value is None:
        return Mapped(assertion, "is_sql", {"dialect": "mysql"})
    if not isinstance(value, Mapping) or set(value) - {"databaseType"}:
        return Unmapped(
            assertion,
            "is-sql options beyond databaseType (allowed tables or columns) are not translated",
        )
    database = str(value.get("databaseType", "MySQL"))
    dialect = _SQL_DIALECTS.get(database.lower())
    if dialect is None:
        return Unmapped(assertion, f"databaseType {database!r} has no sqlglot dialect mapped")
    return Mapped(assertion, "is_sql", {"dialect": dialect})


def _levenshtein(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    threshold = 5.0 if assertion.threshold is None else assertion.threshold
    if threshold != int(threshold) or threshold < 0:
        raise ConfigError(f"{assertion.where}: threshold (a distance) must be a whole number")
    return Mapped(
        assertion,
        "levenshtein",
        {"value": _text(value, assertion), "max_distance": int(threshold)},
    )


def _needs_threshold(assertion: Assertion) -> float:
    if assertion.threshold is None:
        raise ConfigError(f"{assertion.where}: needs a threshold")
    return assertion.threshold


def _latency(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    return Mapped(assertion, "latency", {"max_s": _needs_threshold(assertion) / 1000.0})


def _cost(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    return Mapped(assertion, "cost", {"max_usd": _needs_threshold(assertion)})


#: promptfoo's default embedding model (its OpenAI ``DefaultEmbeddingProvider``), written on
#: every translated ``similar``: aieval's own default is another model
PROMPTFOO_EMBEDDING_MODEL = "text-embedding-3-large"


def _similar(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    options: dict[str, Any] = {
        "value": _text(value, assertion),
        "threshold": 0.75 if assertion.threshold is None else assertion.threshold,
        "embedding_model": PROMPTFOO_EMBEDDING_MODEL,
    }
    provider = assertion.extra.get("provider")
    if isinstance(provider, Mapping) and "embedding" in provider:
        provider = provider["embedding"]  # {text: ..., embedding: ...}: the embedding one
    if isinstance(provider, Mapping) and set(provider) <= {"id", "label"}:
        provider = provider.get("id")
    if provider is not None:
        parts = str(provider).split(":") if isinstance(provider, str) else []
        if len(parts) != 3 or parts[0] != "openai" or parts[1] not in {"embedding", "embeddings"}:
            return Unmapped(assertion, f"embedding provider {provider!r} is not translated")
        options["embedding_model"] = parts[2]
    return Mapped(assertion, "similar", options)


def embedding_provider(provider: Any) -> Any:
    """The part of a test's ``options.provider`` that ``similar`` uses, or ``None``: promptfoo
    takes its ``embedding`` entry, or the provider itself when it embeds; a text provider
    (for the LLM-graded assertions) is not one, and promptfoo falls back to its default."""
    if isinstance(provider, Mapping):
        if "embedding" in provider:
            return provider["embedding"]
        name = provider.get("id")
    else:
        name = provider
    return provider if isinstance(name, str) and "embed" in name.lower() else None


def _finish_reason(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    # promptfoo compares without case; the reasons aieval's providers report are lower case
    return Mapped(assertion, "finish_reason", {"value": _text(value, assertion).lower()})


_CONTEXT_KEYS = {"vars"}


class _Rewrite(ast.NodeTransformer):
    """promptfoo's Python context to the ``python`` check's names: ``context['vars']`` to
    ``row['vars']`` (the dataset keeps the variables there), ``json.loads`` to ``json_loads``."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "context":
            key = node.slice
            if isinstance(key, ast.Constant) and key.value in _CONTEXT_KEYS:
                return ast.Subscript(ast.Name("row", ast.Load()), key, node.ctx)
            raise ConfigError("only context['vars'] of the context is translated")
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "json" and node.attr == "loads":
            return ast.Name("json_loads", ast.Load())
        return self.generic_visit(node)


def _python(assertion: Assertion, value: Any) -> Mapped | Unmapped:
    if not isinstance(value, str) or "\n" in value.strip():
        return Unmapped(
            assertion,
            "a Python script (several lines or a file) is not translated; "
            "only a one-line expression is",
        )
    try:
        tree = ast.parse(value.strip(), mode="eval")
        tree = ast.fix_missing_locations(_Rewrite().visit(tree))
    except SyntaxError as exc:
        return Unmapped(assertion, f"not a Python expression: {exc.msg}")
    except ConfigError as exc:
        return Unmapped(assertion, str(exc))
    allowed = {"output", "row", "True", "False", "None", *PYTHON_FUNCTIONS}
    bound = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.comprehension)
        for target in ast.walk(node.target)
        if isinstance(target, ast.Name)
    }
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound
    if names - allowed:
        return Unmapped(
            assertion, f"uses {sorted(names - allowed)}, which the python check does not provide"
        )
    expression = ast.unparse(tree)
    # promptfoo: a boolean result is the outcome; a number passes when above 0, or at least
    # the threshold; the same outcome as one comparison (a boolean compares as 0 or 1)
    threshold = assertion.threshold
    if threshold is None:
        return Mapped(assertion, "python", {"expression": f"({expression}) > 0"})
    if not 0 < threshold <= 1:
        return Unmapped(
            assertion,
            "a threshold outside (0, 1] would judge a boolean result differently from promptfoo",
        )
    return Mapped(assertion, "python", {"expression": f"({expression}) >= {threshold!r}"})


_RULES: dict[str, Callable[[Assertion, Any], Mapped | Unmapped]] = {
    "contains": _value_check("contains"),
    "icontains": _value_check("icontains"),
    "starts-with": _value_check("starts_with"),
    "contains-any": _values_check("contains_any"),
    "contains-all": _values_check("contains_all"),
    "icontains-any": _values_check("icontains_any"),
    "icontains-all": _values_check("icontains_all"),
    "equals": _equals,
    "regex": _regex,
    "is-json": _json(contains=False),
    "contains-json": _json(contains=True),
    "is-xml": _plain("is_xml"),
    "is-html": _plain("is_html"),
    "is-sql": _sql,
    "levenshtein": _levenshtein,
    "latency": _latency,
    "cost": _cost,
    "similar": _similar,
    "finish-reason": _finish_reason,
    "python": _python,
}

#: the promptfoo types (each also with ``not-``) that map to a check
MAPPED_TYPES = tuple(sorted(_RULES))
