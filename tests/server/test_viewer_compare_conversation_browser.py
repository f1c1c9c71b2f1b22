"""The compare page's side-by-side view of one conversation (real Chromium, real uvicorn): both
transcripts, the first turn where the candidate did worse marked on both and named above them,
every text shown as text; an invalid conversation is not compared."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.browser import require_chromium

require_chromium()

import httpx  # noqa: E402
from tests.support.reports import store_run  # noqa: E402
from tests.support.server import LiveServer  # noqa: E402

import aieval.server as server_api  # noqa: E402
from aieval._records import SampleRecord, ScoreRecord  # noqa: E402
from aieval.conversations import FidelityFlag, SimulatorFidelity  # noqa: E402
from aieval.core import Conversation, ConversationOutcome, Turn  # noqa: E402
from aieval.store import Store  # noqa: E402

HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><script>window.hacked=1</script>"


def _sample(sample_id: str, first_answer: str, first_value: float, **extra: Any) -> SampleRecord:
    turns = (
        Turn("user", "Where is my order?", "scripted"),
        Turn("assistant", first_answer, "live"),
        Turn("user", "Thanks.", "scripted"),
        Turn("assistant", "Goodbye.", "live"),
    )
    record = Conversation(sample_id, 0, turns, ConversationOutcome("script_end", True))
    per_turn = {"2": first_value, "4": 1.0}
    scores = {
        "polite@min": ScoreRecord(min(first_value, 1.0), metadata={"turns": per_turn}),
        "polite@mean": ScoreRecord((first_value + 1.0) / 2, metadata={"turns": per_turn}),
    }
    return SampleRecord(
        id=sample_id, index=0, input=sample_id, prediction="Goodbye.", passed=first_value == 1.0,
        scores=scores, extra={"conversation": record.to_dict(), **extra},
    )  # fmt: skip


@dataclass(frozen=True)
class Served:
    url: str
    baseline: str
    candidate: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("compare-conversation")
    db = str(root / "runs.db")
    leak = SimulatorFidelity((FidelityFlag("goal_leak", 1, "said the goal"),)).to_dict()
    config = {"conversation": {}}
    with Store(db) as store:
        baseline = store_run(
            store,
            [_sample("track", "It shipped today.", 1.0), _sample("leaky", "Hello.", 1.0)],
            config=config,
        )
        candidate = store_run(
            store,
            [_sample("track", HOSTILE, 0.0), _sample("leaky", "Hello.", 1.0, fidelity=leak)],
            config=config,
        )
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live:
            yield Served(live.url, baseline, candidate)
    finally:
        app.state.manager.shutdown()


def test_the_pair_page_shows_both_transcripts_with_the_first_regressed_turn_marked(
    page: Any, served: Served
) -> None:
    runs = f"baseline={served.baseline}&candidate={served.candidate}"
    page.goto(f"{served.url}/#/compare/samples/track?{runs}")
    page.wait_for_selector("#pair-transcripts")
    named = page.locator("#regressed-turn").inner_text()
    assert "First regressed turn: #2 (exchange 1)" in named and "polite" in named
    for side in ("baseline", "candidate"):
        turns = page.locator(f"#transcript-{side} li.turn")
        assert turns.count() == 4
        marked = page.locator(f"#transcript-{side} li.regressed")
        assert marked.count() == 1 and marked.get_attribute("data-turn") == "2"
        assert "first regressed turn" in marked.inner_text()
    candidate_turn = page.locator("#transcript-candidate li.regressed .turn-content")
    assert candidate_turn.inner_text() == HOSTILE
    # hostile text is shown as text: no element made of it, no script run
    assert page.locator("#pair-transcripts img, #pair-transcripts script").count() == 0
    assert page.evaluate("window.hacked") is None and page.title() != "pwned"


def test_an_invalid_conversation_is_not_compared(served: Served) -> None:
    runs = {"baseline": served.baseline, "candidate": served.candidate}
    leaky = httpx.get(f"{served.url}/api/compare/sample", params={"id": "leaky", **runs}).json()
    assert leaky["regressed_turn"]["turn"] is None
    assert "candidate's conversation is invalid" in leaky["regressed_turn"]["note"]
    track = httpx.get(f"{served.url}/api/compare/sample", params={"id": "track", **runs}).json()
    assert track["regressed_turn"]["turn"]["turn"] == 2
    # and the comparison leaves the invalid one out of the verdict
    compared = httpx.get(f"{served.url}/api/compare", params=runs).json()
    assert compared["conversations"]["unpaired_invalid"] == ["leaky"]
    assert compared["paired"] == 1
