"""A provider's settings that change what it sends (``supports_json_schema``,
``default_max_tokens``) are part of its response-cache key: two providers that differ only
there never answer from each other's cached replies, and providers on defaults keep their keys."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

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
    get_provider,
)

SCHEMA = {"title": "Verdict", "type": "object", "properties": {"ok": {"type": "boolean"}}}


def _request(**kwargs: Any) -> ChatRequest:
    messages = [{"role": "user", "content": "q"}]
    return ChatRequest(model="m", messages=messages, temperature=0, **kwargs)


def _keys(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [k for (k,) in db.execute("SELECT key FROM response_cache ORDER BY created_at")]


async def test_openai_providers_differing_only_in_json_schema_support_both_get_called(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.enqueue(Reply('{"ok": true}'), Reply("ok, as prose"))
    path = tmp_path / "cache.db"
    strict = build_provider(
        get_provider("openai-compatible", base_url=openai_server.base_url), cache=path
    )
    plain = build_provider(
        get_provider(
            "openai-compatible", base_url=openai_server.base_url, supports_json_schema=False
        ),
        cache=path,
    )
    request = _request(response_schema=SCHEMA)
    try:
        first = await strict.generate(request)
        second = await plain.generate(request)
        again = await plain.generate(request)
    finally:
        await strict.aclose()
        await plain.aclose()
    assert (first.text, second.text) == ('{"ok": true}', "ok, as prose")
    assert (first.cached, second.cached, again.cached) == (False, False, True)
    assert again.text == "ok, as prose"
    sent = [r.body for r in openai_server.requests]
    assert len(sent) == 2
    assert "response_format" in sent[0] and "response_format" not in sent[1]
    assert len(set(_keys(path))) == 2


async def test_anthropic_providers_differing_only_in_default_max_tokens_both_get_called(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    pytest.importorskip("anthropic")
    openai_server.enqueue(Reply("long answer"), Reply("short"))
    cache = ResponseCache(tmp_path / "cache.db")
    url = openai_server.root_url
    providers = [
        CachedProvider(AnthropicProvider("sk-ant-1234567", base_url=url, **kw), cache)
        for kw in ({}, {"default_max_tokens": 16})
    ]
    try:
        texts = [(await p.generate(_request())).text for p in providers]
        again = await providers[1].generate(_request())
    finally:
        for p in providers:
            await p.aclose()
        cache.close()
    assert texts == ["long answer", "short"]
    assert again.cached and again.text == "short"
    assert [r.body["max_tokens"] for r in openai_server.requests] == [1024, 16]


async def test_providers_on_default_settings_keep_their_keys(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """Cache files written before settings were keyed stay valid for providers on defaults."""
    pytest.importorskip("anthropic")
    path = tmp_path / "cache.db"
    openai = CachedProvider(OpenAIProvider(openai_server.base_url, supports_json_schema=True), path)
    anthropic = CachedProvider(
        AnthropicProvider("sk-ant-1234567", base_url=openai_server.root_url,
                          default_max_tokens=1024),
        path,
    )  # fmt: skip
    try:
        await openai.generate(_request())
        await anthropic.generate(_request())
    finally:
        await openai.aclose()
        await anthropic.aclose()
    assert _keys(path) == [
        cache_key(f"openai|{openai_server.base_url}", _request()),
        cache_key(f"anthropic|{openai_server.root_url}", _request()),
    ]
