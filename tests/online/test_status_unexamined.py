"""Received traces no server has examined yet: counted (by the requests past the newest taken
in, read by index) with the oldest one's age, and an active rule stalled once they wait past the
stall limit, in the status, on the command line and through the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.cli import run_main
from tests.support.online import add_trace, trace_ids
from tests.support.online_status_rows import add_rule

from aieval.online import online_status
from aieval.store import Store

T0 = 1_790_002_800.0
NOW = T0 + 50 * 60


def _received(db: Path | str) -> None:
    with Store(db) as store:
        add_rule(store, "support", {"name": "support"})
        add_rule(store, "quiet", {"name": "quiet"}, paused=True)
        for i, trace_id in enumerate(trace_ids(7)):
            add_trace(store, trace_id, T0 + i)


def test_traces_no_server_took_in_are_counted_and_stall_active_rules(
    store_location: str,
) -> None:
    _received(store_location)
    with Store(store_location) as store:
        status = online_status(store, NOW)
    assert (status.unexamined, status.unexamined_lag_s) == (7, 50 * 60)
    rules = {rule.name: rule for rule in status.rules}
    assert rules["support"].stalled
    assert rules["support"].stalled_reason == (
        "traces received 50m ago are not being examined: no server is scoring"
    )
    assert not rules["quiet"].stalled  # paused: it examines nothing on purpose


def test_traces_received_recently_are_counted_without_a_stall(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _received(db)
    with Store(db) as store:
        status = online_status(store, T0 + 60)
    assert status.unexamined == 7
    assert not any(rule.stalled for rule in status.rules)


def test_the_command_line_says_the_count_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    with Store(db) as store:
        add_rule(store, "support", {"name": "support"})
        add_trace(store, trace_ids(1)[0], 1_000_000_000.0)  # long ago
    done = run_main(
        capsys, monkeypatch, "online", "status", "--db", str(db), env={"COLUMNS": "200"}
    )
    assert done.returncode == 1
    assert "1 received traces not yet examined against the rules" in done.stdout
    assert "are not being examined: no server is scoring" in done.stdout
