"""Invariants every deterministic check shares, in the style of scikit-learn's common metric
tests: a new check joins by being listed in CHECKS with options that configure it.

Each check: returns a Score in 0..1 (or n/a, for a figure the sample does not have), is
deterministic, handles empty, unicode and None output (None counts as empty text), has a reason
whatever the outcome, inverts with ``negate``, refuses an unknown option naming it, pickles (for
Ray workers) to a check that scores the same, is exported in ``__all__``, registered by name and
documented in docs/checks.md.
"""

from __future__ import annotations

import asyncio
import doctest
import importlib
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.openai_server import OpenAIServer

import aieval.scorers as scorers
from aieval import Score
from aieval._calls import collect_calls
from aieval._records import CallRecord
from aieval.errors import ConfigError
from aieval.scorers import Check, Scorer, get_scorer

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"

#: (name, options) for every check; a second entry of a name covers another mode of it.
CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("contains", {"value": "refund"}),
    ("icontains", {"value": "Refund"}),
    ("contains_any", {"values": ["refund", "заказ"]}),
    ("contains_all", {"values": ["refund", "order"]}),
    ("icontains_any", {"values": ["REFUND", "订单"]}),
    ("icontains_all", {"values": ["REFUND", "ORDER"]}),
    ("starts_with", {"value": "Your"}),
    ("regex", {"pattern": r"\d{4}"}),
    ("regex", {"pattern": "your.*", "flags": "is", "full": True}),
    ("equals", {"value": "Your refund for order 1234 is on its way."}),
    ("levenshtein", {"value": "Your refund for order 1243 is on its way", "max_distance": 3}),
    ("word_count", {"min_words": 3, "max_words": 12}),
    ("json_schema", {}),
    ("json_schema", {"schema": {"type": "object", "required": ["a"]}, "contains": True}),
    ("is_xml", {}),
    ("is_html", {}),
    ("is_sql", {"dialect": "sqlite"}),
    ("latency", {"max_s": 1.0}),
    ("cost", {"max_usd": 0.01}),
    ("finish_reason", {"value": "stop"}),
    ("python", {"expression": "'refund' in output and len(output) < 80"}),
    ("similar", {"value": "Your refund for order 1234", "threshold": 0.9, "cache": False}),
]
#: Checks that read the sample's call records rather than its text.
CALL_CHECKS = {"latency", "cost", "finish_reason"}
#: ``similar`` asks this loopback embeddings server (letter-count vectors).
SERVER = OpenAIServer()

OUTPUTS = [
    "Your refund for order 1234 is on its way.",
    "",
    None,
    "заказ 订单 — réfund ✓ 🚀",
    '{"a": 1}',
    "<p>Your <b>refund</b></p>",
    "SELECT id FROM orders WHERE id = 1234",
    "  Your REFUND order  ",
]

PARAMS = [pytest.param(name, options, id=f"{name}-{i}") for i, (name, options) in enumerate(CHECKS)]
NAMES = sorted({name for name, _ in CHECKS})


@pytest.fixture(scope="module", autouse=True)
def _embeddings_server() -> Iterator[None]:
    with SERVER:
        yield


def _configured(name: str, options: dict[str, Any]) -> Scorer:
    if name == "similar":
        options = {**options, "base_url": SERVER.base_url, "embedding_model": "emb"}
    return get_scorer(name).with_options(**options)


def _calls(latency: float, cost: float, finish: str) -> list[CallRecord]:
    return [CallRecord("target", "p", "m", latency_s=latency, cost=cost, finish_reason=finish)]


def _score(check: Scorer, output: str | None, calls: list[CallRecord] | None = None) -> Score:
    """Score ``output`` as the runner does, with ``calls`` as the sample's call records."""

    async def go() -> Score:
        if calls is not None:
            collect_calls().extend(calls)
        try:
            return await check.score(output, None, {"example": None})
        finally:
            closer = getattr(check.fn, "aclose", None)  # as the runner does after a run
            if closer is not None:
                await closer()

    return asyncio.run(go())


def test_every_check_is_listed_exported_registered_and_documented() -> None:
    checks = {n for n in scorers.__all__ if isinstance(getattr(scorers, n), Check)}
    assert checks == set(NAMES)
    docs = DOCS.read_text(encoding="utf-8")
    for name in NAMES:
        assert get_scorer(name) is getattr(scorers, name)
        assert f"### `{name}`" in docs, f"{name} has no section in docs/checks.md"
        assert getattr(scorers, name).__doc__, f"{name} has no docstring"


@pytest.mark.parametrize(("name", "options"), PARAMS)
@pytest.mark.parametrize("output", OUTPUTS, ids=repr)
def test_scores_are_in_range_with_a_reason_and_deterministic(
    name: str, options: dict[str, Any], output: str | None
) -> None:
    check = _configured(name, options)
    calls = _calls(0.5, 0.001, "stop") if name in CALL_CHECKS else None
    first = _score(check, output, calls)
    assert first.value in (0.0, 1.0)
    assert first.reason
    assert _score(check, output, calls) == first


@pytest.mark.parametrize(("name", "options"), PARAMS)
def test_none_output_is_scored_as_empty_text(name: str, options: dict[str, Any]) -> None:
    check = _configured(name, options)
    calls = _calls(0.5, 0.001, "stop") if name in CALL_CHECKS else None
    assert _score(check, None, calls) == _score(check, "", calls)


@pytest.mark.parametrize(("name", "options"), PARAMS)
@pytest.mark.parametrize("output", OUTPUTS[:4], ids=repr)
def test_negate_inverts_the_outcome_and_says_why(
    name: str, options: dict[str, Any], output: str | None
) -> None:
    calls = _calls(2.0, 0.5, "length") if name in CALL_CHECKS else None
    plain = _score(_configured(name, options), output, calls)
    negated = _score(_configured(name, {**options, "negate": True}), output, calls)
    assert plain.value is not None and negated.value == 1.0 - plain.value
    assert negated.reason
    if plain.value == 1.0:
        assert "negate" in negated.reason


@pytest.mark.parametrize(("name", "options"), PARAMS)
def test_fails_and_passes_on_some_output(name: str, options: dict[str, Any]) -> None:
    """Each configured check tells outputs apart (no check passes or fails everything)."""
    check = _configured(name, options)
    if name in CALL_CHECKS:
        values = {
            _score(check, "x", c).value
            for c in (_calls(0.1, 0.0, "stop"), _calls(9.0, 1.0, "length"))
        }
    else:
        values = {_score(check, output).value for output in OUTPUTS}
    assert values == {0.0, 1.0}


@pytest.mark.parametrize(("name", "options"), PARAMS)
def test_a_failure_has_a_reason(name: str, options: dict[str, Any]) -> None:
    check = _configured(name, options)
    calls = _calls(9.0, 1.0, "length") if name in CALL_CHECKS else None
    failures = [s for s in (_score(check, o, calls) for o in OUTPUTS) if s.value == 0.0]
    assert failures and all(s.reason for s in failures)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in CALL_CHECKS | {"similar"}])
@settings(max_examples=60, deadline=None)
@given(output=st.text(max_size=80))
def test_any_text_scores_in_range(name: str, output: str) -> None:
    options = next(o for n, o in CHECKS if n == name)
    result = _configured(name, options)(output, None)
    assert isinstance(result, Score) and result.value in (0.0, 1.0) and result.reason


@pytest.mark.parametrize("name", sorted(CALL_CHECKS))
def test_call_checks_are_not_applicable_without_call_records(name: str) -> None:
    options = next(o for n, o in CHECKS if n == name)
    result = _score(_configured(name, options), "text")
    assert result.value is None and result.reason


@pytest.mark.parametrize(("name", "options"), PARAMS)
def test_pickles_to_a_check_that_scores_the_same(name: str, options: dict[str, Any]) -> None:
    check = _configured(name, options).with_options(name=f"my_{name}")
    back = pickle.loads(pickle.dumps(check))
    assert isinstance(back, Check) and back.name == f"my_{name}" and back.options == check.options
    calls = _calls(0.5, 0.001, "stop") if name in CALL_CHECKS else None
    for output in OUTPUTS:
        assert _score(back, output, calls) == _score(check, output, calls)


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_option_is_refused_naming_it(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{name}\.nagate: unknown key; did you mean negate\?"):
        get_scorer(name).with_options(nagate=True)


@pytest.mark.parametrize("name", NAMES)
def test_a_mistyped_option_is_refused_naming_it(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{name}\.negate: .*\(got 'yes'\)"):
        get_scorer(name).with_options(**next(o for n, o in CHECKS if n == name), negate="yes")


@pytest.mark.parametrize("name", NAMES)
def test_docstring_examples_run(name: str) -> None:
    check = getattr(scorers, name)
    module = importlib.import_module(check.fn.__module__)
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(check.fn, name, globs=dict(vars(module))):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert result.attempted > 0 or name == "similar"
