"""A label on a queue's item counts for the queue whichever door it came by (imported too):
status, export and serving agree with what agreement counts, on both backends."""

from __future__ import annotations

from tests.server.test_review_api import judged_run

from aieval import Store
from aieval.core import ReviewLabel
from aieval.judges import QueueRequest, build_queue


def test_imported_labels_fill_the_queue_and_are_never_served_again(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = judged_run(store, n=3)
        request = QueueRequest(runs=("judged",), scorer="helpful", size=3, name="q1")
        queue_id = build_queue(store, request)
        queue = store.review_queue(queue_id)
        items = store.review_items(queue.id)
        first, second = items[0], items[1]
        imported = [
            ReviewLabel(queue.judge.digest, run_id, first.sample_id, who, passed=True)
            for who in ("ann", "bob")
        ] + [ReviewLabel(queue.judge.digest, run_id, second.sample_id, "ann", passed=False)]
        assert store.add_review_labels(imported) == 3
        queue = store.review_queue(queue.id)
        # the first item is complete; the labels count for the queue, as agreement counts them
        assert (queue.complete, queue.labels) == (1, 3)
        assert queue.by_reviewer == {"ann": 2, "bob": 1}
        assert len(store.review_labels(queue=queue.id)) == 3
        # ann labelled the first two already: served the third; carl only the second or third
        # (the first holds as many labels as its reviewers)
        served = store.reserve_review_item(queue.id, "ann")
        assert served is not None and served.ord == items[2].ord
        carl = store.reserve_review_item(queue.id, "carl")
        assert carl is not None and carl.ord == second.ord
        # the second item had one slot left (ann's imported label fills the other)
        dora = store.reserve_review_item(queue.id, "dora")
        assert dora is not None and dora.ord == items[2].ord
        assert store.reserve_review_item(queue.id, "eve") is None
