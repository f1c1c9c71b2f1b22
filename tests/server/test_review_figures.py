"""The review server's live per-queue figures: design-weighted kappa, TPR and TNR with 95%
intervals, labels and base rate, the same figures ``aieval judges`` gives; only saved labels
count, and before the first save there are none."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from tests.server.conftest import AppFactory

from aieval import SampleRecord, ScoreRecord, Store
from aieval.judges import JudgeRun, stored_summaries

OWN, ANN = "own-secret-0", "ann-secret-1"
MIX = "stratified=40,uncertain=40,random=20"
QUEUE = {"runs": ["judged"], "scorer": "helpful", "size": 60, "reviewers": 1}
# enough items and labels that the strata draw unequally (a small queue draws two per stratum)
N = 200


def _human(i: int) -> bool:
    """The reviewer's verdict: the judge's, except near its threshold, where it errs often."""
    score = _score(i)
    return score >= 0.5 if abs(score - 0.5) > 0.15 else i % 3 == 0


def _score(i: int) -> float:
    return (i * 37 % 100) / 100


@pytest.fixture
async def api(make_app: AppFactory, server_store: str) -> AsyncIterator[httpx.AsyncClient]:
    with Store(server_store) as store:
        scorers = [{"name": "helpful", "options": {"judge_model": "m", "rubric_sha256": "ab"}}]
        run_id = store.create_run(
            name="judged", config={"scorers": scorers, "pass_threshold": 0.5}, run_id="judged"
        )
        for i in range(N):
            score = ScoreRecord(_score(i), reason=f"R{i}")
            store.record_sample(
                run_id, SampleRecord(id=f"s{i}", index=i, input=f"q{i}", scores={"helpful": score})
            )
        store.finish_run(run_id, status="completed")
    app = make_app(token=OWN, review_tokens={"ann": ANN})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as c:
        yield c


def _as(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_the_queue_shows_weighted_figures_with_intervals_as_judges_does(
    api: httpx.AsyncClient, server_store: str
) -> None:
    made = await api.post(
        "/api/review/queues",
        json={**QUEUE, "selection": MIX},
        headers=_as(OWN),
    )
    queue_id = made.json()["id"]
    url = f"/api/review/queues/{queue_id}"
    # before any save: no figure of the judge at all
    before = (await api.get(url, headers=_as(ANN))).json()["agreement"]
    assert before == {
        "labels": 0, "items": 0, "agree": 0, "kappa": None,
        "problem": "no label saved in this queue yet",
    }  # fmt: skip
    saved: dict[str, object] = {}
    while True:
        item = (await api.post(f"{url}/next", headers=_as(ANN))).json()["item"]
        if item is None:
            break
        i = int(item["sample_id"][1:])
        answer = await api.post(
            f"{url}/items/{item['ord']}/label", json={"passed": _human(i)}, headers=_as(ANN)
        )
        assert answer.status_code == 200, answer.text
        saved = answer.json()["agreement"]
    live = (await api.get(url, headers=_as(ANN))).json()["agreement"]
    assert live == saved  # the page after a save and the endpoint give one answer
    assert live["weighted"] is True and live["unweighted"] is None and live["problem"] is None
    assert live["items"] == live["labels"] == QUEUE["size"]
    for figure in ("judge_human_kappa", "tpr", "tnr"):
        ci = live[figure]
        assert ci["low"] <= ci["estimate"] <= ci["high"] and ci["high"] > ci["low"]
    assert 0 < live["base_rate"] < 1
    # the same figures as aieval judges on the run (one queue holds every label)
    with Store(server_store) as store:
        row = store.get_run("judged")
        run = JudgeRun(row.id, row.config, list(store.iter_samples(row.id)))
        [summary] = stored_summaries(store, [run])
        weights = {w.weight for w in store.review_weights(queue_id).values()}
    assert len(weights) > 1  # a stratified draw: the weighting is not trivial
    assert summary.certification is not None
    expected = summary.certification.agreement.to_dict()
    for key in ("judge_human_kappa", "tpr", "tnr", "base_rate", "items", "weighted"):
        assert live[key] == expected[key], key
    assert live["kappa"] == pytest.approx(expected["judge_human_kappa"]["estimate"], abs=1e-4)
    assert 0 < live["agree"] < live["items"]


async def test_the_run_pages_judges_endpoint_gives_the_figures_and_nothing_without_a_judge(
    api: httpx.AsyncClient, server_store: str
) -> None:
    with Store(server_store) as store:
        plain = store.create_run(name="plain", config={"scorers": [{"name": "exact"}]})
        store.finish_run(plain, status="completed")
    assert (await api.get(f"/api/runs/{plain}/judges", headers=_as(OWN))).json() == {
        "run_id": plain, "judges": [],
    }  # fmt: skip
    # a review token reaches only the review endpoints
    assert (await api.get("/api/runs/judged/judges", headers=_as(ANN))).status_code == 403
    assert (await api.get("/api/runs/nope/judges", headers=_as(OWN))).status_code == 404
    [unlabelled] = (await api.get("/api/runs/judged/judges", headers=_as(OWN))).json()["judges"]
    assert unlabelled["certification"] is None and "no labels" in unlabelled["problem"]
    made = await api.post(
        "/api/review/queues",
        json={**QUEUE, "selection": MIX},
        headers=_as(OWN),
    )
    url = f"/api/review/queues/{made.json()['id']}"
    while (item := (await api.post(f"{url}/next", headers=_as(ANN))).json()["item"]) is not None:
        label = {"passed": _human(int(item["sample_id"][1:]))}
        await api.post(f"{url}/items/{item['ord']}/label", json=label, headers=_as(ANN))
    [judge] = (await api.get("/api/runs/judged/judges", headers=_as(OWN))).json()["judges"]
    with Store(server_store) as store:
        row = store.get_run("judged")
        run = JudgeRun(row.id, row.config, list(store.iter_samples(row.id)))
        [summary] = stored_summaries(store, [run])
    assert judge == summary.to_dict()
    assert judge["certification"]["agreement"]["weighted"] is True
    assert judge["runs"][0]["judged"] == N
