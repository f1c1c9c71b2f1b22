"""Review selection: seeded, mixed by shares, each pick with its reason; queues from real runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from aieval import SampleRecord, ScoreRecord, Store
from aieval.errors import ConfigError, ReviewError
from aieval.judges import Judged, QueueRequest, build_queue, parse_mix, select_items, verdict_values


def _items(n: int) -> list[Judged]:
    return [Judged("r", f"s{i}", i / (n - 1)) for i in range(n)]


def test_a_mix_is_split_by_shares_seeded_and_never_picks_twice() -> None:
    items = _items(100)
    picks = select_items(items, 20, threshold=0.5, seed=3)
    assert picks == select_items(items, 20, threshold=0.5, seed=3)
    assert picks != select_items(items, 20, threshold=0.5, seed=4)
    reasons = Counter(p.stratum.partition(":")[0] for p in picks)
    assert reasons == {"stratified": 8, "uncertain": 8, "random": 4}
    assert len({p.sample_id for p in picks}) == 20
    # stratified: the same count from each of the five score bins
    bins = Counter(p.stratum for p in picks if p.stratum.startswith("stratified"))
    assert sorted(bins.values()) == [1, 1, 2, 2, 2] and len(bins) == 5
    # uncertain: the items nearest the threshold
    near = sorted(int(p.sample_id[1:]) for p in picks if p.stratum == "uncertain")
    assert all(abs(i / 99 - 0.5) < 0.07 for i in near), near


def test_disagreement_between_the_judges_samples_counts_as_uncertainty() -> None:
    sure = [Judged("r", f"s{i}", 0.9, (0.9, 0.9, 0.9)) for i in range(5)]
    torn = Judged("r", "torn", 0.9, (0.1, 0.9, 1.0))
    (pick,) = select_items([*sure, torn], 1, mix={"uncertain": 1})
    assert (pick.sample_id, pick.stratum) == ("torn", "uncertain")
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
        assert queue.judge.model == "m1" and queue.selection["threshold"] == 0.5
        with pytest.raises(ReviewError, match=f"differ.*{other}"):
            build_queue(store, QueueRequest((a, other), "helpful"))
        with pytest.raises(ReviewError, match="has no scorer 'nope'"):
            build_queue(store, QueueRequest((a,), "nope"))
