"""Review queues on both backends: reservations, one label per reviewer, concurrent reviewers."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from aieval import SampleRecord, ScoreRecord, Store
from aieval.core import JudgeKey, ReviewLabel
from aieval.errors import ReviewError
from aieval.store import NewReviewQueue

JUDGE = JudgeKey.of("helpful", {"judge_model": "m", "rubric": "abc"})


def _queue(store: Store, n: int, reviewers: int = 2) -> str:
    run_id = store.create_run(name="judged")
    for i in range(n):
        store.record_sample(
            run_id,
            SampleRecord(
                id=f"s{i}", index=i, input=f"q{i}", prediction=f"a{i}",
                scores={"helpful": ScoreRecord(i / max(n - 1, 1), reason="why")},
            ),
        )  # fmt: skip
    store.finish_run(run_id, status="completed")
    items = tuple((run_id, f"s{i}", "random") for i in range(n))
    return store.create_review_queue(
        NewReviewQueue("q", JUDGE, (run_id,), items, {"size": n}, reviewers, "ann")
    )


def _label(store: Store, queue_id: str, ord: int, reviewer: str, passed: bool = True) -> None:
    item = store.review_item(queue_id, ord)
    store.save_review_label(
        queue_id,
        ord,
        ReviewLabel(JUDGE.digest, item.run_id, item.sample_id, reviewer, passed=passed),
    )


def test_a_reviewer_is_served_each_item_once_and_an_item_only_its_reviewer_count(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        queue_id = _queue(store, 3, reviewers=2)
        first = store.reserve_review_item(queue_id, "ann")
        assert first is not None and first.ord == 0
        # asking again serves the held item, not a second one
        assert store.reserve_review_item(queue_id, "ann") == first
        _label(store, queue_id, 0, "ann")
        with pytest.raises(ReviewError, match="does not hold item 0"):
            _label(store, queue_id, 0, "ann", passed=False)
        assert [store.reserve_review_item(queue_id, r).ord for r in ("bob", "cy")] == [0, 1]  # type: ignore[union-attr]
        # item 0 has its two reviewers (one label, one hold): a third is served item 1
        assert store.reserve_review_item(queue_id, "dee").ord == 1  # type: ignore[union-attr]
        assert store.reserve_review_item(queue_id, "eve").ord == 2  # type: ignore[union-attr]
        queue = store.review_queue("q")
        assert (queue.items, queue.labels, queue.complete, queue.by_reviewer) == (
            3,
            1,
            0,
            {"ann": 1},
        )
        assert queue.judge == JUDGE and queue.created_by == "ann" and queue.reviewers == 2


def test_an_expired_hold_is_taken_over_and_its_old_holder_cannot_save(store_location: str) -> None:
    with Store(store_location) as store:
        queue_id = _queue(store, 1, reviewers=1)
        assert store.reserve_review_item(queue_id, "ann", hold_s=10, now=1000.0) is not None
        assert store.reserve_review_item(queue_id, "bob", now=1005.0) is None  # still held
        taken = store.reserve_review_item(queue_id, "bob", now=1011.0)
        assert taken is not None and taken.ord == 0
        with pytest.raises(ReviewError, match="'ann' does not hold item 0"):
            _label(store, queue_id, 0, "ann")
        _label(store, queue_id, 0, "bob")
        assert store.reserve_review_item(queue_id, "cy", now=99999.0) is None  # done for good
        assert store.review_queue(queue_id).complete == 1


def test_a_release_frees_the_item_and_labels_read_back_by_judge_and_time(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        queue_id = _queue(store, 2, reviewers=1)
        held = store.reserve_review_item(queue_id, "ann")
        assert held is not None and store.release_review_item(queue_id, held.ord, "ann")
        again = store.reserve_review_item(queue_id, "bob")
        assert again is not None and again.ord == held.ord
        item = store.review_item(queue_id, 0)
        label = ReviewLabel(
            JUDGE.digest, item.run_id, item.sample_id, "bob", score=0.25,
            note="<b>odd</b> \x00 é", labelled_at=50.0,
        )  # fmt: skip
        store.save_review_label(queue_id, 0, label)
        assert store.review_labels(judge=JUDGE.digest) == [label]
        assert store.review_labels(judge=JUDGE.digest, since=51.0) == []
        assert store.review_labels(judge="other") == []
        # an import of the same label (and a new one) twice stores each once
        other = ReviewLabel(JUDGE.digest, item.run_id, "s1", "cy", passed=False, labelled_at=60.0)
        assert store.add_review_labels([label, other]) == 1
        assert store.add_review_labels([label, other]) == 0
        assert store.review_labels(judge=JUDGE.digest) == [label, other]
        assert store.missing_samples([(item.run_id, "s1"), (item.run_id, "nope")]) == [
            (item.run_id, "nope")
        ]


def _review_all(location: str, queue_id: str, reviewer: str, start: threading.Barrier) -> int:
    done = 0
    with Store(location) as store:
        start.wait()
        while (item := store.reserve_review_item(queue_id, reviewer)) is not None:
            _label(store, queue_id, item.ord, reviewer)
            done += 1
    return done


def test_reviewers_at_once_never_double_label_nor_exceed_an_items_count(
    store_location: str,
) -> None:
    n, reviewers = 12, 2
    with Store(store_location) as store:
        queue_id = _queue(store, n, reviewers=reviewers)
    names = ["ann", "bob", "cy"]
    start = threading.Barrier(len(names))
    counts: dict[str, int] = {}
    errors: list[BaseException] = []

    def work(name: str) -> None:
        try:
            counts[name] = _review_all(store_location, queue_id, name, start)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with Store(store_location) as store:
        labels = store.review_labels(judge=JUDGE.digest)
        queue = store.review_queue(queue_id)
    per_item = Counter(label.sample_id for label in labels)
    pairs = Counter((label.sample_id, label.reviewer) for label in labels)
    assert sum(counts.values()) == len(labels) == n * reviewers
    assert set(per_item.values()) == {reviewers} and len(per_item) == n
    assert max(pairs.values()) == 1
    assert queue.complete == n


def test_a_sample_the_reviewer_labelled_for_this_judge_elsewhere_is_not_served(
    store_location: str,
) -> None:
    with Store(store_location) as store:
        # two reviewers per item: ann's imported label fills one slot, bob may take the other
        queue_id = _queue(store, 2, reviewers=2)
        item = store.review_item(queue_id, 0)
        imported = ReviewLabel(JUDGE.digest, item.run_id, item.sample_id, "ann", passed=True)
        assert store.add_review_labels([imported]) == 1
        served = store.reserve_review_item(queue_id, "ann")
        assert served is not None and served.ord == 1
        _label(store, queue_id, 1, "ann")
        assert store.reserve_review_item(queue_id, "ann") is None
        assert store.reserve_review_item(queue_id, "bob") == item  # another reviewer still may
