"""A failed alert delivery is never silent: a rule's incidents show in ``online_status``, in
``aieval online status`` (a loud line, exit 1 once delivery failed past its first attempts or
was given up) and in ``GET /api/online/status``, with attempts and the last error (which never
holds the webhook's secret path)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from tests.support.cli import run_main
from tests.support.online_status_rows import add_rule
from tests.support.server import LiveServer

from aieval.online import AlertPolicy, AlertSender, OnlineRule, online_status
from aieval.server import ServerSettings, create_app
from aieval.store import Store

OWN = "own-token-41c2"
SECRET = "T000/B000/s3cr3t"


def _seed(db: Path, failures: int, *, abandon: bool = False) -> None:
    """Rule ``support`` with one delivered incident and one whose webhook (a closed port)
    failed ``failures`` times, given up when ``abandon``."""
    now = time.time()
    with Store(db) as store:
        add_rule(store, "support", {"name": "support"})
        store.open_alert("support", "floor/pass_rate/old", "floor", {}, now - 7200)
        store.lease_alert("support", "floor/pass_rate/old", now, now + 60)
        store.finish_alert("support", "floor/pass_rate/old", delivered_at=now - 7000, error=None)
        store.open_alert("support", "floor/pass_rate/new", "floor", {}, now - 60)
        dead = OnlineRule(
            name="support",
            alert=AlertPolicy(webhook=f"http://127.0.0.1:9/{SECRET}", floor=0.8),
        )
        clock = [now]
        retry_for = 0.0 if abandon else 86400.0
        sender = AlertSender(store, backoff_s=0.0, retry_for_s=retry_for, clock=lambda: clock[0])
        for _ in range(failures):
            sender.deliver(dead)


def test_an_incident_failing_past_its_first_attempts_is_loud_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    _seed(db, 3)
    with Store(db) as store:
        (rule,) = online_status(store, time.time()).rules
    states = {a.incident: (a.state, a.attempts) for a in rule.alerts}
    assert states == {
        "floor/pass_rate/old": ("delivered", 1),
        "floor/pass_rate/new": ("failing", 3),
    }
    new = next(a for a in rule.alerts if a.undelivered)
    assert new.last_error is not None and "127.0.0.1:9" in new.last_error
    assert SECRET not in new.last_error
    done = run_main(capsys, monkeypatch, "online", "status", "--db", str(db))
    assert done.returncode == 1
    assert "ALERT NOT DELIVERED: alert floor/pass_rate/new of rule support" in done.stdout
    assert "3 attempts" in done.stdout and "ConnectionRefusedError" in done.stdout
    assert "alert floor/pass_rate/old of rule support" in done.stdout and SECRET not in done.stdout
    as_json = run_main(capsys, monkeypatch, "online", "status", "--db", str(db), "--json")
    assert as_json.returncode == 1
    (shown,) = json.loads(as_json.stdout)["rules"]
    assert [a["state"] for a in shown["alerts"]] == ["delivered", "failing"]


def test_an_incident_on_its_first_attempt_is_said_but_does_not_fail_the_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    _seed(db, 1)
    done = run_main(capsys, monkeypatch, "online", "status", "--db", str(db))
    assert done.returncode == 0
    assert "alert not delivered yet: alert floor/pass_rate/new of rule support" in done.stdout


def test_an_abandoned_incident_shows_in_the_api_and_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    _seed(db, 1, abandon=True)
    done = run_main(capsys, monkeypatch, "online", "status", "--db", str(db))
    assert done.returncode == 1
    assert "ALERT ABANDONED: alert floor/pass_rate/new of rule support" in done.stdout
    settings = ServerSettings(token=OWN, dataset_roots=(tmp_path,), online_scoring=False)
    app = create_app(str(db), settings)
    try:
        with LiveServer(app) as live, httpx.Client(base_url=live.url) as client:
            answer = client.get("/api/online/status", headers={"Authorization": f"Bearer {OWN}"})
    finally:
        app.state.manager.shutdown()
    assert answer.status_code == 200
    (rule,) = answer.json()["rules"]
    abandoned = [a for a in rule["alerts"] if a["state"] == "abandoned"]
    assert [a["incident"] for a in abandoned] == ["floor/pass_rate/new"]
    assert abandoned[0]["attempts"] == 1 and abandoned[0]["abandoned_at"] is not None
    assert "ConnectionRefusedError" in abandoned[0]["last_error"] and SECRET not in answer.text
