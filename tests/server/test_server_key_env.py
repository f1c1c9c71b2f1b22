"""The server refuses ``api_key_env``: a client must not make it send the value of a variable
of its environment to an endpoint the client names."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer
from tests.support.server import LiveServer, rows_body

SECRET = "a-server-only-secret-7d6c5b4a"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        pytest.param(
            {"target": {"provider": "openai-compatible", "model": "m",
                        "api_key_env": "SRV_SECRET"}},
            "target.api_key_env",
            id="target",
        ),
        pytest.param(
            {"scorers": ["exact_match", {"llm_judge": {"rubric": "r", "model": "j",
                                                       "api_key_env": "SRV_SECRET"}}]},
            "scorers[1].llm_judge.api_key_env",
            id="judge",
        ),
    ],
)  # fmt: skip
async def test_api_key_env_is_refused_and_nothing_is_called(
    live: LiveServer,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    patch: dict[str, Any],
    field: str,
) -> None:
    monkeypatch.setenv("SRV_SECRET", SECRET)
    body = {**rows_body(2), **patch}
    if "target" in patch:
        body["target"] = {**patch["target"], "base_url": openai_server.base_url}
        body["dataset"] = {"rows": [{"id": "r0", "prompt": "q", "expected": "a"}]}
    else:
        body["scorers"][1]["llm_judge"]["base_url"] = openai_server.base_url
    async with live.client() as client:
        response = await client.post("/api/evaluations", json=body)
        assert response.status_code == 422, response.text
        assert f"{field}: the server does not read its environment variables" in response.text
        assert (await client.get("/api/runs")).json()["total"] == 0
    assert SECRET not in response.text
    assert openai_server.requests == []
