"""Tasks played with an MCP server's tools by three client models, k = 5 each; the verdict
between two versions of the server (a real fixture server, a scripted model on loopback)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.mcp.scripted_model import MODELS, TASKS
from tests.support.cli import Cli

from aieval.core import TRAJECTORY_KEY, Trajectory
from aieval.mcp import (
    McpServer,
    ModelSpec,
    TaskRuns,
    compare_servers,
    run_tasks,
)
from aieval.store import Store

K = 5
#: three models x 3 tasks x k = 5 over a real server, three times: seconds of CPU
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "runs.db"


@pytest.fixture(scope="module")
def store(db: Path) -> Iterator[Store]:
    with Store(db) as opened:
        yield opened


def models(url: str) -> list[ModelSpec]:
    return [ModelSpec("openai-compatible", m, base_url=url) for m in MODELS]


def play(url: str, model_url: str, db: Path, name: str) -> TaskRuns:
    # one task at a time: the flaky model's misses fall on the same (task, epoch) each run
    return run_tasks(
        McpServer.http(url), TASKS, models(model_url), k=K, name=name, store=db, concurrency=1
    )


@pytest.fixture(scope="module")
def good(good_http: str, model_url: str, db: Path) -> TaskRuns:
    return play(good_http, model_url, db, "good")


def test_each_model_is_one_stored_run_with_pass_at_k_and_pass_hat_k(
    good: TaskRuns, store: Store, in_process: Cli, db: Path
) -> None:
    figures = {m.model: m for m in good.models}
    assert set(figures) == {f"openai-compatible:{m}" for m in MODELS}
    for m in good.models:
        assert (m.tasks, m.k, m.samples, m.errors) == (3, K, 15, 0)
        assert m.pass_at_k is not None and m.pass_hat_k is not None
        assert m.pass_at_k.low <= m.pass_at_k.estimate <= m.pass_at_k.high
    steady = figures["openai-compatible:model-a"]
    assert steady.pass_at_k.estimate == steady.pass_hat_k.estimate == 1.0  # type: ignore[union-attr]
    flaky = figures["openai-compatible:model-c"]
    assert flaky.pass_at_k.estimate == 1.0  # type: ignore[union-attr]
    assert flaky.pass_hat_k.estimate == 0.0  # type: ignore[union-attr]  every task missed once
    assert steady.tools == {"add": (5, 0), "get_time": (5, 0), "get_weather": (5, 0)}
    samples = list(store.iter_samples(steady.run_id))
    assert len(samples) == 15
    trajectory = Trajectory.from_dict(samples[0].scores["tool_use"].metadata[TRAJECTORY_KEY])
    assert [c.name for c in trajectory.called] == ["get_weather"]
    assert trajectory.matched == 1
    shown = in_process("show", steady.run_id, "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "get_weather" in shown.stdout


def test_a_broken_tool_description_blocks_the_new_version(
    good: TaskRuns, broken_http: str, model_url: str, db: Path, store: Store
) -> None:
    broken = play(broken_http, model_url, db, "broken")
    assert all(m.pass_at_k is not None and m.pass_at_k.estimate < 1 for m in broken.models)
    verdict = compare_servers(store, good, broken)
    assert verdict.outcome == "block", verdict.reasons
    assert set(verdict.models.values()) == {"block"}


def test_the_same_server_again_does_not_block(
    good: TaskRuns, good_http: str, model_url: str, db: Path, store: Store
) -> None:
    again = play(good_http, model_url, db, "again")
    verdict = compare_servers(store, good, again)
    assert verdict.outcome != "block"
    assert "block" not in verdict.models.values()


def test_aieval_mcp_run_stores_a_run_and_compare_to_blocks_the_broken_version(
    in_process: Cli, good_http: str, broken_http: str, model_url: str, tmp_path: Path
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8")
    db = str(tmp_path / "cli.db")
    common = ["--model", "openai-compatible:model-a", "--base-url", model_url, "-k", str(K)]
    common += ["--db", db, "--concurrency", "1"]
    first = in_process("mcp", "run", str(tasks), "--url", good_http, "--name", "v1", *common)
    assert first.returncode == 0, first.stderr
    assert "openai-compatible:model-a tool calls: add 5 (0 failed)" in first.stdout
    second = in_process(
        "mcp",
        "run",
        str(tasks),
        "--url",
        broken_http,
        "--name",
        "v2",
        "--compare-to",
        "v1",
        "--json",
        *common,
    )
    assert second.returncode == 1, second.stderr
    body = json.loads(second.stdout)
    assert body["verdict"]["outcome"] == "block"
    assert body["models"][0]["samples"] == 3 * K
    refused = in_process("mcp", "run", str(tasks), "--url", good_http, "--db", db)
    assert refused.returncode == 2
    assert "--model PROVIDER:MODEL" in refused.stderr
