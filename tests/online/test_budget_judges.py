"""A rule's budget through the real path: judges scoring through ``run`` against a loopback
model server, under the gate ``budget_for`` gives. The server sees exactly the calls the budget
allows; a refusal is counted on the gate and recorded on the sample; tokens overshoot by at
most the one call in flight; a cache hit spends nothing; two processes share one budget."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import Hang, OpenAIServer, Reply

from aieval import Store, run
from aieval.errors import BudgetExhausted, ProviderError
from aieval.online import Budget, BudgetGate, OnlineRule, budget_for, hit_budget, spending
from aieval.providers import (
    CachedProvider,
    ChatRequest,
    OpenAIEmbeddings,
    OpenAIProvider,
    ResilientProvider,
    ResponseCache,
    build_provider,
)
from aieval.scorers import llm_judge, scorer

VERDICT = '{"score": 8, "reason": "close enough"}'
ROWS = [{"id": f"t{i}", "prompt": f"question {i}", "prediction": f"answer {i}"} for i in range(6)]


def _verdict(body: dict[str, Any]) -> Reply:
    return Reply(VERDICT, usage=(40, 10))  # 50 tokens a call


def _judge(server: OpenAIServer, **options: Any) -> Any:
    options.setdefault("cache", False)
    return llm_judge("Reward correct answers.", base_url=server.base_url, model="judge-m",
                     **options)  # fmt: skip


def test_a_judge_sampling_n_times_sends_exactly_the_calls_the_budget_allows(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = _verdict
    store = Store(tmp_path / "runs.db")
    rule = OnlineRule("quality", budget=Budget(calls_per_hour=7))
    with budget_for(store, "worker-1")(rule) as gate:
        result = run(name="online", dataset=ROWS, scorers=[_judge(openai_server, samples=3)],
                     store=False, concurrency=6)  # fmt: skip
    # 18 calls wanted, 7 allowed: reserved before each is sent, so exactly 7 reached the server
    assert len(openai_server.requests) == 7 == gate.calls
    assert [r.calls for r in store.online_spend("quality")] == [7, 7]  # the day, the hour
    assert openai_server.max_in_flight == 1  # one call in flight per gate
    # the refusal is counted on the gate, and on every sample it touched
    assert gate.refused >= 1
    hit = [s for s in result.samples if hit_budget(s)]
    whole = [s for s in result.samples if not hit_budget(s)]
    assert len(hit) >= 4 and len(whole) <= 2
    assert all(len(s.calls) == 3 and not any(c.error for c in s.calls) for s in whole)
    message = next(c.error for s in hit for c in s.calls if c.purpose == "budget")
    assert "calls_per_hour limit (7 of 7)" in str(message) and "'quality'" in str(message)


def test_tokens_overshoot_by_at_most_the_one_call_in_flight(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = _verdict
    store = Store(tmp_path / "runs.db")
    rule = OnlineRule("tokens", budget=Budget(tokens_per_hour=120))
    with budget_for(store, "worker-1")(rule) as gate:
        run(name="online", dataset=ROWS, scorers=[_judge(openai_server, samples=2)],
            store=False, concurrency=6)  # fmt: skip
    # a call starts below 120 tokens: at 0, 50 and 100; the third ends at 150 (one call over)
    assert len(openai_server.requests) == 3 and gate.refused >= 1
    hour = next(r for r in store.online_spend("tokens") if r.period == "hour")
    assert (hour.calls, hour.tokens, hour.in_flight) == (3, 150, 0)
    assert gate.tokens == 150


def test_a_cache_hit_spends_nothing(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = _verdict
    cache = ResponseCache(tmp_path / "cache.db")
    judge = _judge(openai_server, cache=cache)
    run(name="first", dataset=ROWS[:2], scorers=[judge], store=False)
    assert len(openai_server.requests) == 2
    store = Store(tmp_path / "runs.db")
    nothing = OnlineRule("cached", budget=Budget(calls_per_day=0))
    with budget_for(store, "worker-1")(nothing) as gate:
        again = run(name="again", dataset=ROWS[:2], scorers=[judge], store=False)
    assert gate.refused == 0 and gate.calls == 0 and len(openai_server.requests) == 2
    assert all(s.scores["llm_judge"].value == 0.8 for s in again.samples)


def test_an_embeddings_request_passes_the_gate_too(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    store = Store(tmp_path / "runs.db")
    gate = BudgetGate(store, OnlineRule("vectors", budget=Budget(calls_per_hour=1)), "w")
    client = OpenAIEmbeddings(openai_server.base_url)

    async def embed_twice() -> None:
        try:
            await client.embed("emb-m", ["first"])
            with pytest.raises(BudgetExhausted, match="calls_per_hour"):
                await client.embed("emb-m", ["second"])
        finally:
            await client.aclose()

    with spending(gate):
        asyncio.run(embed_twice())
    assert openai_server.paths() == ["/v1/embeddings"] and gate.refused == 1


def test_a_refusal_is_counted_even_when_the_caller_swallows_it(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    gate = BudgetGate(
        Store(tmp_path / "runs.db"), OnlineRule("r", budget=Budget(calls_per_day=0)), "w"
    )
    provider = build_provider("openai-compatible", base_url=openai_server.base_url, cache=False)

    async def swallow() -> str:
        try:
            await provider.generate(
                ChatRequest(model="m", messages=[{"role": "user", "content": "q"}])
            )
        except ProviderError:  # a scorer that turns every failure into a score
            return "swallowed"
        finally:
            await provider.aclose()
        return "answered"

    with spending(gate):
        assert asyncio.run(swallow()) == "swallowed"
    # refused once (never retried), never sent; the engine reads the count
    assert gate.refused == 1 and openai_server.requests == []


def test_a_sample_whose_scorer_swallowed_the_refusal_is_still_marked(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    provider = build_provider("openai-compatible", base_url=openai_server.base_url, cache=False)

    @scorer(name="forgiving")
    async def forgiving(prediction: str, expected: str) -> float:
        try:
            await provider.generate(
                ChatRequest(model="m", messages=[{"role": "user", "content": prediction}])
            )
        except ProviderError:
            return 1.0  # counts a failed call as a pass: the refusal must not pass as a score
        return 0.5

    store = Store(tmp_path / "runs.db")
    rule = OnlineRule("forgiving", budget=Budget(calls_per_hour=1))
    with budget_for(store, "w")(rule) as gate:
        result = run(name="online", dataset=ROWS[:3], scorers=[forgiving], store=False,
                     concurrency=1)  # fmt: skip
    assert [hit_budget(s) for s in result.samples] == [False, True, True]
    assert gate.refused == 2 and len(openai_server.requests) == 1


def test_a_cancelled_call_is_settled_not_left_in_flight(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    arrived = threading.Event()

    def hang(body: dict[str, Any]) -> Hang:
        arrived.set()
        return Hang()

    openai_server.responder = hang
    store = Store(tmp_path / "runs.db")
    gate = BudgetGate(store, OnlineRule("r", budget=Budget(calls_per_hour=5)), "w")
    provider = build_provider("openai-compatible", base_url=openai_server.base_url, cache=False)

    async def cancel_midway() -> None:
        call = asyncio.ensure_future(
            provider.generate(ChatRequest(model="m", messages=[{"role": "user", "content": "q"}]))
        )
        assert await asyncio.to_thread(arrived.wait, 30)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await provider.aclose()

    with spending(gate):
        asyncio.run(cancel_midway())
    hour = next(r for r in store.online_spend("r") if r.period == "hour")
    assert (hour.calls, hour.in_flight) == (1, 0)


def test_no_gate_no_ledger(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = _verdict
    run(name="plain", dataset=ROWS[:2], scorers=[_judge(openai_server)], store=False)
    assert len(openai_server.requests) == 2
    assert Store(tmp_path / "runs.db").online_spend() == []


_SCORER = textwrap.dedent(
    """
    import json, sys
    from aieval import Store, run
    from aieval.online import Budget, OnlineRule, budget_for
    from aieval.scorers import llm_judge, scorer
    store_path, base_url, worker = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [{"id": f"{worker}-{i}", "prompt": f"q {i}", "prediction": "a"} for i in range(8)]
    judge = llm_judge("Reward correct answers.", base_url=base_url, model="judge-m",
                      cache=False)
    rule = OnlineRule("shared", budget=Budget(calls_per_hour=5))
    print("ready", flush=True)
    sys.stdin.readline()  # both start together
    with budget_for(Store(store_path), worker)(rule) as gate:
        run(name="online", dataset=rows, scorers=[judge], store=False, concurrency=4)
    print(json.dumps([gate.calls, gate.refused]), flush=True)
    """
)


@pytest.mark.slow
def test_two_processes_sharing_a_store_share_the_budget(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = _verdict
    store_path = str(tmp_path / "runs.db")
    Store(store_path).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SCORER, store_path, openai_server.base_url, worker],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            cwd=tmp_path,
        )
        for worker in ("a", "b")
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    done = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    # 16 calls wanted, 5 allowed between them: each process fell short, so each was refused
    assert len(openai_server.requests) == 5 == sum(calls for calls, _ in done)
    assert all(refused >= 1 for _, refused in done)


def test_a_cost_limit_whose_provider_reports_no_cost_is_warned_of(
    openai_server: OpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.responder = _verdict  # usage without a cost
    store = Store(tmp_path / "runs.db")
    rule = OnlineRule("priced", budget=Budget(cost_per_hour=0.01))
    with caplog.at_level("WARNING", "aieval.online"), budget_for(store, "w")(rule):
        run(name="online", dataset=ROWS[:3], scorers=[_judge(openai_server)], store=False)
    warned = [r for r in caplog.records if "reports no cost" in r.getMessage()]
    assert len(warned) == 1 and "'priced'" in warned[0].getMessage()
    assert {(r.calls, r.cost) for r in store.online_spend("priced")} == {(3, 0.0)}


def test_a_judge_given_a_cached_bare_provider_still_passes_the_gate(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    # build_provider keeps a ready CachedProvider as it is: with no retry layer inside, its
    # misses (and its non-deterministic calls) must pass the gate themselves
    openai_server.responder = _verdict
    bare = CachedProvider(OpenAIProvider(openai_server.base_url), tmp_path / "cache.db")
    judge = llm_judge("Reward correct answers.", provider=bare, model="judge-m", samples=2,
                      temperature=0.7)  # fmt: skip
    store = Store(tmp_path / "runs.db")
    rule = OnlineRule("bare", budget=Budget(calls_per_hour=3))
    with budget_for(store, "w")(rule) as gate:
        run(name="online", dataset=ROWS[:3], scorers=[judge], store=False)
    assert len(openai_server.requests) == 3 == gate.calls and gate.refused >= 1


def test_a_workers_gates_share_one_call_in_flight(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = _verdict
    # answers are held until two calls are in flight (or for 1 s): two would be, unshared
    openai_server.hold_until_in_flight(2, timeout=1.0)
    budget = budget_for(Store(tmp_path / "runs.db"), "worker-1")
    rules = [OnlineRule(name, budget=Budget(calls_per_hour=10)) for name in ("a", "b")]
    gates: list[BudgetGate] = []

    def score(rule: OnlineRule) -> None:
        with budget(rule) as gate:
            run(name=rule.name, dataset=ROWS[:2], scorers=[_judge(openai_server)], store=False)
        gates.append(gate)

    threads = [threading.Thread(target=score, args=(rule,)) for rule in rules]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(g.calls for g in gates) == [2, 2] and len(openai_server.requests) == 4
    assert openai_server.max_in_flight == 1


def test_a_hand_built_stack_of_wrappers_reserves_its_call_once(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    # retries around a cache around a bare provider: both wrappers would gate the one call
    openai_server.responder = _verdict
    store = Store(tmp_path / "runs.db")
    gate = BudgetGate(store, OnlineRule("stack", budget=Budget(calls_per_hour=5)), "w")
    bare = OpenAIProvider(openai_server.base_url)
    stack = ResilientProvider(CachedProvider(bare, tmp_path / "cache.db"))

    async def ask() -> None:
        try:
            message = [{"role": "user", "content": "q"}]
            await asyncio.wait_for(stack.generate(ChatRequest(model="m", messages=message)), 30)
        finally:
            await stack.aclose()

    with spending(gate):
        asyncio.run(ask())
    assert gate.calls == 1 and len(openai_server.requests) == 1
    assert [r.calls for r in store.online_spend("stack")] == [1, 1]
