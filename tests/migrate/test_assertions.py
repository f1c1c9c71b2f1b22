"""Each promptfoo assertion type maps to the aieval check with the same verdicts, or is left
for a stub with the reason; the verdicts themselves are compared with promptfoo's own in
tests/conformance/promptfoo."""

from __future__ import annotations

from typing import Any

import pytest
import regex

from aieval.migrate import MAPPED_TYPES
from aieval.migrate._pfasserts import Mapped, Unmapped, js_pattern, map_assertion
from aieval.migrate._pfconfig import Assertion
from aieval.scorers import get_scorer


def _assertion(kind: str, value: Any = None, **fields: Any) -> Assertion:
    extra = fields.pop("extra", {})
    return Assertion(type=kind, value=value, where=f"test: {kind}", extra=extra, **fields)


MAPPED: list[tuple[Assertion, str, dict[str, Any]]] = [
    (_assertion("contains", "Paris"), "contains", {"value": "Paris"}),
    (_assertion("contains", 42), "contains", {"value": "42"}),
    (_assertion("not-contains", "London"), "contains", {"value": "London", "negate": True}),
    (_assertion("icontains", "hello"), "icontains", {"value": "hello"}),
    (_assertion("starts-with", "Yes"), "starts_with", {"value": "Yes"}),
    (_assertion("contains-any", ["a", "b"]), "contains_any", {"values": ["a", "b"]}),
    (_assertion("contains-all", "a, b"), "contains_all", {"values": ["a", "b"]}),
    (_assertion("icontains-any", ["A"]), "icontains_any", {"values": ["A"]}),
    (_assertion("not-icontains-all", ["A"]), "icontains_all", {"values": ["A"], "negate": True}),
    (_assertion("equals", "42"), "equals", {"value": "42"}),
    (_assertion("regex", r"^\d+$"), "regex", {"pattern": r"(?a)^\d+\Z"}),
    (_assertion("is-json"), "json_schema", {}),
    (
        _assertion("is-json", {"type": "object"}),
        "json_schema",
        {"schema": {"type": "object"}},
    ),
    (_assertion("contains-json"), "json_schema", {"contains": True}),
    (_assertion("is-xml"), "is_xml", {}),
    (_assertion("not-is-xml"), "is_xml", {"negate": True}),
    (_assertion("is-html"), "is_html", {}),
    (_assertion("is-sql"), "is_sql", {"dialect": "mysql"}),
    (_assertion("is-sql", {"databaseType": "PostgreSQL"}), "is_sql", {"dialect": "postgres"}),
    (_assertion("levenshtein", "kitten"), "levenshtein", {"value": "kitten", "max_distance": 5}),
    (
        _assertion("levenshtein", "kitten", threshold=2),
        "levenshtein",
        {"value": "kitten", "max_distance": 2},
    ),
    (_assertion("latency", threshold=1500), "latency", {"max_s": 1.5}),
    (_assertion("cost", threshold=0.002), "cost", {"max_usd": 0.002}),
    (
        _assertion("similar", "hi"),
        "similar",  # promptfoo's default embedding model, written out
        {"value": "hi", "threshold": 0.75, "embedding_model": "text-embedding-3-large"},
    ),
    (
        _assertion(
            "similar",
            "hi",
            threshold=0.9,
            extra={"provider": "openai:embedding:text-embedding-3-large"},
        ),
        "similar",
        {"value": "hi", "threshold": 0.9, "embedding_model": "text-embedding-3-large"},
    ),
    (_assertion("finish-reason", "stop"), "finish_reason", {"value": "stop"}),
    (_assertion("python", "len(output) < 9"), "python", {"expression": "(len(output) < 9) > 0"}),
    (
        _assertion("python", "output.count('a') / 10", threshold=0.2),
        "python",
        {"expression": "(output.count('a') / 10) >= 0.2"},
    ),
    (
        _assertion("python", "context['vars']['t'] in json.loads(output)"),
        "python",
        {"expression": "(row['vars']['t'] in json_loads(output)) > 0"},
    ),
    (
        _assertion("contains", "x", metric="tone", weight=2),
        "contains",
        {"value": "x", "name": "tone", "weight": 2.0},
    ),
]


@pytest.mark.parametrize(("assertion", "check", "options"), MAPPED, ids=lambda v: str(v)[:40])
def test_each_type_maps_to_its_check(
    assertion: Assertion, check: str, options: dict[str, Any]
) -> None:
    found = map_assertion(assertion, {})
    assert isinstance(found, Mapped), found
    assert (found.check, found.options) == (check, options)
    bound = {k: v for k, v in options.items() if k not in {"name", "weight"}}
    get_scorer(check).with_options(**bound)  # the check accepts the options


def test_every_mapped_type_is_in_the_table_above() -> None:
    covered = {a.type.removeprefix("not-") for a, _, _ in MAPPED}
    assert covered == set(MAPPED_TYPES)


def test_a_templated_value_is_rendered_with_the_tests_variables() -> None:
    found = map_assertion(_assertion("contains", "{{city}} is"), {"city": "Paris"})
    assert isinstance(found, Mapped) and found.options == {"value": "Paris is"}


@pytest.mark.parametrize(
    ("assertion", "reason"),
    [
        (_assertion("javascript", "output.length < 9"), "JavaScript code is not translated"),
        (_assertion("llm-rubric", "is polite"), "graded by an LLM"),
        (_assertion("model-graded-closedqa", "greets"), "graded by an LLM"),
        (_assertion("rouge-n", "x"), "has no aieval check"),
        (_assertion("contains", "x", transform="output.trim()"), "transforms the output"),
        (_assertion("contains", "x", extra={"config": {}}), "keys ['config'] are not translated"),
        (_assertion("contains-any", '"a, b", c'), "quoted comma-separated list"),
        (_assertion("equals", {"a": 1}), "equality with a JSON value"),
        (_assertion("python", "x = 1\nreturn x"), "a Python script"),
        (_assertion("python", "math.sqrt(len(output))"), "uses ['math']"),
        (_assertion("python", "context['prompt'] in output"), "only context['vars']"),
        (_assertion("python", "len(output)", threshold=5), "a threshold outside (0, 1]"),
        (_assertion("regex", "(?i)hello"), "uses syntax JavaScript reads otherwise"),
        (_assertion("is-sql", {"allowedTables": ["t"]}), "beyond databaseType"),
        (_assertion("is-json", "file://schema.json"), "a value read from file://schema.json"),
        (_assertion("latency"), "needs a threshold"),
        (_assertion("contains", ""), "needs a text or number value"),
        (_assertion("similar", "x", extra={"provider": "hf:x"}), "embedding provider"),
        (_assertion("contains", "{{missing}}"), "'missing' is not set"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_what_has_no_equivalent_is_left_with_its_reason(assertion: Assertion, reason: str) -> None:
    found = map_assertion(assertion, {})
    assert isinstance(found, Unmapped)
    assert reason in found.reason


@pytest.mark.parametrize(
    ("source", "text", "matches"),
    [
        (r"^\d+$", "123\n", False),  # JavaScript's $ is the very end
        (r"^\d+$", "123", True),
        (r"\d", "\u0663", False),  # JavaScript's \d is ASCII
        (r"a.b", "a\rb", False),  # JavaScript's . stops at \r
        (r"a.b", "a-b", True),
        (r"a\sb", "a\u00a0b", True),  # JavaScript's \s has Unicode's spaces
        (r"[\s]b", "\u3000b", True),
        (r"a\Sb", "a\u3000b", False),
        (r"\bcaf\b", "café", True),  # JavaScript's \b is ASCII
        (r"(?<year>\d{4})-\k", "2024-k", None),  # \k without the u flag: refused
        (r"[^]", "x", None),
        (r"a{", "a{", None),
        (r"\d{2,}", "x12", True),
    ],
)
def test_javascript_patterns_keep_their_matches(
    source: str, text: str, matches: bool | None
) -> None:
    pattern = js_pattern(source)
    if matches is None:
        assert pattern is None
    else:
        assert pattern is not None
        assert (regex.search(pattern, text) is not None) is matches
