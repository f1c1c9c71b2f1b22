"""Two review servers on one PostgreSQL store, two reviewers at once on one queue: no item
labelled twice by one reviewer, none beyond its reviewer count."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest
from tests.server.conftest import AppFactory
from tests.server.test_review_api import ANN, BOB, OWN, judged_run

from aieval import Store
from aieval.judges import QueueRequest, build_queue

ITEMS = 8


@pytest.fixture
def server_store(pg_url: str) -> str:
    return pg_url


async def _review(client: httpx.AsyncClient, queue_id: str, token: str) -> int:
    headers = {"authorization": f"Bearer {token}"}
    done = 0
    while True:
        answer = await client.post(f"/api/review/queues/{queue_id}/next", headers=headers)
        item = answer.json()["item"]
        if item is None:
            return done
        saved = await client.post(
            f"/api/review/queues/{queue_id}/items/{item['ord']}/label",
            json={"passed": done % 2 == 0},
            headers=headers,
        )
        if saved.status_code == 422 and "does not hold" in saved.json()["message"]:
            continue  # this reviewer's other tab saved it first: refused, never doubled
        assert saved.status_code == 200, saved.text
        done += 1


async def test_two_reviewers_at_once_on_two_servers(make_app: AppFactory, pg_url: str) -> None:
    with Store(pg_url) as store:
        judged_run(store, n=ITEMS)
        queue_id = build_queue(store, QueueRequest(("judged",), "helpful", size=ITEMS))
    tokens = {"ann": ANN, "bob": BOB}
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=make_app(token=OWN, review_tokens=tokens)),
            base_url="http://127.0.0.1:8765",
        )
        for _ in range(2)
    ]
    try:
        # each reviewer on both servers at once (two tabs behind a load balancer)
        counts = await asyncio.gather(
            _review(clients[0], queue_id, ANN),
            _review(clients[1], queue_id, BOB),
            _review(clients[1], queue_id, ANN),
            _review(clients[0], queue_id, BOB),
        )
    finally:
        for client in clients:
            await client.aclose()
    with Store(pg_url) as store:
        labels = store.review_labels(queue=queue_id)
        queue = store.review_queue(queue_id)
    pairs = Counter((label.sample_id, label.reviewer) for label in labels)
    per_item = Counter(label.sample_id for label in labels)
    assert max(pairs.values()) == 1
    assert set(per_item.values()) == {2} and len(per_item) == ITEMS
    assert queue.complete == ITEMS and len(labels) == 2 * ITEMS
    assert sum(counts) == 2 * ITEMS
