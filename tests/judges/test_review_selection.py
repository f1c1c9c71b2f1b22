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
    picks = select_items(items, 30, threshold=0.5, seed=3)
    assert picks == select_items(items, 30, threshold=0.5, seed=3)
    assert picks != select_items(items, 30, threshold=0.5, seed=4)
    assert len({p.sample_id for p in picks}) == 30
    # six score bins, three each side of the threshold; each has at least two picks
    by_stratum = Counter(p.stratum for p in picks)
    assert sorted(by_stratum) == [
        "0.00-0.17", "0.17-0.33", "0.33-0.50", "0.50-0.67", "0.67-0.83", "0.83-1.00"
    ]  # fmt: skip
    assert min(by_stratum.values()) >= 2
    # the strata next to the threshold, where the judge is least sure, get the most labels
    assert by_stratum["0.33-0.50"] > by_stratum["0.00-0.17"] and by_stratum["0.50-0.67"] > 5
    # each pick stands for its stratum's size over its picks: the weights add up to the run
    assert sum(p.weight for p in picks) == pytest.approx(120)
    for stratum, count in by_stratum.items():
        size = sum(1 for i in items if _bin(i.score) == stratum)
        assert {p.weight for p in picks if p.stratum == stratum} == {size / count}


def _bin(score: float) -> str:
    edges = ["0.00", "0.17", "0.33", "0.50", "0.67", "0.83", "1.00"]
    index = min(int(score * 6), 5)
    return f"{edges[index]}-{edges[index + 1]}"


def test_an_items_chance_of_being_picked_is_one_over_its_weight() -> None:
    items = _items(60)
    seen: Counter[str] = Counter()
    weight = {}
    runs = 400
    for seed in range(runs):
        for pick in select_items(items, 15, seed=seed):
            seen[pick.sample_id] += 1
            weight[pick.sample_id] = pick.weight
    # every item can be drawn (no stratum is left out), at the rate its weight says
    assert len(seen) == 60
    for sample_id, count in seen.items():
        assert count / runs == pytest.approx(1 / weight[sample_id], abs=0.09), sample_id


def test_disagreement_between_the_judges_samples_counts_as_uncertainty() -> None:
    sure = [Judged("r", f"s{i}", 0.9, (0.9, 0.9, 0.9)) for i in range(5)]
    torn = Judged("r", "torn", 0.9, (0.1, 0.9, 1.0))
    (pick,) = select_items([*sure, torn], 1, mix={"uncertain": 1})
    assert (pick.sample_id, pick.stratum, pick.weight) == ("torn", "0.50-0.67", 1.0)
    assert verdict_values({"verdicts": [{"normalized": 0.2}, {"normalized": "x"}, 3]}) == (0.2,)


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
    picks = select_items(items, 20, threshold=3.0, seed=1)
    assert sum(p.weight for p in picks) == pytest.approx(42)
    strata = {p.sample_id: p.stratum for p in picks}
    # the lowest score is in the lowest bin, never wrapped to the top one
    assert strata["neg"] == "-2.00--0.33"
    assert "3.00-3.67" in strata.values() and "4.33-5.00" in strata.values()
