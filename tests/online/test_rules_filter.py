"""A rule's filter: one span meeting every condition; values compared as the span holds them;
a hostile regex or value bounded, and a trace it cannot judge a typed error."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.online import T0, put_rule

from aieval import Store
from aieval.errors import ConfigError, FilterError, FilterTimeout
from aieval.online import AttributeMatch, OnlineRule, RuleScoring, TraceFilter, rule_matches
from aieval.online._filter import MAX_REGEX_VALUE_CHARS, trace_matches
from aieval.online._rules import RuleOrigin, parse_rule
from aieval.online._worker import OnlineWorker
from aieval.store import ReceivedTraces
from aieval.traces import Span


def _span(name: str = "llm", service: str = "shop", **attributes: Any) -> Span:
    return Span("a" * 32, "b" * 16, "", name, 1, 2, attributes=attributes, service=service)


def _where(**conds: Any) -> TraceFilter:
    return TraceFilter(attributes=(AttributeMatch(**conds),))


def test_one_span_must_meet_every_condition() -> None:
    flt = TraceFilter(
        service_name="shop", span_name="llm", attributes=(AttributeMatch("tier", equals="gold"),)
    )
    # each condition met by some span, but never all by one: no match
    split = [_span(name="llm", tier="silver"), _span(name="db", tier="gold")]
    assert not trace_matches(flt, split)
    assert trace_matches(flt, [*split, _span(name="llm", tier="gold")])
    assert not trace_matches(flt, [_span(service="other", name="llm", tier="gold")])
    assert trace_matches(TraceFilter(), [_span()])
    assert not trace_matches(TraceFilter(), [])


@pytest.mark.parametrize(
    ("wanted", "held", "matches"),
    [
        ("1", "1", True),
        ("1", 1, False),  # a string never equals a number
        (1, 1.0, True),  # numbers by value
        (1, "1", False),
        (True, True, True),
        (True, 1, False),  # a bool only equals a bool
        (1, True, False),
        (False, 0, False),
        ("Gold", "gold", False),  # strings exactly
    ],
)
def test_equals_compares_as_the_span_holds_the_value(wanted: Any, held: Any, matches: bool) -> None:
    assert trace_matches(_where(key="k", equals=wanted), [_span(k=held)]) is matches


def test_exists_and_regex() -> None:
    assert trace_matches(_where(key="k", exists=True), [_span(k=None)])
    assert not trace_matches(_where(key="k", exists=True), [_span(j=1)])
    assert trace_matches(_where(key="k", exists=False), [_span(j=1)])
    assert trace_matches(_where(key="route", regex=r"/api/v\d+/.*"), [_span(route="/api/v2/x")])
    # a full match, not a search
    assert not trace_matches(_where(key="route", regex=r"v\d+"), [_span(route="/api/v2/x")])
    assert not trace_matches(_where(key="n", regex=r"\d+"), [_span(n=12)])  # strings only


def test_a_catastrophic_regex_on_a_long_value_stops_in_time_naming_rule_and_key() -> None:
    flt = _where(key="q", regex=r"(a+)+$")
    value = "a" * (MAX_REGEX_VALUE_CHARS - 1) + "!"
    started = time.monotonic()
    with pytest.raises(FilterTimeout) as caught:
        trace_matches(flt, [_span(q=value)], rule="hostile")
    assert time.monotonic() - started < 5  # 50 ms limit, generous for a busy machine
    assert caught.value.rule == "hostile" and caught.value.key == "q"
    assert "'hostile'" in str(caught.value) and "'q'" in str(caught.value)


def test_a_value_over_the_cap_is_an_error_never_a_silent_miss() -> None:
    with pytest.raises(FilterError, match="over the 4,096"):
        trace_matches(_where(key="q", regex="a*"), [_span(q="a" * 5000)], rule="r")


def test_a_span_that_matches_plainly_wins_over_one_that_cannot_be_judged() -> None:
    rule = OnlineRule(name="r", filter=_where(key="q", regex="a+"))
    hostile, plain = _span(q="a" * 5000), _span(q="aaa")
    assert rule_matches(rule, [hostile, plain])
    with pytest.raises(FilterError, match="rule 'r': attribute 'q'"):
        rule_matches(rule, [hostile, _span(q="b")])


def test_an_invalid_or_huge_regex_is_refused_when_the_rule_is_read(tmp_path: Path) -> None:
    origin = RuleOrigin("file", "rules.yaml", base_dir=tmp_path)
    rule: dict[str, Any] = {"name": "r", "scoring": {"scorers": ["json_valid"]}}
    for pattern, said in [("(a", "invalid regex"), ("a" * 1001, "at most 1000")]:
        bad = {**rule, "filter": {"attributes": [{"key": "k", "regex": pattern}]}}
        with pytest.raises(ConfigError, match=rf"rule 'r': filter.attributes\[0\].regex: .*{said}"):
            parse_rule(bad, origin)


def test_a_filter_error_at_examination_names_the_rule(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    rule = OnlineRule(
        "notes",
        filter=_where(key="note", regex="a.*"),
        scoring=RuleScoring(scorers=("json_valid",)),
        settle_s=0,
    )
    put_rule(store, rule)
    trace_id = "c" * 32
    span = {"traceId": trace_id, "spanId": "1" * 16, "name": "app", "startTimeUnixNano": "1",
            "endTimeUnixNano": "2", "attributes": [{"key": "note", "value": {
                "stringValue": "a" * (MAX_REGEX_VALUE_CHARS + 1)}}]}  # fmt: skip
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    ReceivedTraces(store.location).add(body, "json", {trace_id: 1}, T0 + 1)
    assert OnlineWorker(store.location, "w").examine(T0 + 2) == 1
    [work] = store.online_work("notes")
    assert (work.state, work.reason) == ("skipped", "error")
    assert (work.message or "").startswith("rule 'notes': attribute 'note' holds 4,097 characters")
