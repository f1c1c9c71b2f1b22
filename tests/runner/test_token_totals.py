"""A run's token totals are unknown while a model call did not report its usage, never a
partial sum that reads as complete: ``null`` in JSON with the count of unreported calls, and
``at least N (k of M calls unreported)`` in text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval._usage_figures import TokenTotal, format_tokens


def _silent_on_q1(server: OpenAIServer) -> None:
    """Replies with usage (10 in, 2 out), but none at all to the prompt ``q1``."""

    def reply(body: Any, behaviour: Reply) -> dict[str, Any]:
        data = OpenAIServer._openai_reply(server, body, behaviour)
        if body["messages"][-1]["content"] == "q1":
            del data["usage"]
        return data

    server.responder = lambda body: Reply("a", usage=(10, 2))
    server._openai_reply = reply  # type: ignore[method-assign]


def test_a_run_where_one_call_reports_no_usage_has_unknown_token_totals(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    _silent_on_q1(openai_server)
    rows = [{"id": f"r{i}", "prompt": f"q{i}", "expected": "a"} for i in range(3)]
    result = run(
        name="partial", dataset=rows, scorers=["exact_match"], provider="openai-compatible",
        model="m", base_url=openai_server.base_url, store=tmp_path / "aieval.db",
    )  # fmt: skip
    summary = result.summary
    assert summary.input_tokens is None and summary.output_tokens is None
    target = summary.tokens.to_dict()["target"]
    assert (target["input"], target["output"], target["total"]) == (None, None, None)
    assert target["at_least"] == {"input": 20, "output": 4, "total": 24}
    assert (target["calls"], target["unreported_calls"]) == (3, 1)
    assert summary.tokens.to_dict()["unreported_calls"] == 1
    line = "tokens in/out target at least 20/4 (1 of 3 calls unreported)"
    assert line in format_tokens(summary.tokens.to_dict())
    # `aieval show` prints it so too (from the stored summary)
    env = {**os.environ, "COLUMNS": "400"}
    shown = subprocess.run(
        [sys.executable, "-m", "aieval", "show", "partial", "--db", str(tmp_path / "aieval.db")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert line in shown.stdout, shown.stdout + shown.stderr


def test_a_run_where_every_call_reports_keeps_its_plain_totals(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = lambda body: Reply("a", usage=(10, 2))
    result = run(
        name="full", dataset=[{"prompt": f"q{i}", "expected": "a"} for i in range(3)],
        scorers=["exact_match"], provider="openai-compatible", model="m",
        base_url=openai_server.base_url, store=False,
    )  # fmt: skip
    assert (result.summary.input_tokens, result.summary.output_tokens) == (30, 6)
    assert result.summary.tokens.to_dict()["target"] == {"input": 30, "output": 6, "total": 36}


@pytest.mark.parametrize(
    ("calls", "text"),
    [
        pytest.param([(5, 1), (7, 2)], "12/3", id="all-reported"),
        pytest.param([(5, 1), (None, 2)], "at least 5/3 (1 of 2 calls unreported)", id="some"),
        pytest.param([(None, None)], "unknown (1 of 1 calls unreported)", id="none"),
    ],
)
def test_a_token_total_reads_back_as_written(
    calls: list[tuple[int | None, int | None]], text: str
) -> None:
    total = TokenTotal()
    for i, o in calls:
        total.add_call(i, o)
    assert total.text() == text
    again = TokenTotal.from_dict(total.to_dict())
    assert again.text() == text and again.complete == total.complete


def test_a_recorded_sample_with_a_call_without_usage_has_unknown_tokens(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "prompt": "q", "prediction": "x", "recorded_calls": [
            {"model": "m", "input_tokens": 10, "output_tokens": 2}, {"model": "grader"}]},
        {"id": "b", "prompt": "q", "prediction": "x", "recorded_calls": [
            {"model": "m", "input_tokens": 5, "output_tokens": 1}]},
    ]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run(name="rec", dataset=path, scorers=["exact_match"], store=tmp_path / "r.db")
    samples = {s.id: s for s in result.samples}
    # the sample's own figures: unknown, not the 10/2 of the call that reported
    assert (samples["a"].input_tokens, samples["a"].output_tokens) == (None, None)
    assert (samples["b"].input_tokens, samples["b"].output_tokens) == (5, 1)
    target = result.summary.tokens.to_dict()["target"]
    assert target["at_least"] == {"input": 15, "output": 3, "total": 18}
    assert (target["calls"], target["unreported_calls"]) == (3, 1)
