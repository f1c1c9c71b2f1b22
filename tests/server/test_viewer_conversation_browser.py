"""The sample page of a conversation (real Chromium, real uvicorn) shows its transcript: each
turn's role and source, tool calls with arguments and results, the stop reason, the failure,
the branch turn and the simulated user's fidelity flags, all as text (HTML in a turn stays
text); a malformed record shows an error naming the field; the API sends the record
validated."""

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
from aieval.core import (  # noqa: E402
    INVALID,
    Conversation,
    ConversationOutcome,
    Reason,
    ToolCall,
    Turn,
    Verdict,
)
from aieval.store import Store  # noqa: E402

HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><script>window.hacked=1</script>"
ARGUMENTS = '{"order_id": "<b>42</b>"}'


def _conversation() -> Conversation:
    call = ToolCall("c1", "lookup_order", ARGUMENTS, result="shipped <i>today</i>")
    turns = (
        Turn("user", "Where is my order?", "scripted"),
        Turn("assistant", "", "replayed", tool_calls=(call,)),
        Turn("tool", "shipped <i>today</i>", "replayed", tool_call_id="c1"),
        Turn("assistant", "It shipped today.", "live", latency_s=0.25),
        Turn("user", HOSTILE, "simulated"),
        Turn("assistant", "I cannot help with that.", "live"),
    )
    outcome = ConversationOutcome(
        "failed", False, "scenario 'track', turn 7: the simulated user failed", "ProviderError"
    )
    return Conversation("track", 0, turns, outcome, branched_at=4)


@dataclass(frozen=True)
class Served:
    url: str
    run_id: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("conversation-viewer")
    db = str(root / "runs.db")
    flags = SimulatorFidelity((FidelityFlag("persona_break", 5, "said " + HOSTILE),))
    record = {"conversation": _conversation().to_dict(), "fidelity": flags.to_dict()}
    # the stored record may carry fields the record does not have: the page never gets them
    record["conversation"]["turns"][0]["html"] = HOSTILE
    samples = [
        SampleRecord(id="conv", index=0, input="track", prediction="I cannot help with that.",
                     passed=False, scores={"goal": ScoreRecord(0.0)}, extra=record),
        SampleRecord(id="broken", index=1, input="x", prediction="", passed=False,
                     extra={"conversation": {"scenario_id": "b", "epoch": 0, "turns": [
                         {"role": "robot", "content": "", "source": "live"}]}}),
        # a conversation whose simulated user failed fidelity: neither passed nor failed
        SampleRecord(id="invalid", index=2, input="track", prediction="It shipped today.",
                     passed=None, extra=record, verdict=Verdict(
                         False, (Reason(INVALID, "simulated user", "persona_break at turn 5"),))),
    ]  # fmt: skip
    with Store(db) as store:
        run_id = store_run(store, samples)
    app = server_api.create_app(db, server_api.ServerSettings(dataset_roots=(root,)))
    try:
        with LiveServer(app) as live:
            yield Served(live.url, run_id)
    finally:
        app.state.manager.shutdown()


def test_the_api_sends_the_record_validated(served: Served) -> None:
    url = f"{served.url}/api/runs/{served.run_id}/samples"
    conversation = httpx.get(f"{url}/conv").json()["conversation"]
    assert conversation == {**_conversation().to_dict(), "fidelity": conversation["fidelity"]}
    assert conversation["fidelity"]["flags"][0]["kind"] == "persona_break"
    broken = httpx.get(f"{url}/broken").json()["conversation"]
    assert broken == {
        "error": "the stored conversation is malformed: scenario 'b', turn 1.role: 'robot' is"
        " not one of assistant, tool, user"
    }


def test_the_sample_page_shows_the_transcript(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.run_id}/samples/conv")
    page.wait_for_selector("#transcript")
    turns = page.locator("#transcript > li.turn")
    assert turns.count() == 6
    assert [turns.nth(i).get_attribute("data-source") for i in range(6)] == [
        "scripted", "replayed", "replayed", "live", "simulated", "live",
    ]  # fmt: skip
    assert turns.nth(0).locator(".turn-role").inner_text() == "user"
    # the tool call with its arguments verbatim and its result; the tool turn answers it
    assert turns.nth(1).locator(".tool-call code").inner_text() == f"lookup_order({ARGUMENTS})"
    assert turns.nth(1).locator(".tool-result").inner_text() == "shipped <i>today</i>"
    assert "result of call c1" in turns.nth(2).inner_text()
    # the branch turn is marked, and only it
    assert page.locator("#transcript li.branched").get_attribute("data-turn") == "4"
    assert "branch: first changed answer" in turns.nth(3).inner_text()
    # hostile text is shown as text: no element made of it, no script run
    assert turns.nth(4).locator(".turn-content").inner_text() == HOSTILE
    assert page.locator("#transcript img, #transcript script, #transcript b").count() == 0
    assert page.evaluate("window.hacked") is None and page.title() != "pwned"
    facts = page.locator("#conversation-facts").inner_text()
    assert "track" in facts and "failed" in facts and "turn 4" in facts and "invalid" in facts
    alerts = page.locator("[role=alert]").all_inner_texts()
    assert any("ProviderError" in a and "turn 7" in a for a in alerts)
    flags = page.locator("#fidelity-flags").inner_text()
    assert "persona_break at turn 5" in flags and HOSTILE in flags


def test_a_malformed_record_shows_its_error(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.run_id}/samples/broken")
    page.wait_for_selector("#s-conversation")
    alert = page.locator("#s-conversation + [role=alert], section [role=alert]").first
    assert "turn 1.role: 'robot'" in alert.inner_text()
    assert page.locator("#transcript").count() == 0


def test_an_invalid_conversation_is_shown_invalid_not_failed(page: Any, served: Served) -> None:
    page.goto(f"{served.url}/#/runs/{served.run_id}/samples/invalid")
    page.wait_for_selector("#transcript")
    result = page.locator("dl.facts dt:text-is('Result') + dd").inner_text()
    assert result == "invalid"
    page.goto(f"{served.url}/#/runs/{served.run_id}/samples/conv")
    page.wait_for_selector("#transcript")
    assert page.locator("dl.facts dt:text-is('Result') + dd").inner_text() == "failed"
    # the run's sample table: the row says invalid (not n/a), and a filter lists only those
    page.goto(f"{served.url}/#/runs/{served.run_id}")
    row = page.locator("#run-samples tr[data-sample='invalid']")
    row.wait_for()
    assert row.locator(".badge.warn").inner_text() == "invalid"
    page.click("button[data-filter=invalid]")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#run-samples tbody tr[data-sample]')]"
        ".map(r => r.dataset.sample).join() === 'invalid'"
    )


def test_the_run_page_says_how_many_were_left_out_of_the_pass_rate(
    page: Any, served: Served
) -> None:
    page.goto(f"{served.url}/#/runs/{served.run_id}")
    page.wait_for_selector("#kpis")
    rate = page.locator("#kpis .kpi").filter(has_text="Pass rate").inner_text()
    assert "0/2" in rate and "1 invalid (simulated user), left out of the pass rate" in rate
