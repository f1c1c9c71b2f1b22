"""The embeddings client and the ``similar`` check against a loopback ``/v1/embeddings`` server.

The server is first checked against the real ``openai`` client library, so what the client and
the check are tested against is what OpenAI-compatible endpoints answer.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import Malformed, OpenAIServer, Status, letter_vector

from aieval import run
from aieval.errors import ProviderHTTPError, ProviderResponseError
from aieval.providers import EmbeddingCache, Embeddings, OpenAIEmbeddings, RetryPolicy
from aieval.runner import parse_eval, run_eval
from aieval.scorers import similar

NO_WAIT = RetryPolicy(max_retries=3, initial_delay=0.0, jitter=False)


def _embed(client: OpenAIEmbeddings, texts: list[str], model: str = "emb") -> Embeddings:
    async def go() -> Embeddings:
        try:
            return await client.embed(model, texts)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_the_loopback_server_speaks_what_the_openai_client_reads(
    openai_server: OpenAIServer,
) -> None:
    import openai

    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    answer = client.embeddings.create(model="emb", input=["refund", "order"])
    assert [d.embedding for d in answer.data] == [letter_vector("refund"), letter_vector("order")]
    assert answer.model == "emb" and answer.usage.prompt_tokens == 2


def test_embed_returns_one_vector_per_text_in_order(openai_server: OpenAIServer) -> None:
    answer = _embed(OpenAIEmbeddings(openai_server.base_url), ["b a", "zz", "b a"])
    assert answer.vectors == [letter_vector("b a"), letter_vector("zz"), letter_vector("b a")]
    assert (answer.model, answer.input_tokens, answer.retries, answer.cached) == ("emb", 3, 0, 0)
    (seen,) = openai_server.requests
    assert seen.path == "/v1/embeddings"
    assert seen.body == {"model": "emb", "input": ["b a", "zz"], "encoding_format": "float"}


def test_retryable_failures_are_retried_as_the_chat_providers_do(
    openai_server: OpenAIServer,
) -> None:
    openai_server.enqueue(Status(429, headers={"Retry-After": "0"}), Status(503))
    answer = _embed(OpenAIEmbeddings(openai_server.base_url, retry=NO_WAIT), ["x"])
    assert answer.vectors == [letter_vector("x")] and answer.retries == 2
    assert len(openai_server.requests) == 3


def test_a_final_failure_is_a_typed_error_with_its_retries(openai_server: OpenAIServer) -> None:
    openai_server.enqueue(Status(400))
    with pytest.raises(ProviderHTTPError, match="HTTP 400") as caught:
        _embed(OpenAIEmbeddings(openai_server.base_url, retry=NO_WAIT), ["x"])
    assert caught.value.retries == 0 and len(openai_server.requests) == 1
    openai_server.enqueue(*[Status(500)] * 3)
    with pytest.raises(Exception, match="HTTP 500") as failed:
        _embed(OpenAIEmbeddings(openai_server.base_url, retry=RetryPolicy(2, 0.0)), ["x"])
    assert getattr(failed.value, "retries", None) == 2


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b'{"data": []}',
        b'{"data": [{"index": 0, "embedding": []}]}',
        b'{"data": [{"index": 0, "embedding": [NaN]}]}',
    ],
)
def test_a_malformed_answer_is_a_response_error(openai_server: OpenAIServer, raw: bytes) -> None:
    openai_server.enqueue(Malformed(raw))
    with pytest.raises(ProviderResponseError, match="embeddings"):
        _embed(OpenAIEmbeddings(openai_server.base_url, retry=NO_WAIT), ["x"])


def test_cached_texts_make_no_request_and_the_cache_is_in_the_store(
    openai_server: OpenAIServer, store_location: str
) -> None:
    path = store_location
    _embed(OpenAIEmbeddings(openai_server.base_url, cache=path), ["a", "b"])
    again = _embed(OpenAIEmbeddings(openai_server.base_url, cache=path), ["b", "c", "a"])
    assert again.vectors == [letter_vector("b"), letter_vector("c"), letter_vector("a")]
    assert again.cached == 2
    assert [r.body["input"] for r in openai_server.requests] == [["a", "b"], ["c"]]
    assert len(EmbeddingCache(path)) == 3
    other_model = _embed(OpenAIEmbeddings(openai_server.base_url, cache=path), ["a"], "other")
    assert other_model.cached == 0  # the key names the model


def test_the_api_key_is_sent_and_never_shown(openai_server: OpenAIServer) -> None:
    openai_server.required_key = "sk-embed-secret"
    client = OpenAIEmbeddings(openai_server.base_url, api_key="sk-embed-secret")
    assert "sk-embed-secret" not in repr(client)
    assert _embed(client, ["x"]).vectors == [letter_vector("x")]
    with pytest.raises(Exception, match="HTTP 401") as refused:
        _embed(OpenAIEmbeddings(openai_server.base_url, api_key="sk-wrong"), ["x"])
    assert "sk-wrong" not in str(refused.value)


def _cosine(a: str, b: str) -> float:
    x, y = letter_vector(a), letter_vector(b)
    dot = sum(p * q for p, q in zip(x, y, strict=True))
    return dot / math.sqrt(sum(p * p for p in x) * sum(q * q for q in y))


def test_similar_in_an_eval_file_run_is_cached_in_the_store(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    rows = [
        {"id": "same", "input": "q", "prediction": "listen", "expected": "silent"},
        {"id": "near", "input": "q", "prediction": "the refund", "expected": "refunded"},
        {"id": "far", "input": "q", "prediction": "zzz", "expected": "abc"},
        {"id": "empty", "input": "q", "prediction": "", "expected": "abc"},
    ]
    entry = {
        "similar": {"threshold": 0.8, "embedding_model": "emb", "base_url": openai_server.base_url}
    }
    body: dict[str, Any] = {"name": "sim", "dataset": {"rows": rows}, "scorers": [entry]}
    (first,) = run_eval(parse_eval(body), store=tmp_path / "runs.db")
    scores = {s.id: s.scores["similar"] for s in first.samples}
    assert {k: s.value for k, s in scores.items()} == {
        "same": 1.0,
        "near": 1.0 if _cosine("the refund", "refunded") >= 0.8 else 0.0,
        "far": 0.0,
        "empty": 0.0,
    }
    assert scores["same"].raw == pytest.approx(1.0)
    assert scores["far"].raw == pytest.approx(0.0)
    assert scores["far"].reason == "cosine similarity 0.0000 < threshold 0.8"
    assert scores["empty"].reason == "output is empty: nothing to compare"
    assert scores["same"].metadata["model"] == "emb"
    asked = len(openai_server.requests)
    assert asked == 3  # the empty output asks nothing
    (second,) = run_eval(parse_eval({**body, "name": "sim2"}), store=tmp_path / "runs.db")
    assert {s.id: s.scores["similar"].value for s in second.samples} == {
        k: s.value for k, s in scores.items()
    }
    assert len(openai_server.requests) == asked  # every embedding came from the run store


def test_similar_retries_then_records_a_final_failure_as_the_samples_error(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.enqueue(Status(429, headers={"Retry-After": "0"}), Status(401))
    check = similar.with_options(
        base_url=openai_server.base_url, embedding_model="emb", cache=False
    )
    rows = [{"id": "r", "input": "q", "prediction": "abc", "expected": "abc"}]
    result = run(name="sim-fail", dataset=rows, scorers=[check], store=tmp_path / "runs.db")
    (sample,) = result.samples
    assert sample.scores["similar"].value is None
    assert "similar: embeddings: HTTP 401" in (sample.scores["similar"].error or "")
    assert len(openai_server.requests) == 2 and result.error_count == 1


def test_similar_uses_the_runs_base_url_and_negates(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    target = {"provider": "openai-compatible", "base_url": openai_server.base_url, "model": "m"}
    body = {
        "name": "sim-run",
        "dataset": {"rows": [{"id": "a", "input": "hello", "expected": "completely other"}]},
        "target": target,
        "scorers": [{"similar": {"embedding_model": "emb", "threshold": 0.9, "negate": True}}],
    }
    (result,) = run_eval(parse_eval(body), store=tmp_path / "runs.db")
    (sample,) = result.samples
    assert sample.prediction == "echo: hello"
    assert sample.scores["similar"].value == 1.0  # not similar, as negated asks
    assert "/v1/embeddings" in openai_server.paths()


def test_similar_without_an_endpoint_or_key_asks_nobody_and_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aieval.errors import ScorerError

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # a proxy that refuses every connection: a request would fail differently
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    with pytest.raises(
        ScorerError, match=r"no embeddings endpoint is named .* give the check a base_url"
    ):
        asyncio.run(similar.fn("a refund", "refund issued"))
