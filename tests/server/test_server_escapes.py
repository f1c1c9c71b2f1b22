"""Files outside the dataset roots are never read, and refusals reveal nothing about them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.server import EXAMPLES

CONTENT_MARK = "TOP-SECRET-CONTENT-42"


async def refusal(client: httpx.AsyncClient, body: dict[str, Any], root: Path) -> str:
    """The 422's message, checked to name neither the server's paths nor outside content."""
    response = await client.post("/api/evaluations", json=body)
    assert response.status_code == 422, response.text
    data = response.json()
    assert data["reasons"] == [data["message"]], "one reason"
    text = response.text
    assert CONTENT_MARK not in text
    # the server's roots are never named (a path the caller sent may be echoed back)
    assert str(root) not in text and str(root.resolve()) not in text
    assert (await client.get("/api/runs")).json()["total"] == 0
    message: str = data["message"]
    return message


def outside_file(root: Path, name: str, payload: Any) -> Path:
    path = root.parent / "outside" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def inline_workflow_body(schema_ref: str) -> dict[str, Any]:
    workflow = {"name": "inline", "inputs": {"q": {"type": "string"}}, "output_schema": schema_ref}
    rows = [{"id": "a", "input": {"q": "x"}, "run": {"workflow_id": "a", "outputs": {}}}]
    return {"name": "w", "dataset": {"rows": rows}, "workflow": workflow}


def run_log_folder(root: Path) -> Path:
    folder = root / "runs"
    shutil.copytree(EXAMPLES / "code_review_runs", folder)
    return folder


async def test_a_symlinked_folder_member_leading_outside_is_refused(
    client: httpx.AsyncClient, root: Path
) -> None:
    folder = run_log_folder(root)
    secret = outside_file(root, "leak.json", {"workflow_id": CONTENT_MARK, "steps": []})
    (folder / "zz-leak.json").symlink_to(secret)
    body = {"name": "w", "dataset": "runs", "workflow": "workflows/code_review.yaml"}
    message = await refusal(client, body, root)
    assert message.startswith("dataset member zz-leak.json:")
    assert "outside the dataset roots" in message


async def test_a_dangling_member_link_gets_the_same_answer(
    client: httpx.AsyncClient, root: Path
) -> None:
    folder = run_log_folder(root)
    outside_file(root, "leak.json", {"x": CONTENT_MARK})
    (folder / "zz-leak.json").symlink_to(root.parent / "outside" / "leak.json")
    body = {"name": "w", "dataset": "runs", "workflow": "workflows/code_review.yaml"}
    existing = await refusal(client, body, root)
    (folder / "zz-leak.json").unlink()
    (folder / "zz-leak.json").symlink_to(root.parent / "outside" / "missing.json")
    missing = await refusal(client, body, root)
    assert existing == missing, "the answer must not tell whether the target exists"


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("absolute", id="absolute-path"),
        pytest.param("link", id="symlink-inside-root"),
        pytest.param("missing", id="missing-file"),
    ],
)
async def test_an_inline_workflow_schema_outside_the_root_is_refused(
    client: httpx.AsyncClient, root: Path, where: str
) -> None:
    schema = outside_file(root, "schema.json", {"type": "object", "title": CONTENT_MARK})
    if where == "absolute":
        ref = str(schema)
    elif where == "link":
        (root / "schema.json").symlink_to(schema)
        ref = "schema.json"
    else:
        ref = str(schema.with_name("nope.json"))
    message = await refusal(client, inline_workflow_body(ref), root)
    assert "output_schema" in message and "is not a file this server may read" in message


async def test_a_schema_inside_the_root_is_read(client: httpx.AsyncClient, root: Path) -> None:
    (root / "schema.json").write_text('{"type": "object"}', encoding="utf-8")
    response = await client.post("/api/evaluations", json=inline_workflow_body("schema.json"))
    assert response.status_code == 202, response.text


async def test_a_workflow_rubric_leading_outside_is_refused(
    client: httpx.AsyncClient, root: Path
) -> None:
    rubric = root.parent / "outside" / "rubric.yaml"
    rubric.parent.mkdir(exist_ok=True)
    rubric.write_text(f"rubric_id: {CONTENT_MARK}\n", encoding="utf-8")
    (root / "rubric.yaml").symlink_to(rubric)
    text = (root / "workflows" / "code_review.yaml").read_text(encoding="utf-8")
    (root / "workflows" / "evil.yaml").write_text(
        text.replace("evaluation:", "evaluation:\n  rubric: ../rubric.yaml", 1), encoding="utf-8"
    )
    body = {"name": "w", "dataset": "workflows/code_review_runs", "workflow": "workflows/evil.yaml"}
    await refusal(client, body, root)


async def test_missing_and_outside_files_get_one_answer(
    client: httpx.AsyncClient, root: Path
) -> None:
    outside = outside_file(root, "data.jsonl", {"id": CONTENT_MARK})
    (root / "a.jsonl").symlink_to(outside)
    (root / "b.jsonl").symlink_to(outside.with_name("gone.jsonl"))
    base = {"name": "q", "scorers": ["exact_match"]}
    first = await refusal(client, {**base, "dataset": "a.jsonl"}, root)
    second = await refusal(client, {**base, "dataset": "b.jsonl"}, root)
    third = await refusal(client, {**base, "dataset": "c.jsonl"}, root)
    assert first.replace("a.jsonl", "X") == second.replace("b.jsonl", "X")
    assert second.replace("b.jsonl", "X") == third.replace("c.jsonl", "X")
