"""POST /api/evaluations refuses bad bodies synchronously with 422 and readable reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.server import rows_body


def jsonl(path: Path, n: int = 2) -> Path:
    path.write_text(
        "".join(f'{{"id": "x{i}", "prompt": "q", "expected": "a", "prediction": "a"}}\n'
                for i in range(n)),
        encoding="utf-8",
    )  # fmt: skip
    return path


async def refused(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/api/evaluations", json=body)
    assert response.status_code == 422, response.text
    data: dict[str, Any] = response.json()
    assert set(data) == {"message", "reasons", "missing_inputs"}
    assert data["reasons"] and all(isinstance(r, str) for r in data["reasons"])
    # nothing was started or stored
    assert (await client.get("/api/runs")).json()["total"] == 0
    return data


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        pytest.param({"settings": {"concurrency": "many"}}, "settings.concurrency", id="type"),
        pytest.param({"settings": {"retries": 99}}, "settings.retries", id="range"),
        pytest.param({"name": ""}, "name", id="empty-name"),
        pytest.param({"dataset": 5}, "dataset", id="dataset-type"),
        pytest.param({"colour": "blue"}, "colour", id="unknown-field"),
        pytest.param({"enforce_hard_gates": "sometimes"}, "enforce_hard_gates", id="bool"),
        pytest.param({"base_dir": "/"}, "base_dir", id="base-dir"),
        pytest.param({"settings": {"executor": "ray"}}, "settings.executor", id="executor"),
        pytest.param({"settings": {"min": {"exact_match": 2}}}, "settings.min", id="minimum"),
        pytest.param(
            {"settings": {"executor": "ray", "ray_address": "10.0.0.1:6379"}},
            "settings.executor",
            id="ray-address",
        ),
    ],
)
async def test_invalid_body_names_each_field(
    client: httpx.AsyncClient, patch: dict[str, Any], field: str
) -> None:
    data = await refused(client, {**rows_body(2), **patch})
    assert any(r.split(":")[0].startswith(field) for r in data["reasons"]), data["reasons"]
    assert data["missing_inputs"] == []


async def test_unknown_scorer(client: httpx.AsyncClient) -> None:
    data = await refused(client, rows_body(2, scorers=["no_such_scorer"]))
    assert "no_such_scorer" in data["message"] and "exact_match" in data["message"]


async def test_unknown_grader(client: httpx.AsyncClient) -> None:
    data = await refused(client, {**rows_body(2), "grader": "no_such_grader"})
    assert data["message"].startswith("grader: no grader named 'no_such_grader'")
    assert "installed: threshold" in data["message"]


async def test_unknown_profile(client: httpx.AsyncClient) -> None:
    body = {"name": "w", "dataset": "workflows/code_review_runs", "profile": "Z9"}
    data = await refused(client, body)
    assert data["message"].startswith("unknown profile 'Z9'")  # names the field
    assert "A, B, C, D" in data["message"] and data["reasons"] == [data["message"]]


async def test_dataset_missing_a_workflow_input_lists_it(client: httpx.AsyncClient) -> None:
    rows = [
        {"id": "a", "input": {"language": "python"}, "run": {"workflow_id": "a"}},
        {"id": "b", "input": {"code_file": "b.py"}, "run": {"workflow_id": "b"}},
    ]
    body = {"name": "w", "dataset": {"rows": rows}, "workflow": "workflows/code_review.yaml"}
    data = await refused(client, body)
    assert data["missing_inputs"] == ["code_file"]
    assert "code_file" in data["message"] and "a" in data["reasons"][0]


async def test_missing_workflow_file(client: httpx.AsyncClient) -> None:
    body = {"name": "w", "dataset": "workflows/code_review_runs", "workflow": "workflows/no.yaml"}
    data = await refused(client, body)
    assert "workflow" in data["message"] and "no.yaml" in data["message"]


@pytest.mark.parametrize(
    "field",
    [pytest.param("dataset", id="dataset"), pytest.param("workflow", id="workflow")],
)
async def test_dotdot_is_refused(client: httpx.AsyncClient, root: Path, field: str) -> None:
    jsonl(root.parent / "outside.jsonl")
    body = {**rows_body(2), field: "../outside.jsonl"}
    data = await refused(client, body)
    assert data["message"].startswith(f"{field}:") and "'..'" in data["message"]


async def test_absolute_path_outside_the_roots(client: httpx.AsyncClient, root: Path) -> None:
    outside = jsonl(root.parent / "outside.jsonl")
    data = await refused(client, {**rows_body(2), "dataset": {"path": str(outside)}})
    assert data["message"].startswith("dataset.path:") and "outside" in data["message"]


async def test_symlink_out_of_a_root(client: httpx.AsyncClient, root: Path) -> None:
    outside = jsonl(root.parent / "secret.jsonl")
    (root / "link.jsonl").symlink_to(outside)
    data = await refused(client, {**rows_body(2), "dataset": "link.jsonl"})
    assert "outside the dataset roots" in data["message"]


async def test_row_run_path_outside_the_roots(client: httpx.AsyncClient, root: Path) -> None:
    rows = [{"id": "a", "input": {"code_file": "a.py"}, "run": "/etc/hostname"}]
    body = {"name": "w", "dataset": {"rows": rows}, "workflow": "workflows/code_review.yaml"}
    data = await refused(client, body)
    assert data["message"].startswith("dataset.rows[0].run:")


async def test_a_path_inside_a_root_is_accepted(client: httpx.AsyncClient, root: Path) -> None:
    jsonl(root / "inside.jsonl", n=3)
    response = await client.post(
        "/api/evaluations", json={**rows_body(2), "dataset": "inside.jsonl"}
    )
    assert response.status_code == 202


async def test_imports_are_refused_unless_allowed(client: httpx.AsyncClient, root: Path) -> None:
    (root / "my_scorers.py").write_text("X = 1\n", encoding="utf-8")
    data = await refused(client, rows_body(2, imports=["my_scorers.py"]))
    assert data["message"].startswith("imports:")


async def test_several_models_in_one_request(client: httpx.AsyncClient) -> None:
    data = await refused(client, rows_body(2, models=["a", "b"]))
    assert data["message"].startswith("models:")


async def test_nothing_to_evaluate(client: httpx.AsyncClient) -> None:
    body = rows_body(2)
    for row in body["dataset"]["rows"]:
        del row["prediction"]
    data = await refused(client, body)
    assert "nothing to evaluate" in data["message"]


async def test_bad_last_event_id(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/evaluations", json=rows_body(1))
    events = response.json()["events_url"]
    bad = await client.get(events, headers={"Last-Event-ID": "seven"})
    assert bad.status_code == 422 and "Last-Event-ID" in bad.json()["message"]


@pytest.mark.parametrize(
    "query",
    [
        pytest.param("limit=0", id="limit-zero"),
        pytest.param("limit=x", id="limit-type"),
        pytest.param("offset=-1", id="offset-negative"),
    ],
)
async def test_bad_query_parameters(client: httpx.AsyncClient, query: str) -> None:
    response = await client.get(f"/api/runs?{query}")
    assert response.status_code == 422
    assert response.json()["reasons"][0].startswith("query.")


async def test_misspelt_key_names_its_path_and_the_nearest_key(client: httpx.AsyncClient) -> None:
    data = await refused(client, {**rows_body(2), "settings": {"concurency": 4}})
    assert "settings.concurency: unknown key; did you mean concurrency?" in data["reasons"]


async def test_a_key_among_the_target_params_is_refused_without_echoing_it(
    client: httpx.AsyncClient,
) -> None:
    key = "sk-live-in-the-body-8c7b6a5f4e3d"
    body = {**rows_body(2), "target": {"provider": "openai-compatible", "model": "m",
                                       "base_url": "http://127.0.0.1:9/v1",
                                       "params": {"temperature": 0, "api_key": key}}}  # fmt: skip
    data = await refused(client, body)
    reason = next(r for r in data["reasons"] if r.startswith("target.params"))
    assert "params.api_key" in reason and "Authorization header" in reason
    assert key not in str(data)


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity"])
async def test_a_non_finite_target_param_is_refused(client: httpx.AsyncClient, word: str) -> None:
    """JSON has no NaN or Infinity, but Python's parser reads them: such a param is refused
    by name instead of being sent as a body that is not JSON."""
    body = {**rows_body(2), "target": {"provider": "openai-compatible", "model": "m",
                                       "base_url": "http://127.0.0.1:9/v1",
                                       "params": {"temperature": "@"}}}  # fmt: skip
    raw = json.dumps(body).replace('"@"', word)
    response = await client.post(
        "/api/evaluations", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    reasons = response.json()["reasons"]
    assert any("params.temperature: " in r and "not a finite number" in r for r in reasons), reasons
    assert (await client.get("/api/runs")).json()["total"] == 0


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        pytest.param(
            '"settings": {"pass_threshold": 0.9, "pass_threshold": 0.1}',
            "settings.pass_threshold",
            id="nested",
        ),
        pytest.param('"name": "a", "name": "b"', "name", id="top-level"),
    ],
)
async def test_a_key_given_twice_in_the_body_is_refused(
    client: httpx.AsyncClient, raw: str, path: str
) -> None:
    """JSON readers keep the last of two equal keys; the server refuses the body instead."""
    rows = json.dumps(rows_body(2)["dataset"])
    text = f'{{"dataset": {rows}, "scorers": ["exact_match"], {raw}}}'
    response = await client.post(
        "/api/evaluations", content=text, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    data = response.json()
    assert data["message"].startswith(f"{path}: duplicate key")
    assert (await client.get("/api/runs")).json()["total"] == 0
