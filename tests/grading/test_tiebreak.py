import pytest

from aieval.grading import (
    NEAR_EQUAL,
    REQUIRED_GATES,
    CriterionScore,
    RunStanding,
    grade,
    tie_break,
)


@pytest.mark.parametrize(
    ("a", "b", "winner", "rule"),
    [
        pytest.param(RunStanding(82.0), RunStanding(80.5), "a", "weighted_score", id="clear-lead"),
        pytest.param(
            RunStanding(80.0, gate_failures=0),
            RunStanding(80.9, gate_failures=1),
            "a",
            "gate_failures",
            id="1-fewer-gate-failures",
        ),
        pytest.param(
            RunStanding(80.0, correctness=0.9),
            RunStanding(80.9, correctness=0.8),
            "a",
            "correctness",
            id="2-correctness",
        ),
        pytest.param(
            RunStanding(80.9, correctness=0.9, safety=0.8),
            RunStanding(80.0, correctness=0.9, safety=0.95),
            "b",
            "safety",
            id="3-safety",
        ),
        pytest.param(
            RunStanding(80.0, p95_latency=4.0),
            RunStanding(80.5, p95_latency=6.0),
            "a",
            "p95_latency",
            id="4-latency",
        ),
        pytest.param(
            RunStanding(80.5, p95_latency=4.0, cost=0.3),
            RunStanding(80.0, p95_latency=4.0, cost=0.2),
            "b",
            "cost",
            id="4-cost",
        ),
        pytest.param(
            RunStanding(80.5, correctness=None),
            RunStanding(80.0, correctness=0.1),
            "a",
            "weighted_score",
            id="missing-values-skip-rule",
        ),
        pytest.param(RunStanding(80.0), RunStanding(80.0), None, "tie", id="dead-heat"),
    ],
)
def test_tie_breakers_in_spec_order(
    a: RunStanding, b: RunStanding, winner: str | None, rule: str
) -> None:
    result = tie_break(a, b)
    assert (result.winner, result.rule) == (winner, rule)
    mirrored = tie_break(b, a)
    flip = {"a": "b", "b": "a", None: None}
    assert (mirrored.winner, mirrored.rule) == (flip[winner], rule)


def test_near_equal_boundary() -> None:
    at = tie_break(
        RunStanding(80.0 + NEAR_EQUAL, correctness=0.1), RunStanding(80.0, correctness=0.9)
    )
    assert at.rule == "weighted_score" and at.winner == "a"


def test_reason_states_the_numbers_readably() -> None:
    result = tie_break(RunStanding(52.943417), RunStanding(61.744001))
    assert result.reason == "run b ranks first on weighted_score (52.94 vs 61.74)"
    cheap = tie_break(RunStanding(80.0, cost=0.0012345), RunStanding(80.2, cost=0.0031))
    assert cheap.rule == "cost" and "(0.001234 vs 0.0031)" in cheap.reason


def test_standing_from_grade() -> None:
    g = grade(
        hard_gates={**dict.fromkeys(REQUIRED_GATES, True), "overall_status_success": False},
        criteria=[
            CriterionScore("correctness", 0.9),
            CriterionScore("guard", 0.6, category="safety"),
            CriterionScore("schema", 1.0, category="validation"),
            CriterionScore("style", 0.5),
        ],
    )
    s = RunStanding.from_grade(g, p95_latency=3.0, cost=0.1)
    assert s.weighted_score == g.weighted_score and s.gate_failures == 1
    assert s.correctness == 0.9 and s.safety == pytest.approx((0.6 + 1.0) / 2)
    assert (s.p95_latency, s.cost) == (3.0, 0.1)
