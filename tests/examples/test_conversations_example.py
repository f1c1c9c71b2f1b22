"""The conversations example runs offline, as the docs show it, from any checkout path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conversations._fake import no_connections
from tests.support.cli import run_main

import aieval
from aieval import Store
from aieval.core import Conversation

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "conversations"


def test_the_example_records_replays_and_branches(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(aieval.__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    lines = done.stdout.splitlines()
    assert lines[1:] == [
        "track-order: 5 turns, user_done",
        "refund: 6 turns, goal_reached",
        "opening-hours: 6 turns, user_done",
        "replay all: 3/3 transcripts identical, no call made",
        "branch: opening-hours differs at turn 5: 'On Monday we are closed.'",
    ]
    recorded = (tmp_path / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    refund = Conversation.from_json(recorded[1])
    calls = [c for t in refund.turns for c in t.tool_calls]
    assert [(c.name, c.result) for c in calls] == [
        ("lookup_order", '{"damaged": true, "status": "delivered"}'),
        ("issue_refund", '{"refunded": 2001}'),
    ]


def test_the_eval_file_runs_offline_and_show_prints_the_transcripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`aieval run examples/conversations/eval.yaml` from another folder, with every outbound
    connection refused: a Python target and a scripted simulated user the eval file names."""
    env = {"AIEVAL_DB": str(tmp_path / "aieval.db")}
    with no_connections(monkeypatch) as attempts:
        ran = run_main(
            capsys, monkeypatch, "run", str(EXAMPLE / "eval.yaml"), cwd=tmp_path, env=env
        )
        shown = run_main(capsys, monkeypatch, "show", "support-conversations", env=env)
    assert attempts == []
    assert ran.returncode == 0, ran.stderr
    assert "pass rate 100.0%" in ran.stdout and "minimums: polite@min 1.000" in ran.stdout
    assert shown.returncode == 0, shown.stderr
    assert [line for line in shown.stdout.splitlines() if line.startswith("conversation ")] == [
        "conversation track-order (epoch 0)",
        "conversation refund (epoch 0)",
        "conversation opening-hours (epoch 0)",
    ]
    assert "[1] user (simulated): Hi, where is my order 1042?" in shown.stdout
    assert '[5] tool (live): {"refunded": 2001}' in shown.stdout
    with Store(tmp_path / "aieval.db") as db:
        (run,) = db.list_runs(name="support-conversations")
        user = run.config["conversation"]["user"]
    assert user["python"] == "support.py:ScriptedUserModel"  # no machine path in the record
    assert run.config["target"]["name"] == "support_bot"
