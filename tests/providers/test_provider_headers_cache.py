"""A provider's own HTTP headers are part of its response-cache key: two endpoints that differ
only in a header (a tenant, a routing key) never answer from each other's cached replies."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval.providers import (
    AnthropicProvider,
    CachedProvider,
    ChatRequest,
    OpenAIProvider,
    ResponseCache,
    build_provider,
    cache_key,
)
from aieval.providers._cache import provider_identity

TENANT_A = "tenant-a-0f1e2d3c4b5a"
TENANT_B = "tenant-b-9a8b7c6d5e4f"


def _request() -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "q"}], temperature=0)


def _rows(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT key, provider FROM response_cache ORDER BY created_at").fetchall()


async def test_providers_differing_only_in_a_header_both_get_called(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.enqueue(Reply("answer for a"), Reply("answer for b"))
    path = tmp_path / "cache.db"
    first = build_provider("openai-compatible", base_url=openai_server.base_url,
                           headers={"X-Tenant": TENANT_A}, cache=path)  # fmt: skip
    second = build_provider("openai-compatible", base_url=openai_server.base_url,
                            headers={"X-Tenant": TENANT_B}, cache=path)  # fmt: skip
    try:
        a = await first.generate(_request())
        b = await second.generate(_request())
        again = await second.generate(_request())
    finally:
        await first.aclose()
        await second.aclose()
    assert (a.text, b.text) == ("answer for a", "answer for b")
    assert (a.cached, b.cached) == (False, False)
    assert again.cached and again.text == "answer for b"
    tenants = [r.headers["X-Tenant"] for r in openai_server.requests]
    assert tenants == [TENANT_A, TENANT_B]
    rows = _rows(path)
    assert len(rows) == 2 and rows[0][0] != rows[1][0]
    # the provider column names the endpoint only; no header value is stored anywhere
    assert {provider for _, provider in rows} == {f"openai-compatible|{openai_server.base_url}"}
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("cache.db*"))
    for value in (TENANT_A, TENANT_B):
        assert value.encode() not in stored


async def test_anthropic_providers_differing_only_in_a_header_both_get_called(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    pytest.importorskip("anthropic")
    openai_server.enqueue(Reply("answer for a"), Reply("answer for b"))
    cache = ResponseCache(tmp_path / "cache.db")
    url = openai_server.root_url
    providers = [
        CachedProvider(AnthropicProvider("sk-ant-1234567", base_url=url, headers=h), cache)
        for h in ({"X-Tenant": TENANT_A}, {"X-Tenant": TENANT_B})
    ]
    try:
        texts = [(await p.generate(_request())).text for p in providers]
    finally:
        for p in providers:
            await p.aclose()
        cache.close()
    assert texts == ["answer for a", "answer for b"]
    assert len(openai_server.requests) == 2


async def test_header_order_and_name_case_do_not_change_the_key(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache.db")
    one = CachedProvider(
        OpenAIProvider(openai_server.base_url, headers={"X-A": "1", "X-B": "2"}), cache
    )
    two = CachedProvider(
        OpenAIProvider(openai_server.base_url, headers={"x-b": "2", "x-a": "1"}), cache
    )
    try:
        await one.generate(_request())
        assert (await two.generate(_request())).cached is True
    finally:
        await one.aclose()
        await two.aclose()
        cache.close()
    assert len(openai_server.requests) == 1


async def test_providers_without_headers_keep_their_keys(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """Entries cached before headers were keyed stay valid: the key of a provider without
    headers of its own (an API key is no header of its own) is what it always was."""
    path = tmp_path / "cache.db"
    plain = OpenAIProvider(openai_server.base_url, "sk-some-key-123456")
    provider = CachedProvider(plain, path)
    try:
        await provider.generate(_request())
    finally:
        await provider.aclose()
    ((key, column),) = _rows(path)
    assert column == provider_identity(plain)
    assert key == cache_key(f"openai|{openai_server.base_url}", _request())
