"""The promotion policy's judge settings: a comparison that requires certified judges is
inconclusive while a judge lacks agreeing labels, and decides normally once they are imported;
every comparison path and every format agrees; ``judge_correction`` decides a judge's pass
rate on corrected rates."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from tests.support.judged import write_judged_run

import aieval.report._compare as compare_module
from aieval._records import SampleRecord, ScoreRecord
from aieval.core import JudgeKey, ReviewLabel
from aieval.core._threshold import threshold_verdict
from aieval.errors import ConfigError
from aieval.report import (
    ExampleNumbers,
    PromotionPolicy,
    compare_runs,
    decide_promotion,
    render_github,
    render_html,
    render_markdown,
    render_text,
)
from aieval.report._policy_correction import corrected_difference
from aieval.store import Store

N = 120
OPTIONS = {"judge_model": "m1", "prompt_version": "v1", "rubric_sha256": "ab" * 8}
CONFIG = {"scorers": [{"name": "faith", "options": OPTIONS}], "pass_threshold": 0.5}
KEY = JudgeKey.of("faith", OPTIONS)
# identical runs of 120 examples are non-inferior at a 5-point margin
PLAIN = PromotionPolicy(noninferiority_margin=5.0)
POLICY = PromotionPolicy(require_certified_judges=True, noninferiority_margin=5.0)

# where the reviewer of the first 60 samples disagrees with the judge
DISAGREE = set(range(1, 56, 5))


def _judge_passes(i: int) -> bool:
    return i % 2 == 0


def _write(store: Store, run_id: str, passes: Callable[[int], bool] = _judge_passes) -> None:
    write_judged_run(store, run_id, CONFIG, N, passes)


def _labels(run_id: str, indices: range, disagree: set[int], at: float) -> list[ReviewLabel]:
    """One reviewer's label per sample: the judge's verdict, flipped on ``disagree``."""
    return [
        ReviewLabel(
            KEY.digest,
            run_id,
            f"ex{i}",
            "ana",
            passed=_judge_passes(i) != (i in disagree),
            labelled_at=at,
        )
        for i in indices
    ]


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        _write(opened, "base")
        _write(opened, "cand")
        yield opened


def _compare(store: Store, policy: PromotionPolicy = POLICY) -> dict[str, Any]:
    data = compare_runs(store, "base", "cand", policy=policy, n_resamples=200).to_dict()
    loaded: dict[str, Any] = json.loads(json.dumps(data, sort_keys=True))
    return loaded


def _rule(data: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in data["decision"]["rules"] if r["rule"] == "certified_judges")


def test_a_judge_without_labels_holds_the_comparison_back(store: Store) -> None:
    assert _compare(store, PLAIN)["decision"]["outcome"] == "promote"
    data = _compare(store)
    assert data["decision"]["outcome"] == "inconclusive"
    rule = _rule(data)
    assert rule["outcome"] == "inconclusive"
    assert "faith@m1 has no review labels" in rule["reason"]
    assert KEY.digest in rule["reason"] and "at least 100 items" in rule["reason"]
    assert rule["details"]["judges"][0]["labels"] == 0


def test_a_judge_at_bound_045_is_inconclusive_until_agreeing_labels_come(store: Store) -> None:
    # 60 items, 11 of them disagreeing: kappa 0.63 with a lower bound of 0.43
    store.add_review_labels(_labels("base", range(60), DISAGREE, at=10.0))
    data = _compare(store)
    rule = _rule(data)
    judge = rule["details"]["judges"][0]
    assert data["decision"]["outcome"] == "inconclusive"
    assert judge["status"] == "uncertified" and judge["n"] == 60
    assert judge["kappa_low"] == pytest.approx(0.45, abs=0.03)
    assert judge["labels_needed"] > 0
    reason = rule["reason"]
    assert reason.startswith("faith@m1 is uncertified")
    assert f"(lower bound {judge['kappa_low']:.3f}) on 60 item(s)" in reason
    assert f"about {judge['labels_needed']} more labelled item(s)" in reason
    # the same reason in every format the decision's reasons appear in
    comparison = compare_runs(store, "base", "cand", policy=POLICY, n_resamples=200)
    for render in (render_text, render_markdown, render_github, render_html):
        # (GitHub's has a zero-width space after each @, so that no one is notified)
        shown = render(comparison.to_dict()).replace("\u200b", "")
        assert "faith@m1 is uncertified" in shown, render.__name__
        assert f"{judge['kappa_low']:.3f}" in shown, render.__name__
    # agreeing labels on the candidate's samples, imported as a file would be
    store.add_review_labels(_labels("cand", range(N), set(), at=20.0))
    store.add_review_labels(_labels("base", range(60, N), set(), at=20.0))
    data = _compare(store)
    rule = _rule(data)
    assert rule["outcome"] == "pass" and rule["reason"] == "every judge is certified: faith@m1"
    assert rule["details"]["judges"][0]["n"] == 2 * N
    assert data["decision"]["outcome"] == "promote"


def test_every_comparison_path_gives_the_same_decision(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add_review_labels(_labels("base", range(60), DISAGREE, at=10.0))
    # closed forms from 30 paired examples on, so the sums' path takes these runs
    policy = POLICY.model_copy(update={"judge_correction": True}).with_intervals("auto", 30)
    taken: list[bool] = []
    real = compare_module.kept_parts

    def spy(*args: Any, **kwargs: Any) -> Any:
        parts = real(*args, **kwargs)
        taken.append(parts is not None)
        return parts

    with monkeypatch.context() as patch:
        patch.setattr(compare_module, "kept_parts", spy)
        fast = _compare(store, policy)
    assert taken == [True]  # the kept columns' path, then each other one in turn
    with monkeypatch.context() as patch:
        patch.setattr(compare_module, "kept_parts", lambda *a, **k: None)
        sums = _compare(store, policy)
        rows = (store.get_run("base"), store.get_run("cand"))
        assert (
            compare_module.sums_parts(store, *rows, policy, confidence=0.95, max_examples=200)
            is not None
        )
        patch.setattr(compare_module, "sums_parts", lambda *a, **k: None)
        columns = _compare(store, policy)
        patch.setattr(store, "plain_run", lambda run_id: False)
        records = _compare(store, policy)
    for other in (sums, columns, records):
        assert other["decision"] == fast["decision"]
    assert fast["decision"]["outcome"] == "inconclusive"
    assert [r["rule"] for r in fast["decision"]["rules"][-2:]] == [
        "certified_judges",
        "judge_corrected_pass_rate",
    ]


def test_a_drifting_judge_holds_the_comparison_back(store: Store) -> None:
    store.add_review_labels(_labels("base", range(N), set(), at=10.0))
    store.record_certificate(
        judge=KEY.digest, label=KEY.label(), n=N, kappa=1.0, bound=0.95, floor=0.6,
        certified_at=15.0,
    )  # fmt: skip
    assert _compare(store)["decision"]["outcome"] == "promote"
    store.add_review_labels(
        _labels("cand", range(N), set(range(0, N, 3)) | set(range(1, N, 4)), at=20.0)
    )
    data = _compare(store)
    rule = _rule(data)
    assert data["decision"]["outcome"] == "inconclusive"
    assert rule["reason"].startswith("faith@m1 is drifting")
    assert rule["details"]["judges"][0]["status"] == "drifting"


def test_labels_in_a_baseline_store_from_elsewhere_certify_nothing(
    store: Store, tmp_path: Any
) -> None:
    with Store(tmp_path / "other.db") as other:
        _write(other, "base")
        other.add_review_labels(_labels("base", range(N), set(), at=10.0))
        data = compare_runs(
            store, "base", "cand", policy=POLICY, baseline_store=other, n_resamples=200
        ).to_dict()
    assert data["decision"]["outcome"] == "inconclusive"
    assert "has no review labels" in _rule(data)["reason"]


def test_runs_without_a_judge_pass_the_rule(store_location: str) -> None:
    with Store(store_location) as store:
        for run_id in ("b", "c"):
            store.create_run(name="plain", config={}, run_id=run_id)
            samples = [
                SampleRecord(id=f"e{i}", index=i, input=i, scores={"f1": ScoreRecord(1.0)})
                for i in range(N)
            ]
            for sample in samples:
                sample.verdict = threshold_verdict(sample, 0.5)
                sample.passed = sample.verdict.passed
            store.record_samples(run_id, samples)
            store.finish_run(run_id, status="completed", metrics={"samples": N})
        data = compare_runs(store, "b", "c", policy=POLICY, n_resamples=200).to_dict()
    rule = _rule(data)
    assert rule["outcome"] == "pass" and "nothing to certify" in rule["reason"]


CORRECTING = PromotionPolicy(judge_correction=True, noninferiority_margin=5.0)


def _corrected(data: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in data["decision"]["rules"] if r["rule"] == "judge_corrected_pass_rate")


def test_corrected_rates_are_shown_and_equal_runs_pass(store: Store) -> None:
    assert "judge_corrected_pass_rate" not in str(_compare(store, PLAIN)["decision"]["rules"])
    held = _corrected(_compare(store, CORRECTING))
    assert held["outcome"] == "inconclusive" and "faith@m1: no review labels" in held["reason"]
    store.add_review_labels(_labels("base", range(N), DISAGREE, at=10.0))
    data = _compare(store, CORRECTING)
    rule = _corrected(data)
    judge = rule["details"]["judges"][0]
    assert rule["outcome"] == "pass" and judge["difference"] == 0.0
    for side in ("baseline", "candidate"):
        assert judge[side]["raw"] == 0.5
        assert judge[side]["low"] < judge[side]["corrected"] < judge[side]["high"]
    assert "faith@m1: corrected pass rate" in rule["reason"] and "raw 50.0%" in rule["reason"]


def test_a_drop_the_judge_understates_blocks_on_corrected_rates(store_location: str) -> None:
    with Store(store_location) as store:
        _write(store, "base")
        # the candidate's judge passes 12 fewer of the 120 samples: 10 points
        _write(store, "cand", lambda i: _judge_passes(i) and i % 10 != 0)
        store.add_review_labels(_labels("base", range(N), DISAGREE, at=10.0))
        data = _compare(store, CORRECTING)
    rule = _corrected(data)
    judge = rule["details"]["judges"][0]
    # the 11 disagreements: 5 human-fail items the judge passed, 6 human-pass it failed
    tpr, tnr = 55 / 61, 54 / 59
    expected, _ = corrected_difference(
        [-1] * 12 + [0] * 108, true_pos=55, positives=61, true_neg=54, negatives=59
    )
    assert judge["difference"] == pytest.approx(-0.1 / (tpr + tnr - 1))
    assert judge["difference"] == pytest.approx(expected)
    assert judge["high"] < -0.05 and rule["outcome"] == "fail"
    assert data["decision"]["outcome"] == "block"
    assert "judge_corrected_pass_rate" in data["decision"]["summary"]


def test_the_policy_json_shows_the_judge_settings_only_when_set() -> None:
    default = PromotionPolicy().to_dict()
    assert not {k for k in default if k.startswith(("judge_k", "judge_m", "judge_c", "require"))}
    data = PromotionPolicy(
        require_certified_judges=True, judge_kappa_floor=0.7, judge_min_labels=50
    ).to_dict()
    assert data["require_certified_judges"] is True
    assert (data["judge_kappa_floor"], data["judge_min_labels"]) == (0.7, 50)
    assert "judge_correction" not in data
    assert PromotionPolicy.from_mapping(data) == PromotionPolicy(
        require_certified_judges=True, judge_kappa_floor=0.7, judge_min_labels=50
    )


def test_the_policy_file_reads_the_judge_settings(tmp_path: Any) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("require_certified_judges: true\njudge_kappa_floor: 0.5\n", encoding="utf-8")
    policy = PromotionPolicy.from_file(path)
    assert policy.require_certified_judges and policy.judge_kappa_floor == 0.5
    path.write_text("judge_kappa_floor: 1.5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="judge_kappa_floor"):
        PromotionPolicy.from_file(path)


def test_the_pure_decision_refuses_judge_settings_it_cannot_check() -> None:
    numbers = [ExampleNumbers(id=str(i), passed=True, weighted_score=80.0) for i in range(60)]
    assert decide_promotion(numbers, numbers, PLAIN).outcome == "promote"
    for policy in (POLICY, PromotionPolicy(judge_correction=True)):
        with pytest.raises(ConfigError, match="compare_runs"):
            decide_promotion(numbers, numbers, policy)
