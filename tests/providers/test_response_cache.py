"""ResponseCache and CachedProvider on real SQLite files and the loopback server."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.openai_server import OpenAIServer, Reply, Status

from aieval.errors import ProviderServerError, StoreError
from aieval.providers import (
    CachedProvider,
    ChatRequest,
    ChatResponse,
    OpenAIProvider,
    ResponseCache,
    cache_key,
    is_deterministic,
)

KEY = "sk-cache-secret-value"


def _request(text: str = "hi", **kwargs: object) -> ChatRequest:
    kwargs.setdefault("temperature", 0)
    return ChatRequest(model="m", messages=[{"role": "user", "content": text}], **kwargs)  # type: ignore[arg-type]


@pytest.fixture
async def cached(openai_server: OpenAIServer, store_location: str) -> AsyncIterator[CachedProvider]:
    """A cached provider on each backend: an SQLite file, then a PostgreSQL database."""
    provider = CachedProvider(OpenAIProvider(openai_server.base_url, KEY), store_location)
    yield provider
    await provider.aclose()


async def test_miss_then_hit(cached: CachedProvider, openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Reply("first answer", usage=(3, 2), delay=0.05))
    miss = await cached.generate(_request())
    hit = await cached.generate(_request())
    assert len(openai_server.requests) == 1
    assert (miss.cached, hit.cached) == (False, True)
    assert hit.text == miss.text == "first answer"
    assert (hit.input_tokens, hit.output_tokens, hit.finish_reason) == (3, 2, "stop")
    assert hit.latency_s == miss.latency_s and miss.latency_s >= 0.05  # the original's


async def test_errors_are_never_cached(cached: CachedProvider, openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Status(500))
    with pytest.raises(ProviderServerError):
        await cached.generate(_request())
    assert len(cached.cache) == 0
    response = await cached.generate(_request())
    assert response.cached is False
    assert len(openai_server.requests) == 2


@pytest.mark.parametrize(
    ("kwargs", "deterministic"),
    [
        pytest.param({"temperature": 0}, True, id="temperature-0"),
        pytest.param({"temperature": 0.0}, True, id="temperature-0.0"),
        pytest.param({"temperature": 0.7, "params": {"seed": 1}}, True, id="seed"),
        pytest.param({"temperature": 0.7}, False, id="temperature-0.7"),
        pytest.param({"temperature": None}, False, id="provider-default"),
    ],
)
async def test_only_deterministic_requests_are_cached(
    cached: CachedProvider,
    openai_server: OpenAIServer,
    kwargs: dict[str, object],
    deterministic: bool,
) -> None:
    request = _request(**kwargs)
    assert is_deterministic(request) is deterministic
    await cached.generate(request)
    second = await cached.generate(request)
    assert second.cached is deterministic
    assert len(openai_server.requests) == (1 if deterministic else 2)


async def test_cache_salt_separates_entries(
    cached: CachedProvider, openai_server: OpenAIServer
) -> None:
    for salt in ("sample-0", "sample-1", "sample-0"):
        await cached.generate(_request(cache_salt=salt))
    assert len(openai_server.requests) == 2
    assert len(cached.cache) == 2


async def test_cache_survives_reopening_the_file(
    openai_server: OpenAIServer, store_location: str
) -> None:
    path = store_location
    for expected_cached in (False, True):
        provider = CachedProvider(OpenAIProvider(openai_server.base_url), path)
        response = await provider.generate(_request("persist me"))
        await provider.aclose()
        assert response.cached is expected_cached
        assert response.text == "echo: persist me"
    assert len(openai_server.requests) == 1


async def test_endpoints_do_not_share_entries(openai_server: OpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "shared.db")
    first = CachedProvider(OpenAIProvider(openai_server.base_url, name="a"), cache)
    second = CachedProvider(OpenAIProvider(openai_server.base_url, name="b"), cache)
    await first.generate(_request())
    assert (await second.generate(_request())).cached is False
    await first.aclose()
    await second.aclose()
    cache.close()
    assert len(openai_server.requests) == 2


async def test_the_key_never_reaches_the_file(cached: CachedProvider, tmp_path: Path) -> None:
    await cached.generate(_request())
    rows = cached.cache._table.query("SELECT * FROM response_cache")
    assert len(rows) == 1 and KEY not in repr(rows)
    cached.cache.close()
    for file in tmp_path.iterdir():
        assert KEY.encode() not in file.read_bytes()


def _response(text: str) -> ChatResponse:
    return ChatResponse(text=text, model="m", input_tokens=1, output_tokens=1)


def test_other_tables_in_the_same_file_are_untouched(tmp_path: Path) -> None:
    path = tmp_path / "aieval.db"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE runs (id TEXT PRIMARY KEY)")
        other.execute("INSERT INTO runs VALUES ('run-1')")
    cache = ResponseCache(path)
    cache.put("k", "p", _response("x"))
    cache.clear()
    cache.close()
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT id FROM runs").fetchall() == [("run-1",)]
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_several_connections_share_one_file(store_location: str) -> None:
    path = store_location
    writers = [ResponseCache(path) for _ in range(3)]
    for i, cache in enumerate(writers):
        cache.put(f"key-{i}", "p", _response(f"text-{i}"))
    reader = ResponseCache(path)
    texts = [reader.get(f"key-{i}") for i in range(3)]
    assert [t.text if t else None for t in texts] == ["text-0", "text-1", "text-2"]
    assert all(t is not None and t.cached for t in texts)
    for cache in [*writers, reader]:
        cache.close()


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="response cache"):
        ResponseCache(blocker / "cache.db").get("k")


messages = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]), "content": st.text()}),
    max_size=3,
)
params = st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4)


@given(messages, params)
def test_key_ignores_dict_order(msgs: list[dict[str, str]], extra: dict[str, object]) -> None:
    forward = ChatRequest(model="m", messages=msgs, params=extra, temperature=0)
    backward = ChatRequest(
        model="m",
        messages=[dict(reversed(m.items())) for m in msgs],
        params=dict(reversed(extra.items())),
        temperature=0,
    )
    assert cache_key("p|u", forward) == cache_key("p|u", backward)


@given(messages, st.text(), st.text())
def test_key_separates_what_changes_the_answer(
    msgs: list[dict[str, str]], salt_a: str, salt_b: str
) -> None:
    base = ChatRequest(model="m", messages=msgs, temperature=0, cache_salt=salt_a)
    variants = [
        ChatRequest(model="m2", messages=msgs, temperature=0, cache_salt=salt_a),
        ChatRequest(model="m", messages=msgs, temperature=0, max_tokens=5, cache_salt=salt_a),
        ChatRequest(
            model="m", messages=[*msgs, {"role": "user", "content": "x"}], cache_salt=salt_a
        ),
    ]
    keys = {cache_key("p|u", base)} | {cache_key("p|u", v) for v in variants}
    assert len(keys) == 4
    assert cache_key("p|u", base) != cache_key("q|u", base)
    salted = ChatRequest(model="m", messages=msgs, temperature=0, cache_salt=salt_b)
    assert (cache_key("p|u", base) == cache_key("p|u", salted)) is (salt_a == salt_b)


def test_the_cache_lives_in_the_team_store_beside_the_runs(pg_url: str) -> None:
    from aieval import Store

    store = Store(pg_url)
    run_id = store.create_run(name="qa")
    cache = ResponseCache(str(store.location))
    cache.put("k\x00nul", "p", _response("answer \udc80"))
    assert cache.path is None and str(cache.location) == str(store.location)
    again = ResponseCache(pg_url).get("k\x00nul")
    assert again is not None and again.text == "answer \udc80" and again.cached
    cache.clear()
    assert len(ResponseCache(pg_url)) == 0
    assert store.get_run(run_id).name == "qa"  # the store's own tables are untouched
