"""The review API: only review tokens reach it, items are blind until labelled, labels bounded."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from tests.server.conftest import AppFactory

from aieval import SampleRecord, ScoreRecord, Store
from aieval.server._review_api import MAX_NOTE

OWN, ANN, BOB, UPLOAD = "own-secret-0", "ann-secret-1", "bob-secret-2", "up-secret-3"
REASON = "JUDGE-REASON-{}"


def judged_run(store: Store, n: int = 6, name: str = "judged") -> str:
    """A completed run whose judge ``helpful`` scored each sample (a reason naming it)."""
    scorers = [{"name": "helpful", "options": {"judge_model": "m", "rubric_sha256": "ab"}}]
    run_id = store.create_run(name=name, config={"scorers": scorers, "pass_threshold": 0.5})
    for i in range(n):
        score = ScoreRecord(
            0.137 + i * 0.13, reason=REASON.format(i),
            metadata={"verdicts": [{"normalized": 0.137 + i * 0.13, "reason": REASON.format(i)}]},
        )  # fmt: skip
        store.record_sample(
            run_id,
            SampleRecord(
                id=f"s{i}", index=i, input=f"question {i}", expected=f"gold {i}",
                prediction=f"<b>answer</b> {i}", scores={"helpful": score}, passed=i % 2 == 0,
            ),
        )  # fmt: skip
    store.finish_run(run_id, status="completed")
    return run_id


@pytest.fixture
async def api(make_app: AppFactory, server_store: str) -> AsyncIterator[httpx.AsyncClient]:
    with Store(server_store) as store:
        judged_run(store)
    app = make_app(token=OWN, review_tokens={"ann": ANN, "bob": BOB}, upload_tokens={"ci": UPLOAD})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as c:
        yield c


def _as(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_only_a_review_token_reaches_the_review_endpoints(api: httpx.AsyncClient) -> None:
    for token in (OWN, UPLOAD):
        answer = await api.get("/api/review/queues", headers=_as(token))
        assert answer.status_code == 403, answer.text
        answer = await api.post("/api/review/queues/x/next", headers=_as(token))
        assert answer.status_code == 403
    assert (await api.get("/api/review/queues")).status_code == 401
    # a review token reaches only the review endpoints and the viewer's files
    assert (await api.get("/api/runs", headers=_as(ANN))).status_code == 403
    assert (await api.get("/api/review/queues", headers=_as(ANN))).json() == {"queues": []}
    traded = await api.get(f"/?token={ANN}")
    assert traded.status_code == 303 and traded.headers["location"] == "/static/review.html"


async def test_an_item_is_blind_until_its_reviewer_saves_a_label(api: httpx.AsyncClient) -> None:
    made = await api.post(
        "/api/review/queues",
        json={"runs": ["judged"], "scorer": "helpful", "size": 4, "reviewers": 2},
        headers=_as(OWN),
    )
    assert made.status_code == 201, made.text
    queue = made.json()
    assert (queue["items"], queue["wanted"], queue["created_by"]) == (4, 8, "server owner")
    served = await api.post(f"/api/review/queues/{queue['id']}/next", headers=_as(ANN))
    item = served.json()["item"]
    assert item["prediction"].startswith("<b>answer</b>")
    # nothing of the judge: no reason, no score, no pass flag
    assert "JUDGE-REASON" not in served.text and "0.137" not in served.text
    assert not {"scores", "verdict", "passed", "metadata"} & set(item)
    label_url = f"/api/review/queues/{queue['id']}/items/{item['ord']}/label"
    saved = await api.post(label_url, json={"passed": True, "note": "<i>ok</i>"}, headers=_as(ANN))
    assert saved.status_code == 200, saved.text
    revealed = saved.json()
    i = int(item["sample_id"][1:])
    assert revealed["judge"]["reason"] == REASON.format(i)
    assert revealed["judge"]["score"] == pytest.approx(0.137 + i * 0.13)
    assert revealed["agreement"]["labels"] == 1 and revealed["queue"]["yours"] == 1
    again = await api.post(label_url, json={"passed": False}, headers=_as(ANN))
    assert again.status_code == 422 and "does not hold" in again.json()["message"]
    # the other reviewer labels the same item as its own, once
    theirs = (await api.post(f"/api/review/queues/{queue['id']}/next", headers=_as(BOB))).json()
    assert theirs["item"]["ord"] == item["ord"]


async def test_a_label_is_bounded_and_either_pass_fail_or_a_score(
    api: httpx.AsyncClient,
) -> None:
    made = await api.post(
        "/api/review/queues", json={"runs": ["judged"], "scorer": "helpful"}, headers=_as(OWN)
    )
    queue_id = made.json()["id"]
    item = (await api.post(f"/api/review/queues/{queue_id}/next", headers=_as(BOB))).json()
    url = f"/api/review/queues/{queue_id}/items/{item['item']['ord']}/label"
    for body in (
        {"passed": True, "score": 0.5},
        {},
        {"score": 1.5},
        {"passed": True, "note": "x" * (MAX_NOTE + 1)},
        {"passed": True, "reviewer": "mallory"},
    ):
        answer = await api.post(url, json=body, headers=_as(BOB))
        assert answer.status_code == 422, (body, answer.text)
    assert (await api.post(url, json={"score": 0.25}, headers=_as(BOB))).status_code == 200
    wrong = await api.post(
        "/api/review/queues",
        json={"runs": ["judged"], "scorer": "nope"},
        headers=_as(OWN),
    )
    assert wrong.status_code == 422 and "has no scorer 'nope'" in wrong.json()["message"]


def test_review_tokens_need_the_servers_own_token(make_app: AppFactory, tmp_path: Path) -> None:
    from aieval.errors import ConfigError

    with pytest.raises(ConfigError, match="review tokens need the server's own token"):
        make_app(review_tokens={"ann": ANN})
    with pytest.raises(ConfigError, match="must differ"):
        make_app(token=OWN, review_tokens={"ann": OWN})


async def test_a_skipped_item_is_given_back_and_not_served_again_at_once(
    api: httpx.AsyncClient,
) -> None:
    made = await api.post(
        "/api/review/queues",
        json={"runs": ["judged"], "scorer": "helpful", "size": 3, "reviewers": 1},
        headers=_as(OWN),
    )
    queue_id = made.json()["id"]
    first = (await api.post(f"/api/review/queues/{queue_id}/next", headers=_as(ANN))).json()
    ord = first["item"]["ord"]
    # held: bob is served another item
    theirs = (await api.post(f"/api/review/queues/{queue_id}/next", headers=_as(BOB))).json()
    assert theirs["item"]["ord"] != ord
    released = await api.post(
        f"/api/review/queues/{queue_id}/items/{ord}/release", headers=_as(ANN)
    )
    assert released.json() == {"released": True}
    after = await api.post(
        f"/api/review/queues/{queue_id}/next", json={"skip": [ord]}, headers=_as(ANN)
    )
    assert after.json()["item"]["ord"] not in (ord, theirs["item"]["ord"])


async def test_only_the_servers_own_token_makes_queues_and_errors_hide_the_store(
    api: httpx.AsyncClient, server_store: str
) -> None:
    body = {"runs": ["judged"], "scorer": "helpful", "size": 2}
    for token in (ANN, BOB):
        refused = await api.post("/api/review/queues", json=body, headers=_as(token))
        assert refused.status_code == 403 and "may not make queues" in refused.text
    assert (await api.get("/api/review/queues", headers=_as(ANN))).json() == {"queues": []}
    # the own token makes it (and reaches no other review endpoint)
    made = await api.post("/api/review/queues", json=body, headers=_as(OWN))
    assert made.status_code == 201, made.text
    queue_id = made.json()["id"]
    assert (await api.get(f"/api/review/queues/{queue_id}", headers=_as(OWN))).status_code == 403
    store_name = Path(server_store).name
    unknown = await api.post(
        "/api/review/queues", json={**body, "runs": ["nope"]}, headers=_as(OWN)
    )
    assert unknown.status_code == 404 and "'nope'" in unknown.text
    missing = await api.get("/api/review/queues/nope", headers=_as(ANN))
    assert missing.status_code in (404, 422) and "nope" in missing.text
    for answer in (unknown, missing):
        assert store_name not in answer.text and str(Path(server_store).parent) not in answer.text


async def test_an_unknown_label_field_lists_the_labels_own_fields(
    api: httpx.AsyncClient, server_store: str
) -> None:
    made = await api.post(
        "/api/review/queues", json={"runs": ["judged"], "scorer": "helpful"}, headers=_as(OWN)
    )
    queue_id = made.json()["id"]
    item = (await api.post(f"/api/review/queues/{queue_id}/next", headers=_as(ANN))).json()
    url = f"/api/review/queues/{queue_id}/items/{item['item']['ord']}/label"
    answer = await api.post(url, json={"passed": True, "reviewer": "mallory"}, headers=_as(ANN))
    assert answer.status_code == 422
    message = answer.json()["message"]
    assert "reviewer: unknown field; the fields are passed, score, note" in message, message
    assert "dataset" not in message and "base_dir" not in message
    # a reviewer cannot date a label: the server's time is stored
    backdated = await api.post(url, json={"passed": True, "labelled_at": 1}, headers=_as(ANN))
    assert backdated.status_code == 422 and "labelled_at: unknown field" in backdated.text
    before = time.time()
    assert (await api.post(url, json={"passed": True}, headers=_as(ANN))).status_code == 200
    with Store(server_store) as store:
        [label] = store.review_labels(queue=queue_id)
    assert before <= label.labelled_at <= time.time()


def test_the_serve_command_reads_review_tokens_by_name() -> None:
    from aieval.cli._serve import _upload_tokens
    from aieval.errors import ConfigError

    assert _upload_tokens(["ann=s1", "bob=s2"], "--review-token") == {"ann": "s1", "bob": "s2"}
    with pytest.raises(ConfigError, match="--review-token: give NAME=TOKEN"):
        _upload_tokens(["ann"], "--review-token")
