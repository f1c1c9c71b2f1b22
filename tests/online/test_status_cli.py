"""``aieval online status``: one table per rule (windows x counts), spend against the budget,
the lag, the errors, a loud line for a stalled rule (and exit 1), and ``--json``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tests.support.cli import run_main
from tests.support.online_status_rows import add_rule, add_spend, add_window_run, add_work

from aieval.online import window_run_name, window_start
from aieval.store import Store


def _seed(db: Path, *, stalled: bool) -> tuple[float, str]:
    now = time.time()
    start = window_start(now, "hour")
    with Store(db) as store:
        add_rule(store, "support", {"name": "support", "budget": {"calls_per_hour": 20}})
        run_id = add_window_run(store, "support", start, "hour", passed=1, failed=1)
        for i, state in enumerate(["scored", "scored"]):
            add_work(store, "support", f"s{i}", window_start=start, state=state, run_id=run_id)
        add_work(
            store,
            "support",
            "x",
            window_start=start,
            state="skipped",
            reason="sampled_out",
            finished_at=now,
        )
        add_work(
            store,
            "support",
            "e",
            window_start=start,
            state="skipped",
            reason="error",
            message="judge said nothing",
            finished_at=now,
        )
        waited = 3600 if stalled else 5
        add_work(
            store, "support", "p", window_start=start, state="pending", matched_at=now - waited
        )
        add_spend(store, "support", "hour", start, calls=7, tokens=1200, cost=0.03)
    return start, run_id


def test_status_prints_each_rules_windows_spend_and_lag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    start, _ = _seed(db, stalled=False)
    done = run_main(
        capsys, monkeypatch, "online", "status", "--store", str(db), env={"COLUMNS": "200"}
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "rule support · file · active · hour windows · lag " in text
    assert window_run_name("support", start, "hour") in text
    assert "50% [" in text and "of 2" in text  # the pass rate with its interval
    assert "this hour: 7 calls of 20, 1200 tokens, cost 0.03" in text
    assert "error x1: judge said nothing" in text
    assert "STALLED" not in text
    assert "not yet examined" not in text


def test_traces_waiting_to_be_examined_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    _seed(db, stalled=False)
    with Store(db) as store:
        due = time.time() - 90
        for trace in ("a" * 32, "b" * 32):
            store._write(
                "INSERT INTO online_traces (trace_id, examined_at, recheck_at) VALUES (?, 0, ?)",
                (trace, due),
            )
    done = run_main(
        capsys, monkeypatch, "online", "status", "--store", str(db), env={"COLUMNS": "200"}
    )
    assert (
        "2 received traces not yet examined against the rules, the oldest waiting 9" in done.stdout
    )


def test_a_stalled_rule_is_a_loud_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    _seed(db, stalled=True)
    done = run_main(capsys, monkeypatch, "online", "status", "--db", str(db))
    assert done.returncode == 1
    assert (
        "STALLED: rule support: no server is claiming its items: 1 pending item(s)" in done.stdout
    )
    as_json = run_main(capsys, monkeypatch, "online", "status", "--db", str(db), "--json")
    assert as_json.returncode == 1
    body = json.loads(as_json.stdout)
    (rule,) = body["rules"]
    assert rule["stalled"] is True
    counts = rule["counts"]
    assert (counts["matched"], counts["scored"], counts["skipped_total"], counts["pending"]) == (
        5,
        2,
        2,
        1,
    )


def test_status_of_a_store_without_rules_says_how_to_add_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    Store(db).close()
    done = run_main(capsys, monkeypatch, "online", "status", "--db", str(db))
    assert done.returncode == 0
    assert "aieval serve --online rules.yaml" in done.stdout
    missing = run_main(capsys, monkeypatch, "online", "status", "--db", str(tmp_path / "no.db"))
    assert missing.returncode == 2 and "no store at" in missing.stderr
