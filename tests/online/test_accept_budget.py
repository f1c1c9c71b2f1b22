"""Issue 44's acceptance: a hard budget, through ``aieval serve --online``. A rule's judge
against a loopback model server with ``calls_per_hour: N``: the model server sees exactly N
calls, one at a time; the traces past the budget are ``budget_exhausted`` in ``aieval online
status --json``; with the budget raised (the rules file changed, the server restarted), a
backfill asked over the API scores them, each once. A token limit is overshot by at most the
one call in flight."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.online.accept_support import AUTH, export_traces, served, status, status_adds_up
from tests.support.cli import Cli
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store

RULES = """\
rules:
  - name: judged
    filter: {{service_name: shop}}
    settle_s: 0
    scoring:
      scorers:
        - llm_judge: {{rubric: "Reward a tool call that answers.", base_url: "{url}",
                      model: judge-m, cache: false}}
    budget: {{calls_per_hour: {calls}}}
"""


def _verdict(body: dict[str, Any]) -> Reply:
    return Reply('{"score": 8, "reason": "answered"}', usage=(40, 10))


def _cli_status(in_process: Cli, db: Path) -> dict[str, int]:
    done = in_process("online", "status", "--db", str(db), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    (rule,) = json.loads(done.stdout)["rules"]
    counts = rule["counts"]
    assert counts["matched"] == counts["scored"] + counts["skipped_total"] + counts["pending"]
    return {"scored": counts["scored"], **counts["skipped"]}


def test_a_budget_of_n_calls_is_never_exceeded_and_a_backfill_scores_the_rest_once(
    in_process: Cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    openai_server: OpenAIServer,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    openai_server.responder = _verdict
    since = time.time() - 1
    limited = RULES.format(url=openai_server.base_url, calls=4)
    with served(in_process, monkeypatch, tmp_path, limited) as server:
        ids = export_traces(server.url, 10)
        server.cycle()
        assert len(openai_server.requests) == 4  # the budget, not one call more
        assert openai_server.max_in_flight == 1
        assert status_adds_up(status(server.url))["judged"] == {
            "scored": 4,
            "budget_exhausted": 6,
        }
    shown = _cli_status(in_process, server.db)
    assert (shown["scored"], shown["budget_exhausted"], shown["error"]) == (4, 6, 0)
    store = Store(server.db)
    exhausted = {w.trace_id for w in store.online_work("judged") if w.state == "skipped"}
    assert len(exhausted) == 6

    raised = RULES.format(url=openai_server.base_url, calls=100)
    with served(in_process, monkeypatch, tmp_path, raised) as server:
        asked = httpx.post(
            f"{server.url}/api/online/rules/judged/backfill",
            json={"since": since},
            headers=AUTH,
            timeout=60,
        )
        assert asked.status_code == 202, asked.text
        server.cycle()
        assert status_adds_up(status(server.url))["judged"] == {"scored": 10}
    # the backfill sent one call per trace skipped, and scored each of them once
    assert len(openai_server.requests) == 10
    work = store.online_work("judged")
    assert sorted(w.trace_id for w in work) == sorted(ids)
    assert all(w.state == "scored" for w in work)
    runs = {w.run_id for w in work if w.run_id is not None}
    samples = [s.id for run_id in runs for s in store.iter_samples(run_id)]
    assert sorted(samples) == sorted(ids)
    assert _cli_status(in_process, server.db)["budget_exhausted"] == 0


def test_a_token_budget_overshoots_by_at_most_the_one_call_in_flight(
    in_process: Cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    openai_server: OpenAIServer,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    openai_server.responder = _verdict  # 50 tokens a call
    rules = RULES.replace("calls_per_hour: {calls}", "tokens_per_hour: 120")
    with served(in_process, monkeypatch, tmp_path, rules.format(url=openai_server.base_url)) as (
        server
    ):
        export_traces(server.url, 8)
        server.cycle()
        final = status_adds_up(status(server.url))["judged"]
        (rule,) = status(server.url)["rules"]
    # a call starts only while the tokens spent are below the limit: 0, 50, 100, then none
    assert len(openai_server.requests) == 3 and openai_server.max_in_flight == 1
    hour = next(s for s in rule["spend"] if s["period"] == "hour")
    assert hour["tokens"] == 150  # over the limit by the last call's 50 tokens at most
    assert hour["exhausted"] is True
    assert final == {"scored": 3, "budget_exhausted": 5}
