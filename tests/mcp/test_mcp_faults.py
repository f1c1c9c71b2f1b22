"""Injected tool errors and the recovery rate; a server that hangs, dies or answers too much
fails only the sample it happened in (the real fixture server over stdio)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.mcp.scripted_model import TASKS
from tests.mcp.servers import stdio

from aieval.core import TRAJECTORY_KEY, SampleRecord, Trajectory
from aieval.mcp import McpServer, ModelSpec, TaskRuns, inject_errors, run_tasks
from aieval.store import Store

#: a few short runs; the hung and dead server's starts the fixture server over stdio twice
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store(tmp_path_factory.mktemp("faults") / "runs.db") as store:
        yield store


def model(url: str) -> list[ModelSpec]:
    return [ModelSpec("openai-compatible", "model-a", base_url=url)]


def samples(store: Store, runs: TaskRuns) -> dict[str, SampleRecord]:
    return {s.id: s for s in store.iter_samples(runs.models[0].run_id)}


def calls(sample: SampleRecord) -> Trajectory:
    return Trajectory.from_dict(sample.scores["tool_use"].metadata[TRAJECTORY_KEY])


def test_failed_tool_results_are_injected_and_the_model_recovers(
    model_url: str, db: Store, good_http: str
) -> None:
    injection = inject_errors(rate=0.5, mode="fail", seed=3)
    server = McpServer.http(good_http)
    runs = run_tasks(server, TASKS, model(model_url), k=2, store=db, inject=injection)
    figures = runs.models[0]
    assert figures.injected > 0
    assert 0 < figures.recovered <= figures.with_tool_errors
    assert figures.recovery_rate == figures.recovered / figures.with_tool_errors
    hit = [s for s in samples(db, runs).values() if s.extra["mcp"]["injected"]]
    assert len(hit) == figures.with_tool_errors
    first = calls(hit[0]).called[0]
    assert first.error is not None and "injected failure" in first.error
    # the same seed hits the same calls in another run (two server versions pair like this)
    again = run_tasks(server, TASKS, model(model_url), k=2, store=db, inject=injection)
    assert again.models[0].injected == figures.injected


def test_a_corrupted_result_is_recorded_and_fails_the_answer(
    model_url: str, db: Store, good_http: str
) -> None:
    injection = inject_errors(rate=1.0, mode="corrupt", tools=["get_weather"])
    server = McpServer.http(good_http)
    runs = run_tasks(server, TASKS, model(model_url), k=1, store=db, inject=injection)
    by_id = samples(db, runs)
    weather = by_id["weather@1"]
    assert calls(weather).called[0].error == "injected: corrupted result"
    assert weather.passed is False
    assert "sunny" not in (weather.prediction or "")
    assert by_id["time@1"].passed and by_id["sum@1"].passed
    assert (runs.models[0].with_tool_errors, runs.models[0].recovered) == (1, 0)


def test_a_hung_or_dead_server_fails_that_sample_only(model_url: str, db: Store) -> None:
    tasks = [
        {"id": "hang", "prompt": "CALL hang", "answer_contains": "late"},
        {"id": "die", "prompt": "CALL die", "answer_contains": "never"},
        TASKS[0],
        {"id": "big", "prompt": 'CALL big {"n": 5000}', "answer_contains": "over the limit"},
    ]
    server = stdio(call_timeout=1.0, max_result_chars=1000)
    runs = run_tasks(server, tasks, model(model_url), k=1, store=db, concurrency=1)
    by_id = samples(db, runs)
    assert (by_id["hang@1"].error or "").startswith("McpError: ")
    assert "within 1 s" in (by_id["hang@1"].error or "")
    assert (by_id["die@1"].error or "").startswith("McpError: ")
    # the next sample connects again and passes
    assert by_id["weather@1"].error is None and by_id["weather@1"].passed
    big = by_id["big@1"]
    assert big.error is None and big.passed  # an answer over the cap is the tool's error
    assert "over the limit of 1000" in (calls(big).called[0].error or "")
    assert runs.models[0].errors == 2


def test_a_pattern_that_never_ends_errs_its_sample_and_the_run_finishes(
    model_url: str, db: Store, good_http: str
) -> None:
    crafted = "a" * 40 + "!"  # the city echoed in the result: the model's answer ends with it
    tasks = [
        {
            "id": "redos",
            "prompt": f'CALL get_weather {{"city": "{crafted}"}}',
            "answer_matches": "^Here is what I found: sunny, 21 C in (a+)+$",
        },
        *TASKS,
    ]
    runs = run_tasks(McpServer.http(good_http), tasks, model(model_url), k=1, store=db)
    by_id = samples(db, runs)
    redos = by_id["redos@1"]
    error = redos.scores["answer"].error or ""  # the check's error, as a regex check's
    assert error.startswith("answer_matches: ") and "took over 1 s" in error, error
    assert redos.passed is False and redos.scores["answer"].value is None
    assert all(by_id[f"{t['id']}@1"].passed for t in TASKS)
    assert db.get_run(runs.models[0].run_id).status == "completed"


def test_a_listing_over_the_size_cap_is_never_sent_and_fails_each_sample(
    model_url: str, db: Store
) -> None:
    runs = run_tasks(stdio("bloated"), TASKS[:1], model(model_url), k=2, store=db)
    errors = [s.error or "" for s in samples(db, runs).values()]
    assert len(errors) == 2 and runs.models[0].errors == 2
    for error in errors:
        assert error.startswith("McpError: "), error
        assert "tool 'lookup' has a description of 2,200,029 characters" in error
        assert "over the limit of 20,000" in error


def test_a_server_that_never_starts_fails_every_sample_typed_not_the_run(
    model_url: str, db: Store
) -> None:
    server = McpServer.stdio("/nonexistent/mcp-server", connect_timeout=20)
    runs = run_tasks(server, TASKS, model(model_url), k=2, store=db)
    by_id = samples(db, runs)
    assert len(by_id) == 6 and runs.models[0].errors == 6
    assert all((s.error or "").startswith("McpError: ") for s in by_id.values())
    assert all("mcp-server" in (s.error or "") for s in by_id.values())
