from __future__ import annotations

import copy
import json
import math
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.reports import graded_report, promoting_comparison

from aieval.report import comparison_schema, render_json, report_schema


def _schema_for(doc: dict[str, Any]) -> dict[str, Any]:
    return report_schema() if doc["kind"] == "report" else comparison_schema()


@pytest.mark.parametrize(
    "schema",
    [pytest.param(report_schema, id="report"), pytest.param(comparison_schema, id="comparison")],
)
def test_schemas_are_valid_draft_2020_12(schema: Any) -> None:
    published = schema()
    assert published["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(published)


def test_round_trip_and_validates(document: dict[str, Any]) -> None:
    text = render_json(document)
    assert json.loads(text) == document
    jsonschema.Draft202012Validator(_schema_for(document)).validate(json.loads(text))


def _drop(doc: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    broken = copy.deepcopy(doc)
    target = broken
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return broken


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    broken = copy.deepcopy(doc)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return broken


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(_drop(graded_report(), ("pass_rate",)), id="missing-pass-rate"),
        pytest.param(_set(graded_report(), ("kind",), "comparison"), id="wrong-kind"),
        pytest.param(_set(graded_report(), ("gates", 0, "rate"), 1.5), id="rate-above-1"),
        pytest.param(
            _set(graded_report(), ("criteria", 0, "histogram", "counts"), [1, 2]),
            id="short-histogram",
        ),
        pytest.param(
            _set(graded_report(), ("failure_reasons", 0, "kind"), "vibes"), id="unknown-reason-kind"
        ),
        pytest.param(_drop(graded_report(), ("run", "id")), id="run-without-id"),
        pytest.param(_set(graded_report(), ("grades",), {"A": 1}), id="grades-missing-letters"),
    ],
)
def test_report_schema_rejects_broken_documents(broken: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, report_schema(), cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(_drop(promoting_comparison(), ("decision",)), id="missing-decision"),
        pytest.param(
            _set(promoting_comparison(), ("decision", "promote"), "yes"), id="promote-not-bool"
        ),
        pytest.param(_drop(promoting_comparison(), ("regressions",)), id="missing-regressions"),
        pytest.param(
            _set(promoting_comparison(), ("tie_break", "winner"), "both"), id="bad-winner"
        ),
        pytest.param(
            _set(promoting_comparison(), ("only_baseline",), ["x"] * 51), id="too-many-unpaired-ids"
        ),
    ],
)
def test_comparison_schema_rejects_broken_documents(broken: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, comparison_schema(), cls=jsonschema.Draft202012Validator)


def test_schema_accepts_added_keys() -> None:
    doc = graded_report()
    doc["something_new"] = {"x": 1}
    jsonschema.validate(doc, report_schema(), cls=jsonschema.Draft202012Validator)


def test_each_call_returns_a_fresh_schema() -> None:
    first = report_schema()
    first["title"] = "changed"
    assert report_schema()["title"] != "changed"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(deadline=None)  # timing varies on a loaded CI machine; the property does not
@given(payload=st.dictionaries(st.text(), _json_values, max_size=5))
def test_output_is_strict_json_for_any_numbers(payload: dict[str, Any]) -> None:
    doc = {**payload, "kind": "report"}
    parsed = json.loads(render_json(doc), parse_constant=lambda c: pytest.fail(f"emitted {c}"))
    assert parsed["kind"] == "report"

    def finite(value: Any) -> bool:
        if isinstance(value, float):
            return math.isfinite(value)
        if isinstance(value, dict):
            return all(finite(v) for v in value.values())
        if isinstance(value, list):
            return all(finite(v) for v in value)
        return True

    assert finite(parsed)


def test_report_schema_takes_token_totals_known_or_unknown() -> None:
    from tests.report.golden.fixture import golden_path

    golden = json.loads(golden_path().read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(report_schema())
    doc = graded_report()
    validator.validate(doc)  # every part known
    blocks = [d["tokens"] for key, d in golden.items() if key.startswith("report:")]
    for tokens in blocks:
        validator.validate(doc | {"tokens": tokens})
    unknown = blocks[0]
    assert unknown["total"] is None and unknown["unreported_calls"] > 0
    assert unknown["judges"]["total"] is not None  # every judge call reported
    # a partial sum dressed as the total, or unknown without its counts, is refused
    for broken in (
        unknown | {"input": 1, "output": 1, "total": 2},
        {k: v for k, v in unknown.items() if k != "at_least"},
        unknown | {"unreported_calls": 0},
        unknown | {"target": unknown["target"] | {"total": 5}},
    ):
        assert not validator.is_valid(doc | {"tokens": broken})
