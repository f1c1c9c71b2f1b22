"""A pydantic error as one line naming each bad field: run specs and promotion policies."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from aieval._keys import field_problems
from aieval.errors import ConfigError
from aieval.report import PromotionPolicy
from aieval.runner import RunSpec


class _Limits(BaseModel):
    low: int
    high: int


def test_field_problems_names_every_field_and_the_top_as_told() -> None:
    def problems(data: Any, **top: str) -> str:
        with pytest.raises(ValidationError) as caught:
            _Limits.model_validate(data)
        return field_problems(caught.value, **top)

    assert problems({"low": "x"}) == (
        "low: Input should be a valid integer, unable to parse string as an integer; "
        "high: Field required"
    )
    assert problems([1]).startswith("(top): ")
    assert problems([1], top="(top level)").startswith("(top level): ")


def test_a_policy_names_its_source_and_every_bad_field() -> None:
    with pytest.raises(ConfigError) as caught:
        PromotionPolicy.from_mapping(
            {"coverage_tolerance": 2, "judge_parse_failure_limit": -1}, source="policy.yaml"
        )
    text = str(caught.value)
    assert text.startswith("policy.yaml: invalid promotion policy: coverage_tolerance: ")
    assert "; judge_parse_failure_limit: " in text


def test_a_run_spec_names_its_source_nested_fields_and_the_top() -> None:
    with pytest.raises(ConfigError, match=r"^s: .*execution\.concurrency: Input should be"):
        RunSpec.parse({"name": "n", "dataset": [], "concurrency": 0}, source="s")
    with pytest.raises(ConfigError, match=r"^s: \(top\): Input should be a valid dictionary"):
        RunSpec.parse([1], source="s")  # type: ignore[arg-type]
