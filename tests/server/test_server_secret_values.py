"""Configured secrets (keys, header values, URL credentials) never reach the store, the
responses, the event stream or the logs, even when an error body echoes them."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply, Status
from tests.support.server import LiveServer

API_KEY = "sk-live-4f9a0c1e7b2d8a6f3e5c"
HEADER_VALUE = "hdr-token-77c1d2e3f4a5b6c7"
PASSWORD = "pw-9e8d7c6b5a4f3e2d"


def _echoing_error(body: Any) -> Status:
    # a gateway that quotes the request's credentials back, after 480 characters of padding
    # so that a cut at 500 characters would fall inside the key
    padding = "x" * (489 - len("openai-compatible: HTTP 400: "))
    message = f"{padding}{API_KEY} bad header {HEADER_VALUE} for user:{PASSWORD}"
    return Status(400, {"error": {"message": message}})


def _secret_fragments() -> list[str]:
    fragments = [API_KEY, HEADER_VALUE, PASSWORD]
    # also every 11-character prefix: a cut message must not keep the start of a key
    return fragments + [value[:11] for value in fragments]


def _assert_clean(blob: bytes, where: str) -> None:
    for fragment in _secret_fragments():
        assert fragment.encode() not in blob, f"{fragment!r} found in {where}"


@pytest.mark.parametrize(
    "behaviour",
    [pytest.param("error", id="error-body-echoes"), pytest.param("answer", id="answer-echoes")],
)
async def test_configured_secrets_are_never_stored_served_or_logged(
    make_app: Any,
    tmp_path: Path,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
    behaviour: str,
) -> None:
    if behaviour == "error":
        openai_server.responder = _echoing_error
    else:
        # a gateway that repeats the request and the key it was sent back into the answer
        openai_server.responder = lambda body: Reply(f"you sent {body} with key {API_KEY}")
    base = openai_server.base_url.replace("http://", f"http://user:{PASSWORD}@")
    rows = [{"id": f"s{i}", "prompt": f"q{i}", "expected": "a"} for i in range(3)]
    body = {
        "name": "leaky",
        "dataset": {"rows": rows},
        "target": {
            "provider": "openai-compatible",
            "model": "m",
            "base_url": base,
            "params": {
                "temperature": 0,  # deterministic: answers go to the response cache too
                # a key of the request's own goes in a header (params.api_key is refused)
                "headers": {"X-Api-Key": API_KEY, "X-Gateway-Token": HEADER_VALUE},
            },
        },
        "scorers": ["exact_match"],
        "settings": {"cache": True, "retries": 0},
    }
    caplog.set_level(logging.DEBUG)
    blobs: dict[str, bytes] = {}
    with LiveServer(make_app()) as live:
        async with live.client() as client:
            started = await client.post("/api/evaluations", json=body)
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            async with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
                blobs["events"] = await stream.aread()
            for path in (
                "/api/runs",
                f"/api/runs/{run_id}",
                f"/api/runs/{run_id}/samples",
                f"/api/runs/{run_id}/samples/s0",
            ):
                response = await client.get(path)
                assert response.status_code == 200, path
                blobs[path] = response.content
    with sqlite3.connect(tmp_path / "runs.db") as db:
        cached = db.execute("SELECT provider, response FROM response_cache").fetchall()
    assert (len(cached) == 3) is (behaviour == "answer")
    if behaviour == "error":
        assert b"HTTP 400" in blobs[f"/api/runs/{run_id}/samples/s0"], "the error is kept"
    for name in ("runs.db", "runs.db-wal"):
        if (tmp_path / name).exists():
            blobs[name] = (tmp_path / name).read_bytes()
    blobs["logs"] = caplog.text.encode()
    for where, blob in blobs.items():
        _assert_clean(blob, where)
