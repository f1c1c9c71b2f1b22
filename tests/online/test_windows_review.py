"""A rule's failing and unsure items go to its review queue on a real store (both backends):
the queue is created with the rule's judge on first use, later batches append, a batch sent
again adds nothing, and a queue of that name kept for another judge is refused."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store, run
from aieval.errors import ReviewError
from aieval.online import OnlineRule
from aieval.online._review import send_to_review
from aieval.scorers import llm_judge

#: the judge's scores per prediction, one per call in turn: ``doubt`` splits its three samples
SCORES = {"good": [9], "bad": [1], "doubt": [9, 2, 9]}


def judged_run(store: Store, server: OpenAIServer, predictions: list[str], model: str) -> str:
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def answer(body: Any) -> Reply:
        text = body["messages"][-1]["content"]
        kind = next((k for k in SCORES if re.search(rf"\b{k}\b", text)), None)
        assert kind is not None, text
        with lock:
            turn = calls[kind] = calls.get(kind, -1) + 1
        scores = SCORES[kind]
        return Reply(json.dumps({"score": scores[turn % len(scores)], "reason": "r"}))

    server.responder = answer
    judge = llm_judge(
        rubric="Reward fitting answers.", provider="openai-compatible",
        base_url=server.base_url, model=model, name="quality", samples=3,
    )  # fmt: skip
    rows = [{"id": f"t{i}", "prompt": "q", "prediction": p} for i, p in enumerate(predictions)]
    return run(name="online/qa/2026-11-30T04", dataset=rows, scorers=[judge], store=store).id


def test_failing_and_unsure_items_go_to_the_rule_queue(
    store_location: str, openai_server: OpenAIServer
) -> None:
    store = Store(store_location)
    rule = OnlineRule(name="qa", review="qa doubts")
    first = judged_run(store, openai_server, ["good", "bad", "doubt", "good"], "m1")
    assert send_to_review(store, rule, first, ["t0", "t1", "t2", "t3"]) == 2
    queue = store.review_queue("qa doubts")
    assert queue.judge.scorer == "quality" and queue.runs == (first,)
    items = store.review_items(queue.id)
    assert [(i.sample_id, i.stratum) for i in items] == [("t1", "failed"), ("t2", "unsure")]
    # sent again (a restart mid-batch): nothing new
    assert send_to_review(store, rule, first, ["t1", "t2"]) == 0
    # the next window's batch appends, after the items already there
    second = judged_run(store, openai_server, ["bad", "good"], "m1")
    assert send_to_review(store, rule, second, ["t0", "t1"]) == 1
    items = store.review_items(queue.id)
    assert [(i.ord, i.run_id, i.sample_id) for i in items][-1] == (2, second, "t0")
    assert store.review_queue(queue.id).runs == (first, second)
    # only the samples named are looked at; a rule without `review` sends nothing
    assert send_to_review(store, OnlineRule(name="qa"), second, ["t0"]) == 0
    other = judged_run(store, openai_server, ["bad"], "m2")
    with pytest.raises(ReviewError, match="qa doubts"):
        send_to_review(store, rule, other, ["t0"])
    store.close()
