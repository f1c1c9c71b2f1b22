"""The review contract: a judge's key is stable and order-free, a label is checked on creation."""

from __future__ import annotations

import math

import pytest

from aieval.core import JudgeKey, ReviewLabel
from aieval.errors import ConfigError


def test_a_judge_key_ignores_the_order_of_its_identity_and_changes_with_any_value() -> None:
    a = JudgeKey.of("faithfulness", {"judge_model": "gpt-4o", "rubric_sha256": "ab"})
    b = JudgeKey.of("faithfulness", {"rubric_sha256": "ab", "judge_model": "gpt-4o"})
    c = JudgeKey.of("faithfulness", {"rubric_sha256": "ac", "judge_model": "gpt-4o"})
    assert a == b and a.digest == b.digest and len(a.digest) == 16
    assert c.digest != a.digest
    assert a.label() == "faithfulness@gpt-4o"
    assert JudgeKey.of("exact").label() == "exact"


@pytest.mark.parametrize("score", [math.nan, -0.1, 1.5])
def test_a_label_with_a_score_off_the_scale_is_refused_naming_sample_and_reviewer(
    score: float,
) -> None:
    with pytest.raises(ConfigError, match=r"'s1'.*'ann'"):
        ReviewLabel(judge="j", run_id="r", sample_id="s1", reviewer="ann", score=score)


def test_a_label_needs_a_value_and_a_reviewer() -> None:
    with pytest.raises(ConfigError, match="neither"):
        ReviewLabel(judge="j", run_id="r", sample_id="s1", reviewer="ann")
    with pytest.raises(ConfigError, match="no reviewer"):
        ReviewLabel(judge="j", run_id="r", sample_id="s1", reviewer="", passed=True)
    assert ReviewLabel(judge="j", run_id="r", sample_id="s", reviewer="a", score=0.7).positive()
    assert not ReviewLabel(
        judge="j", run_id="r", sample_id="s", reviewer="a", passed=False
    ).positive()
