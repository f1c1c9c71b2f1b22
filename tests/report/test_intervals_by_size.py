"""Intervals by size: below ``bootstrap_max_n`` values the seeded bootstrap, exactly as before;
at it, closed forms (Student's t, Wilson, the paired t interval and test); ``bootstrap``
forces the bootstrap at any size. A small ``bootstrap_max_n`` keeps these tests cheap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats as sps
from tests.support.reports import decision_rule, store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.errors import ConfigError
from aieval.report import (
    IntervalPolicy,
    PromotionPolicy,
    build_report,
    compare_runs,
    render_github,
    render_html,
    render_markdown,
    render_text,
)
from aieval.stats import noninferiority_test, wilson_interval
from aieval.store import Store

N = 40


def _run(store: Store, shift: float = 0.0, seed: int = 0) -> tuple[str, np.ndarray, np.ndarray]:
    """A plain run of N samples: a continuous scorer ``f1`` and a 0/1 scorer ``exact``."""
    rng = np.random.default_rng(seed)
    f1 = np.round(np.clip(rng.beta(4, 2, size=N) + shift, 0.0, 1.0), 3)
    exact = (rng.random(N) < 0.6 + shift).astype(float)
    samples = [
        SampleRecord(
            id=f"e{i}", index=i, input=f"q{i}", prediction="p", expected="gold",
            passed=bool(exact[i]),
            scores={"f1": ScoreRecord(float(f1[i])), "exact": ScoreRecord(float(exact[i]))},
        )
        for i in range(N)
    ]  # fmt: skip
    return store_run(store, samples), f1, exact


def _strip_methods(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_methods(v) for k, v in value.items() if k != "method"}
    if isinstance(value, list):
        return [_strip_methods(v) for v in value]
    return value


def _columns(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in doc["criteria"]}


def test_one_below_the_limit_is_todays_bootstrap_to_the_last_digit(store: Store) -> None:
    run_id, _, _ = _run(store)
    default = build_report(store, run_id).to_dict()
    below = build_report(store, run_id, bootstrap_max_n=N + 1).to_dict()
    assert below == default
    assert below["weighted_score"]["method"] == "percentile bootstrap"
    assert {c["method"] for c in below["criteria"]} == {"percentile bootstrap"}
    assert below["pass_rate"]["method"] == "Wilson score"  # Wilson at any size


@pytest.mark.parametrize("record_path", [False, True], ids=["columns", "records"])
def test_at_the_limit_a_mean_is_student_t_and_a_rate_wilson(
    store: Store, monkeypatch: pytest.MonkeyPatch, record_path: bool
) -> None:
    run_id, f1, exact = _run(store)
    if record_path:
        monkeypatch.setattr(Store, "plain_run", lambda self, run: False)
    doc = build_report(store, run_id, bootstrap_max_n=N, confidence=0.9).to_dict()
    f1_row, exact_row = _columns(doc)["f1"], _columns(doc)["exact"]
    want = sps.t.interval(0.9, N - 1, loc=f1.mean(), scale=sps.sem(f1))
    assert f1_row["method"] == "Student t"
    assert (f1_row["low"], f1_row["high"]) == pytest.approx(want, rel=1e-12)
    wilson = wilson_interval(int(exact.sum()), N, confidence=0.9)
    assert exact_row["method"] == "Wilson score"
    assert (exact_row["low"], exact_row["high"]) == (wilson.low, wilson.high)
    # the weighted score (mean of both scorers, 0..100) is a mean, not a rate
    weighted = 100 * (f1 + exact) / 2
    ws = doc["weighted_score"]
    assert ws["method"] == "Student t" and ws["n"] == N
    assert (ws["low"], ws["high"]) == pytest.approx(
        sps.t.interval(0.9, N - 1, loc=weighted.mean(), scale=sps.sem(weighted)), rel=1e-9
    )
    # every other number is the bootstrap report's
    boot = build_report(store, run_id, confidence=0.9).to_dict()
    for row in (*doc["criteria"], doc["weighted_score"]):
        row.update(low=None, high=None)
    for row in (*boot["criteria"], boot["weighted_score"]):
        row.update(low=None, high=None)
    assert _strip_methods(doc) == _strip_methods(boot)


def test_forcing_the_bootstrap_keeps_it_at_any_size(store: Store) -> None:
    run_id, _, _ = _run(store)
    forced = build_report(store, run_id, interval_method="bootstrap", bootstrap_max_n=1)
    assert forced.to_dict() == build_report(store, run_id).to_dict()


@pytest.mark.parametrize(
    ("method", "max_n", "problem"),
    [("normal", 10, "interval_method"), ("auto", 0, "bootstrap_max_n"),
     ("auto", 2.5, "bootstrap_max_n"), ("auto", True, "bootstrap_max_n")],
)  # fmt: skip
def test_bad_settings_are_refused_naming_the_setting(
    store: Store, method: Any, max_n: Any, problem: str
) -> None:
    run_id, _, _ = _run(store)
    with pytest.raises(ConfigError, match=problem):
        build_report(store, run_id, interval_method=method, bootstrap_max_n=max_n)
    with pytest.raises(ConfigError, match=problem):
        PromotionPolicy.from_mapping({"interval_method": method, "bootstrap_max_n": max_n})


def test_one_definition_of_the_defaults() -> None:
    policy = PromotionPolicy()
    assert policy.intervals == IntervalPolicy()
    assert (policy.interval_method, policy.bootstrap_max_n) == ("auto", 20_000)


def _pair(store: Store) -> tuple[str, str, np.ndarray, np.ndarray]:
    base, f1_b, _ = _run(store, seed=1)
    cand, f1_c, _ = _run(store, shift=0.02, seed=1)
    return base, cand, f1_b, f1_c


def test_a_comparison_below_the_limit_is_unchanged(store: Store) -> None:
    base, cand, _, _ = _pair(store)
    default = compare_runs(store, base, cand).to_dict()
    below = compare_runs(store, base, cand, bootstrap_max_n=N + 1).to_dict()
    policy = default["decision"].pop("policy")
    assert below["decision"].pop("policy") == {**policy, "bootstrap_max_n": N + 1}
    assert below == default
    assert (
        decision_rule(compare_runs(store, base, cand), "weighted_score_noninferior").details[
            "method"
        ]
        == "studentized bootstrap"
    )


@pytest.mark.parametrize("record_path", [False, True], ids=["columns", "records"])
def test_a_comparison_at_the_limit_is_decided_by_the_paired_t_test(
    store: Store, monkeypatch: pytest.MonkeyPatch, record_path: bool
) -> None:
    base, cand, f1_b, f1_c = _pair(store)
    if record_path:
        monkeypatch.setattr(Store, "plain_run", lambda self, run: False)
    comparison = compare_runs(store, base, cand, bootstrap_max_n=N)
    doc = comparison.to_dict()
    assert doc["decision"]["policy"]["bootstrap_max_n"] == N
    rule = decision_rule(comparison, "weighted_score_noninferior").details
    assert rule["method"] == "paired t-test"
    rows = {m["name"]: m for m in doc["metrics"]}
    assert rows["weighted_score"]["method"] == "paired t-test"
    assert (rows["weighted_score"]["low"], rows["weighted_score"]["high"]) == (
        rule["lower_bound"], rule["upper_bound"],
    )  # fmt: skip
    d = f1_c - f1_b
    f1 = rows["f1"]
    assert f1["method"] == "paired t interval" and f1["one_sided"] is False
    assert (f1["low"], f1["high"]) == pytest.approx(
        sps.t.interval(0.95, N - 1, loc=d.mean(), scale=sps.sem(d)), rel=1e-9
    )
    # a 0/1 metric's delta: Tango's paired-proportion score interval, two-sided
    exact = rows["exact"]
    assert exact["method"] == "paired-proportion score test" and exact["one_sided"] is False
    assert rows["pass_rate"]["method"] == "paired-proportion score test"


def test_the_policy_forces_the_bootstrap_t_and_the_bootstrap(store: Store) -> None:
    base, cand, _, _ = _pair(store)
    explicit = PromotionPolicy(method="bootstrap-t", bootstrap_max_n=1)
    chosen = compare_runs(store, base, cand, policy=explicit)
    assert (
        decision_rule(chosen, "weighted_score_noninferior").details["method"]
        == "studentized bootstrap"
    )
    forced = PromotionPolicy(interval_method="bootstrap", bootstrap_max_n=1)
    doc = compare_runs(store, base, cand, policy=forced).to_dict()
    default = compare_runs(store, base, cand).to_dict()
    assert _strip_policy(doc) == _strip_policy(default)
    # the keyword overrides the policy's setting, and the decision records it
    overridden = compare_runs(store, base, cand, policy=forced, interval_method="auto")
    assert overridden.decision.policy.interval_method == "auto"
    assert decision_rule(overridden, "weighted_score_noninferior").details["method"] == (
        "paired t-test"
    )


def _strip_policy(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "decision": {k: v for k, v in doc["decision"].items() if k != "policy"}}


def test_the_closed_form_tango_row_is_the_two_sided_score_interval(store: Store) -> None:
    base, cand, _, _ = _pair(store)
    doc = compare_runs(store, base, cand, bootstrap_max_n=N).to_dict()
    rows = {m["name"]: m for m in doc["metrics"]}
    b = np.array([s.scores["exact"].value for s in store.iter_samples(base)], dtype=float)
    c = np.array([s.scores["exact"].value for s in store.iter_samples(cand)], dtype=float)
    test = noninferiority_test(c - b, margin=0.0, alpha=0.025, method="proportion")
    assert (rows["exact"]["low"], rows["exact"]["high"]) == (test.lower_bound, test.upper_bound)


@pytest.mark.parametrize(
    "render",
    [lambda d: render_text(d, width=250), render_markdown, render_html],
    ids=["text", "markdown", "html"],
)
def test_every_report_format_names_the_methods(store: Store, render: Any) -> None:
    run_id, _, _ = _run(store)
    closed = _flat(render(build_report(store, run_id, bootstrap_max_n=N)))
    assert "(Wilson score" in closed  # the pass rate (its counts beside the method in text)
    assert "] (Student t)" in closed  # the weighted score
    assert "intervals: Student t (f1); Wilson score (exact)" in closed  # the criteria table
    boot = _flat(render(build_report(store, run_id)))
    assert "] (percentile bootstrap)" in boot
    assert "intervals: percentile bootstrap" in boot


@pytest.mark.parametrize(
    "render",
    [lambda d: render_text(d, width=250), render_markdown, render_html, render_github],
    ids=["text", "markdown", "html", "github"],
)
def test_every_comparison_format_names_the_closed_forms(store: Store, render: Any) -> None:
    base, cand, _, _ = _pair(store)
    text = _flat(render(compare_runs(store, base, cand, bootstrap_max_n=N)))
    if render is render_github:
        assert "paired t-test" in text and "paired t interval" in text
    elif render in (render_markdown, render_html):
        assert "one-sided 95% bounds, paired t-test" in text
        assert "95% CI, paired t interval" in text
    else:  # the terminal's narrow table: short names
        assert "t-test" in text and "paired t interval" in text


def _flat(text: str) -> str:
    return " ".join(text.replace("\\", "").replace("&nbsp;", " ").split())


def test_a_block_from_sums_is_the_block_from_the_array() -> None:
    from aieval.report._intervals import closed_form_block, closed_form_block_from_sums
    from aieval.stats import sample_std

    x = np.random.default_rng(9).uniform(0.0, 1.0, size=25_000)
    from_array = closed_form_block(x.size, float(np.mean(x)), sample_std(x), None, 0.95)
    d = x - x[0]
    from_sums = closed_form_block_from_sums(
        x.size, float(d.sum()), float((d * d).sum()), None, 0.95, shift=float(x[0])
    )
    assert from_sums["method"] == from_array["method"] == "Student t"
    for key in ("mean", "std", "low", "high"):
        assert from_sums[key] == pytest.approx(from_array[key], rel=1e-12), key
    ones = (x > 0.5).astype(float)
    rate = closed_form_block_from_sums(ones.size, ones.sum(), ones.sum(), int(ones.sum()), 0.95)
    assert rate["method"] == "Wilson score"
    assert (rate["low"], rate["high"]) == (
        wilson_interval(int(ones.sum()), ones.size).low,
        wilson_interval(int(ones.sum()), ones.size).high,
    )
