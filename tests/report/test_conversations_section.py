"""A run of conversations gets a "Conversations" section in every format: how many completed,
hit the turn limit, failed or were invalid (the simulated user failed fidelity, counted apart),
stop reasons, turns, and each failure or invalid one by scenario and turn; a run without
conversations gets none; a malformed record is counted, not fatal; untrusted text is escaped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from tests.support.reports import store_run

from aieval._records import SampleRecord, ScoreRecord
from aieval.conversations import FidelityFlag, SimulatorFidelity
from aieval.core import Conversation, ConversationOutcome, Turn
from aieval.report import (
    build_report,
    render_html,
    render_json,
    render_markdown,
    render_text,
    report_schema,
)
from aieval.store import Store

HOSTILE = "<script>alert('x')</script>"


@pytest.fixture
def store(store_location: str) -> Iterator[Store]:
    with Store(store_location) as opened:
        yield opened


def _record(scenario: str, turns: int, outcome: ConversationOutcome) -> dict[str, Any]:
    said = tuple(
        Turn("user" if i % 2 == 0 else "assistant", f"turn {i + 1}", "live") for i in range(turns)
    )
    return Conversation(scenario, 0, said, outcome).to_dict()


def _sample(i: int, extra: dict[str, Any], passed: bool = True) -> SampleRecord:
    return SampleRecord(
        id=f"s{i}",
        index=i,
        input="scenario",
        prediction="answer",
        passed=passed,
        scores={"goal_reached": ScoreRecord(1.0 if passed else 0.0)},
        extra=extra,
    )


def _conversation_run(store: Store) -> str:
    invalid = SimulatorFidelity((FidelityFlag("goal_leak", 3, "repeated the goal's words"),))
    invalid_extra = {
        "conversation": _record("leaky", 4, ConversationOutcome("user_done", True)),
        "fidelity": invalid.to_dict(),
    }
    miss = f"scenario {HOSTILE!r}, turn 6: no recorded turn"
    records = [
        ("track", 4, ConversationOutcome("user_done", True)),
        ("refund", 6, ConversationOutcome("goal_reached", True)),
        ("slow", 10, ConversationOutcome("max_turns", False)),
        (HOSTILE, 5, ConversationOutcome("failed", False, miss, "ReplayMissError")),
    ]
    samples = [
        _sample(i, {"conversation": _record(*record)}, i < 2) for i, record in enumerate(records)
    ]
    samples.append(_sample(4, invalid_extra, False))
    samples.append(_sample(5, {"conversation": {"scenario_id": "broken", "turns": "x"}}, False))
    return store_run(store, samples)


def test_every_format_shows_the_conversations_section(store: Store) -> None:
    report = build_report(store, _conversation_run(store), n_resamples=200)
    section = report.to_dict()["conversations"]
    assert {k: section[k] for k in ("conversations", "completed", "turn_limit", "failed")} == {
        "conversations": 6, "completed": 2, "turn_limit": 1, "failed": 1,
    }  # fmt: skip
    assert (section["invalid"], section["unreadable"]) == (1, 1)
    assert section["stop_reasons"] == {
        "failed": 1, "goal_reached": 1, "max_turns": 1, "user_done": 2,
    }  # fmt: skip
    assert section["turns"] == {"mean": 29 / 5, "max": 10}
    issues = {i["outcome"]: i for i in section["issues"]}
    assert (issues["failed"]["scenario_id"], issues["failed"]["turn"]) == (HOSTILE, 6)
    assert (issues["invalid"]["scenario_id"], issues["invalid"]["turn"]) == ("leaky", 3)
    assert issues["unreadable"]["scenario_id"] == "broken"
    assert "scenario 'broken': epoch" in issues["unreadable"]["detail"]
    jsonschema.Draft202012Validator(report_schema()).validate(json.loads(render_json(report)))

    text = render_text(report, width=200)
    assert "Conversations · 6 conversations: completed 2, turn limit 1, failed 1" in text
    assert "invalid (simulated user) 1" in text and "turns per conversation: mean 5.8" in text
    assert "ReplayMissError" in text and "goal_leak at turn 3" in text
    markdown = render_markdown(report)
    assert "**Conversations** · 6 conversations" in markdown and "| leaky | 0 | 3 |" in markdown
    html = render_html(report)
    assert "<h2>Conversations</h2>" in html and "<code>leaky</code>" in html
    assert HOSTILE not in html and "&lt;script&gt;" in html


def test_a_run_without_conversations_has_no_section(store: Store) -> None:
    run_id = store_run(store, [_sample(i, {"note": "plain"}) for i in range(3)])
    report = build_report(store, run_id, n_resamples=200)
    assert "conversations" not in report.to_dict()
    assert "Conversations" not in render_text(report) + render_markdown(report)
    assert "Conversations" not in render_html(report)
