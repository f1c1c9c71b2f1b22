"""Two ``aieval serve --online`` processes on one PostgreSQL store: traces sent by the
OpenTelemetry SDK's exporter to both, a judge call per trace to a loopback model server under a
budget smaller than the traffic, one server killed with -9 in the middle of a judge call while
it holds claims; the other finishes once the claims' lease runs out. Every matched trace ends
with one work row in a final state, one sample per scored trace, each trace judged at most once
per claim, the model calls within the shared budget, and the status adding up."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from tests.support.online import put_rule, scored_rule
from tests.support.openai_server import Hang, OpenAIServer, Reply

from aieval import Store
from aieval.errors import ConfigError
from aieval.online import OnlineWorker, online_status, sampled
from aieval.online._service import LEASE_ENV, OnlineService, lease_from_env

TOKEN = "two-servers-token-0123456789"
RULE = "twoservers"
#: Traces sent (half to each server), the rule's calls per hour, and the judge call of the
#: doomed server during which it is killed. CI sends 500 (about 21 s of CPU); the issue's
#: 5,000 (about 180 s) run with ``AIEVAL_TEST_TWO_SERVERS_TRACES=5000`` (docs/online.md gives
#: both runs' figures).
TRACES = int(os.environ.get("AIEVAL_TEST_TWO_SERVERS_TRACES", "500"))
BUDGET = TRACES * 3 // 5
KILL_AT = max(50, TRACES * 3 // 50)
RATE = 0.9
#: Seconds a claim holds its rows in this test (the servers' ``AIEVAL_ONLINE_LEASE_S``): short,
#: so the test waits little for the killed server's claims, and far above a batch's scoring time
#: on a busy machine, so a live server's rows are never taken over (each trace judged once but
#: the one whose call was in flight at the kill).
LEASE = 30
VERDICT = '{"score": 8, "reason": "ok"}'
_TAG = re.compile(r"tag-(\d{5})x")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _rules(folder: Path, model: OpenAIServer) -> Path:
    judge = {"rubric": "Reward an answer that answers.", "base_url": model.base_url,
             "model": "judge-m", "api_key_env": "JUDGE_KEY", "cache": False}  # fmt: skip
    rule = {"name": RULE, "filter": {"service_name": "shop"}, "sampling_rate": RATE,
            "paused": True, "settle_s": 0, "scoring": {"scorers": [{"llm_judge": judge}]},
            "budget": {"calls_per_hour": BUDGET}}  # fmt: skip
    path = folder / "rules.yaml"
    path.write_text(json.dumps({"rules": [rule]}))  # JSON is YAML
    return path


def _serve(db: str, rules: Path, key: str, folder: Path) -> tuple[subprocess.Popen[str], str]:
    """An ``aieval serve`` process on ``db`` with the rules file, its judge key ``key``."""
    port = _free_port()
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src, "JUDGE_KEY": key, LEASE_ENV: str(LEASE)}
    command = [sys.executable, "-m", "aieval", "serve", "--db", db, "--port", str(port)]
    command += ["--token", TOKEN, "--online", str(rules)]
    log = (folder / f"{key}.log").open("w")
    proc = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=log, text=True)
    log.close()
    return proc, f"http://127.0.0.1:{port}"


def _started(proc: subprocess.Popen[str], url: str) -> None:
    deadline = time.monotonic() + 120  # a busy machine starts it slowly
    while True:
        assert proc.poll() is None, "serve ended at start"
        try:
            httpx.get(f"{url}/api/online/rules", headers=_auth(), timeout=2.0)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def _send(urls: list[str]) -> dict[int, str]:
    """Send TRACES one-span traces with the SDK's batch exporter, alternating between the
    servers; answers each trace's id by its tag."""
    resource = Resource.create({"service.name": "shop"})
    providers = []
    for url in urls:
        provider = TracerProvider(resource=resource)
        exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers=_auth(), timeout=120)
        provider.add_span_processor(
            BatchSpanProcessor(
                exporter, max_queue_size=TRACES, max_export_batch_size=min(500, TRACES)
            )
        )
        providers.append(provider)
    tracers = [p.get_tracer("two-servers") for p in providers]
    ids = {}
    for i in range(TRACES):
        attributes = {"input.value": f"question {i}", "output.value": f"answer tag-{i:05d}x"}
        with tracers[i % len(tracers)].start_as_current_span("app", attributes=attributes) as span:
            ids[i] = f"{span.get_span_context().trace_id:032x}"
    for provider in providers:
        assert provider.force_flush(120_000)
        provider.shutdown()
    return ids


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=60)


@pytest.mark.slow
def test_two_servers_one_killed_score_every_trace_once_within_the_shared_budget(
    pg_url: str, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    killing = threading.Event()
    doomed_calls = [0]

    def respond(body: Any) -> Reply | Hang:
        # the request being answered is the last one recorded (the server's loop is one thread)
        if openai_server.requests[-1].headers.get("Authorization") == "Bearer key-doomed":
            doomed_calls[0] += 1
            if doomed_calls[0] >= KILL_AT:
                killing.set()
                return Hang()  # the doomed server dies with this call in flight
        return Reply(VERDICT, usage=(20, 5))

    openai_server.responder = respond
    rules = _rules(tmp_path, openai_server)
    doomed, doomed_url = _serve(pg_url, rules, "key-doomed", tmp_path)
    other: subprocess.Popen[str] | None = None
    try:
        _started(doomed, doomed_url)
        other, other_url = _serve(pg_url, rules, "key-other", tmp_path)
        _started(other, other_url)
        # every trace is in the store before the rule is resumed: both servers score from then
        tags = _send([doomed_url, other_url])
        answer = httpx.post(f"{other_url}/api/online/rules/{RULE}/resume", headers=_auth())
        assert answer.status_code == 200, answer.text
        if not killing.wait(300):
            counts = online_status(Store(pg_url), time.time()).counts
            raise AssertionError(
                f"the doomed server made {doomed_calls[0]} judge calls of"
                f" {len(openai_server.requests)}: {counts}"
            )
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=60)
        store = Store(pg_url)
        held = [w for w in store.online_work(RULE) if w.state == "claimed"]
        assert held and any(w.claimed_by and f":{doomed.pid}:" in w.claimed_by for w in held)
        # the other server takes the doomed one's claims over once their lease ran out
        deadline = time.monotonic() + 600
        while True:
            counts = online_status(store, time.time()).counts
            if counts.matched == TRACES and counts.pending == counts.claimed == 0:
                break
            assert other.poll() is None, (tmp_path / "key-other.log").read_text()
            assert time.monotonic() < deadline, f"not finished: {counts}"
            time.sleep(0.5)
    finally:
        if doomed.poll() is None:
            doomed.kill()
            doomed.wait(timeout=60)
        if other is not None:
            _stop(other)

    trace_of = {trace_id: i for i, trace_id in tags.items()}
    work = store.online_work(RULE)
    assert sorted(w.trace_id for w in work) == sorted(trace_of)  # each matched trace once
    assert all(w.state in ("scored", "skipped") for w in work)
    states = Counter(w.reason or w.state for w in work)
    kept = {t for t in trace_of if sampled(t, RATE)}
    assert states["sampled_out"] == TRACES - len(kept)
    assert set(states) <= {"scored", "sampled_out", "budget_exhausted"}, states
    scored = {w.trace_id for w in work if w.state == "scored"}
    assert 0 < len(scored) <= BUDGET

    # one sample per scored trace, across the window runs
    runs = {w.run_id for w in work if w.run_id is not None}
    stored = Counter(s.id for run_id in runs for s in store.iter_samples(run_id))
    assert set(stored) == scored and set(stored.values()) == {1}

    # each trace judged at most once per claim of it: a call in flight when its server died is
    # sent again by the claim that takes the trace over
    judged = Counter(
        int(m.group(1))
        for r in openai_server.requests
        if (m := _TAG.search(json.dumps(r.body))) is not None
    )
    assert sum(judged.values()) == len(openai_server.requests)
    attempts = {w.trace_id: w.attempts for w in work}
    assert all(judged[trace_of[t]] <= attempts[t] for t in trace_of)
    assert all(judged[trace_of[t]] >= 1 for t in scored)
    twice = [t for t in trace_of if judged[trace_of[t]] > 1]
    assert len(twice) <= 1  # only the call in flight at the kill

    # the budget is shared: calls are reserved before they are sent, never past the limit
    spend = [r for r in store.online_spend(RULE) if r.period == "hour"]
    assert all(r.calls <= BUDGET for r in spend)
    assert len(openai_server.requests) <= sum(r.calls for r in spend)
    assert sum(r.in_flight for r in spend) <= 1  # the dead server's call, never settled

    # the status adds up
    status = online_status(store, time.time())
    [rule] = status.rules
    assert rule.counts.adds_up and rule.counts.matched == TRACES
    assert rule.counts.scored == len(scored)
    assert rule.counts.skipped_total == TRACES - len(scored)
    assert all(w.counts.adds_up for w in rule.windows)


def test_a_lease_comes_from_the_environment_and_a_bad_one_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(LEASE_ENV, "12.5")
    assert lease_from_env() == 12.5
    assert OnlineService(tmp_path / "runs.db").lease_s == 12.5
    for bad in ("0", "-3", "soon", "nan", "inf"):
        monkeypatch.setenv(LEASE_ENV, bad)
        with pytest.raises(ConfigError, match=LEASE_ENV):
            lease_from_env()
    monkeypatch.delenv(LEASE_ENV)
    assert lease_from_env() == 300.0


def test_a_rule_resumed_over_the_api_is_worked_whatever_its_file_said(tmp_path: Path) -> None:
    # a rules file's `paused: true` is kept in the spec; the paused column (the API) decides
    store = Store(tmp_path / "runs.db")
    put_rule(store, scored_rule("resumed", paused=True), paused=False)
    put_rule(store, scored_rule("held"), paused=True)
    worker = OnlineWorker(store.location, "w")
    assert [r.name for r in worker.active_rules()] == ["resumed"]
    assert {r.name: r.paused for r in worker.rules()} == {"resumed": False, "held": True}
