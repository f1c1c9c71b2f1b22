import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval.errors import ConfigError, FormulaError
from aieval.grading import adjusted_norm, clamp, formulas, get_formula, normalize, register_formula

SPEC_FORMULA_IDS = [
    "binary",
    "likert_1_5",
    "likert_neg2_2",
    "zero_one",
    "pairwise",
    "lower_is_better",
    "ndcg",
    "map",
    "mrr",
    "recall_at_k",
    "precision_at_k",
    "fail_to_pass",
    "pass_to_pass",
]


def test_every_spec_formula_is_registered() -> None:
    assert set(SPEC_FORMULA_IDS) <= set(formulas())
    assert formulas() == sorted(formulas())


def test_spec_latency_example() -> None:
    # Spec 4.1: SLO good=8 s, bad=30 s, raw=12 s gives (30-12)/(30-8) = 0.818.
    value = normalize("lower_is_better", 12.0, slo_good=8, slo_bad=30)
    assert value == pytest.approx((30 - 12) / (30 - 8))
    assert round(value, 3) == 0.818


@pytest.mark.parametrize(
    ("formula_id", "raw", "params", "want"),
    [
        pytest.param("binary", 1, {}, 1.0, id="binary-1"),
        pytest.param("binary", 0, {}, 0.0, id="binary-0"),
        pytest.param("binary", True, {}, 1.0, id="binary-bool"),
        pytest.param("likert_1_5", 1, {}, (1 - 1) / 4, id="likert15-low"),
        pytest.param("likert_1_5", 3, {}, (3 - 1) / 4, id="likert15-mid"),
        pytest.param("likert_1_5", 4.5, {}, (4.5 - 1) / 4, id="likert15-fraction"),
        pytest.param("likert_neg2_2", -2, {}, (-2 + 2) / 4, id="likert22-low"),
        pytest.param("likert_neg2_2", 1, {}, (1 + 2) / 4, id="likert22-one"),
        pytest.param("zero_one", 0.7, {}, 0.7, id="zero-one"),
        pytest.param("zero_one", 1.5, {}, clamp(1.5), id="zero-one-clamps-high"),
        pytest.param("zero_one", -0.5, {}, clamp(-0.5), id="zero-one-clamps-low"),
        pytest.param("ndcg", 1.2, {}, clamp(1.2), id="ndcg-clamps"),
        pytest.param("mrr", 0.25, {}, 0.25, id="mrr"),
        pytest.param("lower_is_better", 5, {"slo_good": 8, "slo_bad": 30}, 1.0, id="slo-better"),
        pytest.param("lower_is_better", 45, {"slo_good": 8, "slo_bad": 30}, 0.0, id="slo-worse"),
        pytest.param("linear", 7, {"low": 0, "high": 10}, 7 / 10, id="linear"),
        pytest.param("fail_to_pass", {"passed": 3, "total": 4}, {}, 3 / 4, id="f2p-mapping"),
        pytest.param("pass_to_pass", None, {"passed": 19, "total": 20}, 19 / 20, id="p2p-kw"),
        pytest.param("pass_to_pass", 0.95, {}, 0.95, id="p2p-ratio"),
    ],
)
def test_formula_values(formula_id: str, raw: Any, params: dict[str, Any], want: float) -> None:
    assert normalize(formula_id, raw, **params) == pytest.approx(want)


def test_pairwise_counts_ties_half() -> None:
    wins, losses, ties = 3, 1, 1
    want = (wins + 0.5 * ties) / (wins + losses + ties)
    assert normalize("pairwise", wins=wins, losses=losses, ties=ties) == pytest.approx(want)
    assert normalize("pairwise", {"wins": 3, "losses": 1, "ties": 1}) == pytest.approx(want)


def test_pairwise_inconsistent_counts_as_tie() -> None:
    as_ties = normalize("pairwise", wins=2, losses=1, ties=2)
    assert normalize("pairwise", wins=2, losses=1, ties=1, inconsistent=1) == as_ties


def test_pairwise_accepts_win_rate() -> None:
    assert normalize("pairwise", 0.6) == 0.6


@pytest.mark.parametrize(
    ("formula_id", "raw", "params", "fragment"),
    [
        pytest.param("likert_1_5", float("nan"), {}, "nan", id="nan"),
        pytest.param("zero_one", float("inf"), {}, "inf", id="inf"),
        pytest.param("likert_1_5", 6, {}, "outside the scale 1..5", id="likert-high"),
        pytest.param("likert_1_5", 0, {}, "outside the scale 1..5", id="likert-low"),
        pytest.param("likert_neg2_2", 3, {}, "outside the scale -2..2", id="neg2-high"),
        pytest.param("binary", 0.5, {}, "not 0 or 1", id="binary-half"),
        pytest.param("likert_1_5", "4", {}, "must be a number", id="string"),
        pytest.param("zero_one", None, {}, "must be a number", id="none"),
        pytest.param("zero_one", True, {}, "must be a number", id="bool"),
        pytest.param(
            "pairwise",
            None,
            {"wins": 0, "losses": 0, "ties": 0},
            "zero denominator",
            id="pairwise-empty",
        ),
        pytest.param("pairwise", None, {"wins": -1}, "must be >= 0", id="pairwise-negative"),
        pytest.param("pairwise", None, {"draws": 1}, "unknown count", id="pairwise-unknown"),
        pytest.param("pairwise", 1.5, {}, "outside the scale", id="pairwise-rate-high"),
        pytest.param(
            "lower_is_better", 10, {"slo_good": 8, "slo_bad": 8}, "zero denominator", id="slo-equal"
        ),
        pytest.param(
            "lower_is_better",
            10,
            {"slo_good": 30, "slo_bad": 8},
            "must be below",
            id="slo-inverted",
        ),
        pytest.param("lower_is_better", 10, {}, "slo_good and slo_bad", id="slo-missing"),
        pytest.param(
            "fail_to_pass", {"passed": 0, "total": 0}, {}, "zero denominator", id="f2p-empty"
        ),
        pytest.param(
            "pass_to_pass", {"passed": 5, "total": 4}, {}, "exceeds total", id="p2p-overflow"
        ),
        pytest.param("linear", 5, {}, "low and high", id="linear-missing"),
        pytest.param("linear", 11, {"low": 0, "high": 10}, "outside the scale", id="linear-out"),
    ],
)
def test_bad_values_raise_formula_error(
    formula_id: str, raw: Any, params: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(FormulaError) as info:
        normalize(formula_id, raw, **params)
    assert formula_id in str(info.value)
    assert fragment in str(info.value)


def test_unknown_formula_lists_known_ids() -> None:
    with pytest.raises(ConfigError, match="likert_1_5"):
        normalize("likert_1_10", 3)


def test_adjusted_norm_spec_formula() -> None:
    norm, n = 0.9, 5
    assert adjusted_norm(norm, n=n) == pytest.approx((n * norm + 20 * 0.5) / (n + 20))
    assert adjusted_norm(norm, n=n, prior=0.2, k=5) == pytest.approx((n * norm + 5 * 0.2) / 10)


@pytest.mark.parametrize(
    ("norm", "n", "kwargs"),
    [
        pytest.param(1.2, 5, {}, id="norm-out"),
        pytest.param(float("nan"), 5, {}, id="norm-nan"),
        pytest.param(0.5, -1, {}, id="n-negative"),
        pytest.param(0.5, 0, {"k": 0}, id="zero-denominator"),
        pytest.param(0.5, 3, {"prior": 2}, id="prior-out"),
    ],
)
def test_adjusted_norm_rejects_bad_input(norm: float, n: int, kwargs: dict[str, Any]) -> None:
    with pytest.raises(FormulaError, match="adjusted_norm"):
        adjusted_norm(norm, n, **kwargs)


def test_register_formula_decorator_and_duplicates() -> None:
    @register_formula("test_percent", description="percent to 0..1", scale=(0.0, 100.0))
    def percent(raw: float, **_: Any) -> float:
        return raw / 100

    assert "test_percent" in formulas()
    assert normalize("test_percent", 42) == pytest.approx(0.42)
    assert get_formula("test_percent").scale == (0.0, 100.0)
    with pytest.raises(ConfigError, match="already registered"):
        register_formula("test_percent", percent)
    register_formula("test_percent", lambda raw, **_: raw / 50, replace=True)
    assert normalize("test_percent", 25) == pytest.approx(0.5)


def test_a_user_formula_cannot_escape_zero_one() -> None:
    register_formula("test_broken", lambda raw, **_: raw * 2, replace=True)
    with pytest.raises(FormulaError, match="test_broken"):
        normalize("test_broken", 0.9)
    register_formula("test_nan", lambda raw, **_: math.nan, replace=True)
    with pytest.raises(FormulaError, match="test_nan"):
        normalize("test_nan", 0.1)


# -- properties: every normalized value is in 0..1 ------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)
count = st.integers(min_value=0, max_value=10_000)


@given(raw=st.floats(min_value=1, max_value=5))
def test_likert_1_5_in_unit_interval(raw: float) -> None:
    assert 0.0 <= normalize("likert_1_5", raw) <= 1.0


@given(raw=st.floats(min_value=-2, max_value=2))
def test_likert_neg2_2_in_unit_interval(raw: float) -> None:
    assert 0.0 <= normalize("likert_neg2_2", raw) <= 1.0


@given(raw=finite, fid=st.sampled_from(["zero_one", "ndcg", "map", "mrr", "recall_at_k"]))
def test_clamped_formulas_in_unit_interval(raw: float, fid: str) -> None:
    assert 0.0 <= normalize(fid, raw) <= 1.0


@given(raw=finite, good=finite, width=st.floats(min_value=1e-3, max_value=1e6))
def test_lower_is_better_in_unit_interval(raw: float, good: float, width: float) -> None:
    value = normalize("lower_is_better", raw, slo_good=good, slo_bad=good + width)
    assert 0.0 <= value <= 1.0


@given(raw=finite, a=finite, b=finite)
def test_lower_is_better_is_monotone(raw: float, a: float, b: float) -> None:
    worse = raw + abs(a - b)
    kw = {"slo_good": 8, "slo_bad": 30}
    assert normalize("lower_is_better", worse, **kw) <= normalize("lower_is_better", raw, **kw)


@given(wins=count, losses=count, ties=count, inconsistent=count)
def test_pairwise_in_unit_interval(wins: int, losses: int, ties: int, inconsistent: int) -> None:
    if wins + losses + ties + inconsistent == 0:
        with pytest.raises(FormulaError):
            normalize("pairwise", wins=wins, losses=losses, ties=ties, inconsistent=inconsistent)
        return
    value = normalize("pairwise", wins=wins, losses=losses, ties=ties, inconsistent=inconsistent)
    assert 0.0 <= value <= 1.0


@given(data=st.data(), total=st.integers(min_value=1, max_value=10_000))
def test_test_ratios_in_unit_interval(data: st.DataObject, total: int) -> None:
    passed = data.draw(st.integers(min_value=0, max_value=total))
    for fid in ("fail_to_pass", "pass_to_pass"):
        assert normalize(fid, {"passed": passed, "total": total}) == pytest.approx(passed / total)


@given(norm=st.floats(min_value=0, max_value=1), n=st.integers(min_value=0, max_value=10**6))
def test_adjusted_norm_between_prior_and_norm(norm: float, n: int) -> None:
    value = adjusted_norm(norm, n)
    low, high = sorted((norm, 0.5))
    assert low - 1e-12 <= value <= high + 1e-12


@given(raw=st.one_of(st.text(), st.none(), st.lists(st.integers()), finite))
def test_normalize_never_returns_out_of_range(raw: Any) -> None:
    for fid in SPEC_FORMULA_IDS:
        params = {"slo_good": 1, "slo_bad": 2} if fid == "lower_is_better" else {}
        try:
            value = normalize(fid, raw, **params)
        except FormulaError:
            continue
        assert 0.0 <= value <= 1.0
