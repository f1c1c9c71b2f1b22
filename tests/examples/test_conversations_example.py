"""The conversations example runs offline, as the docs show it, from any checkout path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import aieval
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
