"""Tokens, the Host allowlist, same-origin POSTs, and secrets that never leave the server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.server import LiveServer, read_events, rows_body

TOKEN = "t0ken-for-tests-1234567890"


def in_process(app: FastAPI, **kwargs: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765", **kwargs)


@pytest.fixture
async def guarded(make_app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a server bound to all interfaces with a token."""
    async with in_process(make_app(host="0.0.0.0", token=TOKEN)) as client:
        yield client


def test_non_loopback_without_token_is_refused(make_app: Any) -> None:
    from aieval.errors import ConfigError

    with pytest.raises(ConfigError, match="--unsafe-no-auth"):
        make_app(host="0.0.0.0")


async def test_unsafe_no_auth_serves_without_token(make_app: Any) -> None:
    async with in_process(make_app(host="0.0.0.0", unsafe_no_auth=True)) as client:
        assert (await client.get("/api/runs")).status_code == 200


NEEDED = "this server needs a token"
NOT_ACCEPTED = "the token was not accepted"


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        pytest.param({}, 401, NEEDED, id="missing"),
        pytest.param({"Authorization": "Bearer wrong"}, 401, NOT_ACCEPTED, id="wrong-header"),
        pytest.param({"Authorization": f"Basic {TOKEN}"}, 401, NEEDED, id="wrong-scheme"),
        pytest.param({"Cookie": "aieval_token=wrong"}, 401, NOT_ACCEPTED, id="wrong-cookie"),
        pytest.param({"Cookie": "other=1"}, 401, NEEDED, id="other-cookie"),
        pytest.param({"Authorization": f"Bearer {TOKEN}"}, 200, None, id="right-header"),
        pytest.param({"Cookie": f"aieval_token={TOKEN}"}, 200, None, id="right-cookie"),
    ],
)
@pytest.mark.parametrize("path", ["/api/runs", "/openapi.json", "/"])
async def test_token_is_required(
    guarded: httpx.AsyncClient,
    headers: dict[str, str],
    status: int,
    message: str | None,
    path: str,
) -> None:
    response = await guarded.get(path, headers=headers)
    assert response.status_code == status
    if status == 401:
        body = response.json()
        assert set(body) == {"message", "reasons"} and body["message"] == message
        challenge = 'Bearer error="invalid_token"' if message == NOT_ACCEPTED else "Bearer"
        assert response.headers["www-authenticate"] == challenge
        # nothing about the right token: not its value, nor any part of it
        assert TOKEN[:6] not in response.text


async def test_a_wrong_token_is_told_apart_from_none_on_a_live_server(make_app: Any) -> None:
    with LiveServer(make_app(host="0.0.0.0", token=TOKEN)) as live:
        async with live.client() as client:
            none = await client.get("/api/runs")
            wrong = await client.get("/api/runs", headers={"Authorization": "Bearer nope"})
            right = await client.get("/api/runs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert (none.status_code, none.json()["message"]) == (401, NEEDED)
    assert "Authorization: Bearer TOKEN" in none.json()["reasons"][0]
    assert (wrong.status_code, wrong.json()["message"]) == (401, NOT_ACCEPTED)
    assert wrong.json()["reasons"] == [
        "send the token this server was started with (--token or AIEVAL_TOKEN)"
    ]
    assert right.status_code == 200


async def test_query_token_on_the_page_becomes_a_strict_cookie(
    guarded: httpx.AsyncClient,
) -> None:
    response = await guarded.get("/", params={"token": TOKEN})
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert f"aieval_token={TOKEN}" in cookie and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    # the client now holds the cookie: API calls and streams work without a header
    assert (await guarded.get("/api/runs")).status_code == 200
    wrong = await guarded.get("/", params={"token": "nope"})
    assert wrong.status_code == 401 and wrong.json()["message"] == NOT_ACCEPTED


async def test_query_token_is_not_accepted_on_the_api(guarded: httpx.AsyncClient) -> None:
    assert (await guarded.get("/api/runs", params={"token": TOKEN})).status_code == 401


@pytest.mark.parametrize(
    "host",
    [
        pytest.param("evil.example", id="foreign"),
        pytest.param("127.0.0.1.evil.example:8765", id="lookalike"),
        pytest.param("", id="empty"),
    ],
)
async def test_host_header_not_allowed(client: httpx.AsyncClient, host: str) -> None:
    response = await client.get("/api/runs", headers={"Host": host})
    assert response.status_code == 400
    assert "not allowed" in response.json()["message"]


@pytest.mark.parametrize(
    "host",
    [
        pytest.param("localhost:8765", id="localhost"),
        pytest.param("[::1]:8765", id="ipv6"),
        pytest.param("127.0.0.1", id="no-port"),
    ],
)
async def test_loopback_host_headers_are_allowed(client: httpx.AsyncClient, host: str) -> None:
    assert (await client.get("/api/runs", headers={"Host": host})).status_code == 200


async def test_allowed_host_setting(make_app: Any) -> None:
    app = make_app(allowed_hosts=("eval.lan",))
    async with in_process(app) as client:
        assert (await client.get("/api/runs", headers={"Host": "eval.lan"})).status_code == 200


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        pytest.param("http://evil.example", 403, id="foreign"),
        pytest.param("http://127.0.0.1:9999", 403, id="other-port"),
        pytest.param("null", 403, id="null"),
        pytest.param("http://127.0.0.1:8765", 202, id="same-origin"),
    ],
)
async def test_cross_origin_post_is_refused(
    client: httpx.AsyncClient, origin: str, status: int
) -> None:
    response = await client.post("/api/evaluations", json=rows_body(1), headers={"Origin": origin})
    assert response.status_code == status
    if status == 403:
        assert "cross-origin" in response.json()["message"]


async def test_cross_origin_get_is_allowed(client: httpx.AsyncClient) -> None:
    headers = {"Origin": "http://evil.example"}
    response = await client.get("/api/runs", headers=headers)
    assert response.status_code == 200
    # no CORS headers: a foreign page cannot read the answer
    assert "access-control-allow-origin" not in response.headers


SECRET_KEY = "sk-test-0123456789abcdefSECRET"
SECRET_HEADER = "Bearer hdr-0123456789abcdefSECRET"


async def test_no_endpoint_reveals_api_keys_or_headers(
    make_app: Any, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_key = "env-0123456789abcdefSECRET"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    # a model that repeats what it was sent (and a gateway that repeats the key it was given):
    # secrets in the request come back in the answer
    openai_server.responder = lambda body: Reply(f"I saw {body} with {SECRET_KEY}")
    rows = [{"id": f"k{i}", "prompt": f"what is {env_key}?", "expected": "x"} for i in range(3)]
    body = {
        "name": "secrets",
        "dataset": {"rows": rows},
        "target": {
            "provider": "openai-compatible",
            "model": "m",
            "base_url": openai_server.base_url,
            "params": {"headers": {"Authorization": SECRET_HEADER, "X-Api-Key": SECRET_KEY}},
        },
        "scorers": ["exact_match"],
        "settings": {"cache": False},
    }
    with LiveServer(make_app()) as live:
        async with live.client() as client:
            started = await client.post("/api/evaluations", json=body)
            assert started.status_code == 202
            run_id = started.json()["run_id"]
            texts = []
            async with client.stream("GET", f"/api/runs/{run_id}/events") as stream:
                texts.append(await stream.aread())
            other = await client.post("/api/evaluations", json=rows_body(2))
            assert other.status_code == 202
            async with client.stream("GET", other.json()["events_url"]) as stream:
                async for _ in read_events(stream.aiter_lines()):
                    pass
            for path in (
                "/api/runs",
                f"/api/runs/{run_id}",
                f"/api/runs/{run_id}/samples",
                f"/api/runs/{run_id}/samples/k0",
                f"/api/compare?baseline={other.json()['run_id']}&candidate={run_id}",
                "/openapi.json",
                "/",
            ):
                response = await client.get(path)
                assert response.status_code == 200, path
                texts.append(response.content)
    stored = live.server.config.app.state.store.get_run(run_id).config
    assert stored["target"]["params"]["headers"] == "[redacted]"
    assert SECRET_KEY not in json.dumps(stored) and "hdr-0123456789" not in json.dumps(stored)
    sample = [t for t in texts if b'"prediction"' in t]
    assert sample and b"[redacted]" in sample[0], "the model's answer held secrets to redact"
    for text in texts:
        for secret in (SECRET_KEY, SECRET_HEADER, "hdr-0123456789abcdefSECRET", env_key):
            assert secret.encode() not in text


@pytest.mark.parametrize(
    ("path", "status"),
    [
        pytest.param("/", 200, id="viewer"),
        pytest.param("/static/app.js", 200, id="asset"),
        pytest.param("/api/runs", 200, id="api"),
        pytest.param("/api/runs/nope", 404, id="error"),
    ],
)
async def test_every_response_carries_the_security_headers(
    client: httpx.AsyncClient, path: str, status: int
) -> None:
    response = await client.get(path)
    assert response.status_code == status
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"


async def test_host_rejection_also_carries_the_headers(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/runs", headers={"Host": "evil.example"})
    assert response.status_code == 400 and "content-security-policy" in response.headers


async def test_cdn_backed_docs_pages_are_off_but_the_schema_is_served(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get("/docs")).status_code == 404
    assert (await client.get("/openapi.json")).json()["info"]["title"] == "aieval"
