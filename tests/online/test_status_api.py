"""``GET /api/online/status`` on a real server: the server's own token reads it (an upload or
review token, or none, is refused), the counts add up, and an error message is redacted like
every answer."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from tests.support.online_status_rows import add_rule, add_work
from tests.support.server import LiveServer

from aieval.online import window_start
from aieval.server import ServerSettings, create_app
from aieval.store import Store

OWN = "own-token-5d1e"
ANN = "review-token-77aa"
CI = "upload-token-90bc"


def test_the_status_is_a_read_for_the_servers_own_token(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    now = time.time()
    start = window_start(now, "hour")
    with Store(db) as store:
        add_rule(store, "support", {"name": "support", "budget": {"calls_per_hour": 5}})
        add_work(store, "support", "a", window_start=start, state="scored", finished_at=now)
        add_work(
            store,
            "support",
            "b",
            window_start=start,
            state="skipped",
            reason="error",
            message=f"judge refused the key {OWN}",
            finished_at=now,
        )
        add_work(store, "support", "c", window_start=start, state="pending", matched_at=now)
    settings = ServerSettings(
        token=OWN,
        review_tokens={"ann": ANN},
        upload_tokens={"ci": CI},
        dataset_roots=(tmp_path,),
        online_scoring=False,  # the seeded rows are the state shown: nothing scores them
    )
    app = create_app(str(db), settings)
    try:
        with LiveServer(app) as live, httpx.Client(base_url=live.url) as client:
            assert client.get("/api/online/status").status_code == 401
            for other in (ANN, CI):
                answer = client.get(
                    "/api/online/status", headers={"Authorization": f"Bearer {other}"}
                )
                assert answer.status_code == 403
            answer = client.get("/api/online/status", headers={"Authorization": f"Bearer {OWN}"})
    finally:
        app.state.manager.shutdown()
    assert answer.status_code == 200
    body = answer.json()
    (rule,) = body["rules"]
    counts = rule["counts"]
    assert (counts["matched"], counts["scored"], counts["pending"]) == (3, 1, 1)
    assert counts["skipped"]["error"] == 1 and counts["adds_up"] is True
    assert rule["spend"][0]["calls_limit"] == 5 and rule["stalled"] is False
    assert rule["windows"][0]["counts"]["matched"] == 3
    assert OWN not in answer.text
    assert rule["errors"][0]["message"].startswith("judge refused the key ")
