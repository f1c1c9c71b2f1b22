"""Review selection: seeded, mixed by shares, each pick with its reason; queues from real runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from aieval import SampleRecord, ScoreRecord, Store
from aieval.errors import ConfigError, ReviewError
from aieval.judges import Judged, QueueRequest, build_queue, parse_mix, select_items, verdict_values
from aieval.stats import stratum_sizes
from aieval.store import NewReviewQueue


def _items(n: int) -> list[Judged]:
    return [Judged("r", f"s{i}", i / (n - 1)) for i in range(n)]


def test_a_queue_is_a_stratified_sample_whose_weights_add_up_to_the_run() -> None:
    items = _items(120)
    picks = select_items(items, 30, threshold=0.5, seed=3, bins=6)
    assert picks == select_items(items, 30, threshold=0.5, seed=3, bins=6)
    assert picks != select_items(items, 30, threshold=0.5, seed=4, bins=6)
    assert len({p.sample_id for p in picks}) == 30
    # six score bins of 20 items (quantiles), three each side of the threshold; each has at
    # least two picks
    by_stratum = Counter(p.stratum for p in picks)
    assert sorted(by_stratum) == [
        "0.00-0.16", "0.17-0.33", "0.34-0.50", "0.50-0.66", "0.67-0.83", "0.84-1.00"
    ]  # fmt: skip
    assert min(by_stratum.values()) >= 2
    # the strata next to the threshold, where the judge is least sure, get the most labels
    assert by_stratum["0.34-0.50"] > by_stratum["0.00-0.16"] and by_stratum["0.50-0.66"] > 5
    # each pick stands for its stratum's size over its picks: the weights add up to the run
    assert sum(p.weight for p in picks) == pytest.approx(120)
    for stratum, count in by_stratum.items():
        assert {p.weight for p in picks if p.stratum == stratum} == {20 / count}


def test_an_items_chance_of_being_picked_is_one_over_its_weight() -> None:
    items = _items(60)
    seen: Counter[str] = Counter()
    weight = {}
    runs = 400
    for seed in range(runs):
        for pick in select_items(items, 15, seed=seed, bins=6):
            seen[pick.sample_id] += 1
            weight[pick.sample_id] = pick.weight
    # every item can be drawn (no stratum is left out), at the rate its weight says
    assert len(seen) == 60
    for sample_id, count in seen.items():
        assert count / runs == pytest.approx(1 / weight[sample_id], abs=0.09), sample_id


def test_disagreement_between_the_judges_samples_counts_as_uncertainty() -> None:
    sure = [Judged("r", f"s{i}", 0.9, (0.9, 0.9, 0.9)) for i in range(11)]
    torn = Judged("r", "torn", 0.9, (0.1, 0.9, 1.0))
    # its samples' standard error (0.40 / sqrt 3) moves it to 0.67: a stratum of its own,
    # nearer the threshold, drawn at a higher rate than the sure ones
    picks = {p.sample_id: p for p in select_items([*sure, torn], 6, mix={"uncertain": 1})}
    assert (picks["torn"].stratum, picks["torn"].weight) == ("0.67-0.67", 1.0)
    assert {(p.stratum, p.weight) for p in picks.values() if p.sample_id != "torn"} == {
        ("0.90-0.90", 11 / 5)
    }
    assert verdict_values({"verdicts": [{"normalized": 0.2}, {"normalized": "x"}, 3]}) == (0.2,)


def _judge(scores: dict[float, int]) -> list[Judged]:
    """``count`` judged items at each score."""
    return [
        Judged("r", f"{score}-{i}", score) for score, count in scores.items() for i in range(count)
    ]


def test_the_uncertain_share_is_neymans_allocation_for_kappa() -> None:
    # 60 judge fails (30 at 0.1, 30 at 0.2), 40 judge passes (20 at 0.8, 20 at 0.9): four
    # strata, the human pass rate expected in each its score. Worked by hand:
    # J = 0.4, H = (3 + 6 + 16 + 18) / 100 = 0.43, po = (27 + 24 + 16 + 18) / 100 = 0.85,
    # pe = 0.4 * 0.43 + 0.6 * 0.57 = 0.514, (2J - 1)(1 - po) = -0.03, so kappa moves by
    # 0.486 + 0.03 = 0.516 per unit of a pass stratum's rate and 0.486 - 0.03 = 0.456 of a fail
    # stratum's (over (1 - pe)^2). Size x spread x influence:
    # 30 * 0.3 * 0.456 = 4.104, 30 * 0.4 * 0.456 = 5.472, 20 * 0.4 * 0.516 = 4.128,
    # 20 * 0.3 * 0.516 = 3.096 (sum 16.8); of 70 labels: 17.1, 22.8, 17.2, 12.9 -> 17, 23, 17, 13
    items = _judge({0.1: 30, 0.2: 30, 0.8: 20, 0.9: 20})
    picks = select_items(items, 70, mix={"uncertain": 1}, bins=4)
    assert Counter(p.stratum for p in picks) == {
        "0.10-0.10": 17, "0.20-0.20": 23, "0.80-0.80": 17, "0.90-0.90": 13
    }  # fmt: skip
    # stratified: Neyman on the label alone, 30 * 0.3, 30 * 0.4, 20 * 0.4, 20 * 0.3 = 9, 12, 8,
    # 6 (sum 35); of 70 labels: 18, 24, 16, 12
    picks = select_items(items, 70, mix={"stratified": 1}, bins=4)
    assert Counter(p.stratum for p in picks) == {
        "0.10-0.10": 18, "0.20-0.20": 24, "0.80-0.80": 16, "0.90-0.90": 12
    }  # fmt: skip
    # a judge of one verdict throughout has no kappa to narrow: uncertain plans on the label
    passes = _judge({0.8: 20, 0.9: 20})
    picks = select_items(passes, 14, mix={"uncertain": 1}, bins=4)
    assert Counter(p.stratum for p in picks) == {"0.80-0.80": 8, "0.90-0.90": 6}


def test_strata_never_split_equal_scores_and_their_names_are_distinct() -> None:
    # a judge scoring on five values gets one stratum per value, whatever the bins asked
    items = _judge({0.0: 40, 0.25: 10, 0.5: 5, 0.75: 10, 1.0: 35})
    picks = select_items(items, 100)
    assert Counter(p.stratum for p in picks) == {
        "0.00-0.00": 40, "0.25-0.25": 10, "0.50-0.50": 5, "0.75-0.75": 10, "1.00-1.00": 35
    }  # fmt: skip
    # close scores get more decimals rather than one name for two strata
    close = _judge({0.5001: 10, 0.5002: 10, 0.5003: 10})
    names = {p.stratum for p in select_items(close, 30, bins=6)}
    assert names == {"0.5001-0.5001", "0.5002-0.5002", "0.5003-0.5003"}


def test_a_small_queue_gets_fewer_strata_each_with_two_labels() -> None:
    items = _items(200)
    picks = select_items(items, 12, seed=2)  # 20 bins asked: 6 strata of about 33 items
    by_stratum = Counter(p.stratum for p in picks)
    assert len(by_stratum) == 6 and set(by_stratum.values()) == {2}
    assert sum(p.weight for p in picks) == pytest.approx(200)


def test_a_bad_selection_is_refused_naming_it() -> None:
    assert parse_mix("stratified=3,random=1") == {"stratified": 3.0, "random": 1.0}
    with pytest.raises(ConfigError, match="unknown selection 'clever'"):
        parse_mix("clever")
    with pytest.raises(ConfigError, match="share 'x' of 'random'"):
        parse_mix("random=x")


def _run(store: Store, name: str, model: str, n: int = 6) -> str:
    scorers = [{"name": "helpful", "options": {"judge_model": model, "rubric_sha256": "ab"}}]
    run_id = store.create_run(name=name, config={"scorers": scorers, "pass_threshold": 0.5})
    for i in range(n):
        store.record_sample(
            run_id,
            SampleRecord(
                id=f"s{i}", index=i, input=f"q{i}",
                scores={"helpful": ScoreRecord(i / n, reason="r")},
            ),
        )  # fmt: skip
    store.finish_run(run_id, status="completed")
    return run_id


def test_a_queue_pools_runs_of_one_judge_and_refuses_runs_of_two(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        a, b = _run(store, "a", "m1"), _run(store, "b", "m1")
        other = _run(store, "c", "m2")
        queue_id = build_queue(store, QueueRequest((a, b), "helpful", size=8, created_by="ann"))
        queue = store.review_queue(queue_id)
        assert queue.items == 8 and queue.runs == (a, b)
        # each item keeps its stratum and design weight; the strata's sizes add up to the runs
        weights = store.review_weights(queue.name)
        assert len(weights) == 8 and all(w.weight and w.weight >= 1 for w in weights.values())
        assert stratum_sizes((w.stratum, w.weight) for w in weights.values()) == pytest.approx(
            {k: float(v) for k, v in queue.selection["strata"].items()}
        )
        assert sum(queue.selection["strata"].values()) == 12
        assert queue.judge.model == "m1" and queue.selection["threshold"] == 0.5
        with pytest.raises(ReviewError, match=f"differ.*{other}"):
            build_queue(store, QueueRequest((a, other), "helpful"))
        with pytest.raises(ReviewError, match="has no scorer 'nope'"):
            build_queue(store, QueueRequest((a,), "nope"))


def test_weights_are_stored_on_both_backends_and_older_items_read_as_equal(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        run_id = _run(store, "a", "m1")
        judge = store.review_queue(build_queue(store, QueueRequest((run_id,), "helpful"))).judge
        items = ((run_id, "s0", "0.00-0.17", 2.5), (run_id, "s1", "random"))
        queue_id = store.create_review_queue(NewReviewQueue("q", judge, (run_id,), items))
        weights = store.review_weights(queue_id)
        assert weights[(run_id, "s0")].weight == 2.5 and weights[(run_id, "s0")].stratum
        assert weights[(run_id, "s1")].weight is None
        assert [i.weight for i in store.review_items(queue_id)] == [2.5, None]
        with pytest.raises(ReviewError, match="no review queue 'nope'"):
            store.review_weights("nope")


def test_a_judge_on_another_scale_is_binned_over_its_own_range() -> None:
    items = [Judged("r", f"s{i}", 1 + i / 10) for i in range(41)]  # scores 1..5
    items.append(Judged("r", "neg", -2.0))
    picks = select_items(items, 20, threshold=3.0, seed=1, bins=6)
    assert sum(p.weight for p in picks) == pytest.approx(42)
    strata = {p.sample_id: p.stratum for p in picks}
    # the lowest score is in the lowest bin, never wrapped to the top one
    assert strata["neg"] == "-2.00-1.50"
    assert "3.00-3.60" in strata.values() and "4.40-5.00" in strata.values()
