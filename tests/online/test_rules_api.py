"""``/api/online/rules`` through a real server: only the server's own token writes (upload
and review tokens 403; no token set: 403 naming --token); a bad rule is a 422 naming the
field; a rules-file rule cannot be replaced or deleted here (409); backfills are recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.server import LiveServer

from aieval.online import OnlineRule, RuleScoring, install_file_rules
from aieval.server import ServerSettings, create_app
from aieval.store import Store

OWN, UPLOAD, REVIEW = "own-secret", "upload-secret", "review-secret"
RULE: dict[str, Any] = {
    "name": "quality",
    "filter": {"service_name": "shop", "attributes": [{"key": "tier", "equals": "gold"}]},
    "sampling_rate": 0.5,
    "scoring": {"scorers": ["json_valid"]},
    "budget": {"calls_per_hour": 10},
}


def _serve(tmp_path: Path, token: str | None) -> LiveServer:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    store = Store(tmp_path / "runs.db")
    install_file_rules(
        store, [OnlineRule(name="from-file", scoring=RuleScoring(scorers=("json_valid",)))]
    )
    settings = ServerSettings(
        token=token,
        upload_tokens={"ci": UPLOAD} if token else {},
        review_tokens={"ann": REVIEW} if token else {},
        dataset_roots=(root,),
        online_scoring=False,  # the API is under test: a backfill asked stays as recorded
    )
    return LiveServer(create_app(store, settings))


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveServer]:
    with _serve(tmp_path, OWN) as server:
        yield server


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_owner_adds_lists_pauses_resumes_and_deletes_a_rule(live: LiveServer) -> None:
    async with live.client(headers=_as(OWN)) as c:
        added = await c.post("/api/online/rules", json=RULE)
        assert added.status_code == 201, added.text
        assert added.json()["source"] == "api" and added.json()["replaced"] is False
        again = await c.post("/api/online/rules", json={**RULE, "window": "day"})
        assert again.json()["replaced"] is True and again.json()["rule"]["window"] == "day"
        listed = (await c.get("/api/online/rules")).json()["rules"]
        assert [(r["name"], r["source"]) for r in listed] == [
            ("from-file", "file"),
            ("quality", "api"),
        ]
        paused = await c.post("/api/online/rules/quality/pause")
        assert paused.json()["paused"] is True and paused.json()["rule"]["paused"] is True
        assert (await c.post("/api/online/rules/quality/resume")).json()["paused"] is False
        # a file rule may be paused here (an operator's brake), never replaced or deleted
        assert (await c.post("/api/online/rules/from-file/pause")).json()["paused"] is True
        assert (await c.delete("/api/online/rules/quality")).json() == {"deleted": "quality"}
        assert (await c.post("/api/online/rules/quality/pause")).status_code == 404
        assert (await c.delete("/api/online/rules/quality")).status_code == 404


async def test_a_rules_file_rule_is_changed_only_in_its_file(live: LiveServer) -> None:
    async with live.client(headers=_as(OWN)) as c:
        replaced = await c.post("/api/online/rules", json={**RULE, "name": "from-file"})
        deleted = await c.delete("/api/online/rules/from-file")
    for answer in (replaced, deleted):
        assert answer.status_code == 409
        assert "rules file" in answer.json()["message"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": "a/b"}, "name: 'a/b'"),
        ({"sampling_rate": 0}, "sampling_rate: "),
        ({"scoring": {"scorers": ["nope"]}}, "scoring: unknown scorer 'nope'"),
        ({"scoring": {"scorers": ["os:system"]}}, "scoring.scorers[0]: 'os:system' names Python"),
        ({"scoring": {"scorers": ["json_valid"], "imports": ["x.py"]}}, "scoring.imports: "),
        ({"scoring": {"workflow": "/etc/hostname"}}, "scoring.workflow: '/etc/hostname' is not"),
        ({"filter": {"attributes": [{"key": "k", "regex": "("}]}}, "filter.attributes[0].regex"),
        ({"alert": {"floor": 0.5, "webhook": "gopher://x"}}, "alert.webhook: "),
        ({"extra": 1}, "extra: unknown key"),
        (
            {
                "scoring": {
                    "scorers": [
                        {
                            "llm_judge": {
                                "rubric": "r",
                                "base_url": "http://127.0.0.1:9/v1",
                                "model": "x",
                                "api_key_env": "HOME",
                            }
                        }
                    ]
                }
            },
            "scoring.scorers[0].llm_judge.api_key_env: a rule sent to the API may not name",
        ),
    ],
)
async def test_a_bad_rule_is_a_422_naming_the_field(
    live: LiveServer, change: dict[str, Any], field: str
) -> None:
    async with live.client(headers=_as(OWN)) as c:
        answer = await c.post("/api/online/rules", json={**RULE, **change})
        listed = (await c.get("/api/online/rules")).json()["rules"]
    assert answer.status_code == 422
    assert field in answer.json()["message"], answer.json()
    assert [r["name"] for r in listed] == ["from-file"]  # nothing stored


WRITES = [
    ("POST", "/api/online/rules", RULE),
    ("POST", "/api/online/rules/from-file/pause", None),
    ("POST", "/api/online/rules/from-file/resume", None),
    ("DELETE", "/api/online/rules/from-file", None),
    ("POST", "/api/online/rules/from-file/backfill", {"since": 0}),
]


async def test_only_the_server_s_own_token_writes(live: LiveServer) -> None:
    async with live.client() as c:
        for method, path, body in WRITES:
            for token in (UPLOAD, REVIEW):
                answer = await c.request(method, path, json=body, headers=_as(token))
                assert answer.status_code == 403, (method, path, token)
            answer = await c.request(method, path, json=body)
            assert answer.status_code == 401
        for token in (UPLOAD, REVIEW):
            assert (await c.get("/api/online/rules", headers=_as(token))).status_code == 403
        assert (await c.get("/api/online/rules")).status_code == 401
        listed = (await c.get("/api/online/rules", headers=_as(OWN))).json()["rules"]
    assert [(r["name"], r["paused"]) for r in listed] == [("from-file", False)]


async def test_a_server_without_a_token_takes_no_rule_changes(tmp_path: Path) -> None:
    with _serve(tmp_path, None) as server:
        async with server.client() as c:
            for method, path, body in WRITES:
                answer = await c.request(method, path, json=body)
                assert answer.status_code == 403, (method, path)
                assert "--token" in answer.json()["message"]
            assert (await c.get("/api/online/rules")).status_code == 200


async def test_a_backfill_is_recorded_once(live: LiveServer, tmp_path: Path) -> None:
    async with live.client(headers=_as(OWN)) as c:
        body = {"since": "2026-01-01T00:00:00Z", "until": 1767229200}
        first = await c.post("/api/online/rules/from-file/backfill", json=body)
        second = await c.post("/api/online/rules/from-file/backfill", json=body)
        backwards = await c.post(
            "/api/online/rules/from-file/backfill", json={"since": 10, "until": 5}
        )
        unknown = await c.post("/api/online/rules/absent/backfill", json={"since": 0})
    assert first.status_code == 202 and first.json()["requested"] is True
    assert first.json()["since"] == 1767225600.0 and first.json()["until"] == 1767229200.0
    assert second.status_code == 202 and second.json()["requested"] is False
    assert backwards.status_code == 422 and "must come before until" in backwards.text
    assert unknown.status_code == 404
    with Store(tmp_path / "runs.db") as store:
        rows = store._read("SELECT rule, since, until, cursor FROM online_backfills")
    assert rows == [("from-file", 1767225600.0, 1767229200.0, "")]


async def test_a_backfill_body_is_a_past_range_of_times(live: LiveServer) -> None:
    path = "/api/online/rules/from-file/backfill"
    async with live.client(headers=_as(OWN)) as c:
        flag = await c.post(path, json={"since": True})
        future = await c.post(path, json={"since": 0, "until": 1e12})
        backwards = await c.post(path, json={"since": 1767229200, "until": 1767225600})
        answers = [await c.post(path, json={"since": 1767225600}) for _ in range(2)]
        if answers[0].json()["until"] != answers[1].json()["until"]:  # a minute turned between
            answers = [answers[1], await c.post(path, json={"since": 1767225600})]
    assert flag.status_code == 422 and "not true/false" in flag.text
    assert future.status_code == 422
    assert (
        "until (+33658-09-27T01:46:40.000+00:00) lies in the future; at most 20"
        in (future.json()["message"])
    )
    assert backwards.status_code == 422
    assert (
        "since (2026-01-01T01:00:00.000+00:00) must come before until "
        "(2026-01-01T00:00:00.000+00:00)" in backwards.json()["message"]
    )
    # an omitted until is now rounded up to the minute: asked again, the same backfill
    first, again = (a.json() for a in answers)
    assert first["until"] % 60 == 0 and first["until"] == again["until"]
    assert again["requested"] is False
    assert first["range"].startswith("[2026-01-01T00:00:00.000+00:00, ")


async def test_backfill_ranges_are_kept_and_shown_to_the_millisecond(
    live: LiveServer, tmp_path: Path
) -> None:
    path = "/api/online/rules/from-file/backfill"
    async with live.client(headers=_as(OWN)) as c:
        whole = await c.post(path, json={"since": 1767225600, "until": 1767229200})
        part = await c.post(path, json={"since": 1767225600.123, "until": 1767229200})
        # past the millisecond: the same range as shown, so the same backfill
        finer = await c.post(path, json={"since": 1767225600.1234, "until": 1767229200})
    assert whole.json()["range"] == "[2026-01-01T00:00:00.000+00:00, 2026-01-01T01:00:00.000+00:00)"
    assert part.json()["range"] == "[2026-01-01T00:00:00.123+00:00, 2026-01-01T01:00:00.000+00:00)"
    assert part.json()["requested"] is True and part.json()["since"] == 1767225600.123
    assert finer.json()["requested"] is False and finer.json()["range"] == part.json()["range"]
    with Store(tmp_path / "runs.db") as store:
        rows = store._read("SELECT since FROM online_backfills ORDER BY since")
    assert rows == [(1767225600.0,), (1767225600.123,)]
