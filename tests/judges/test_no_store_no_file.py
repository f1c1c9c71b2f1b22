"""A run that asked for no store writes no file: its judges and its target cache in memory."""

import json
from pathlib import Path

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval.providers import OpenAIProvider, ResponseCache
from aieval.scorers import llm_judge

VERDICT = json.dumps({"score": 7, "reason": "ok"})


@pytest.fixture
def no_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("AIEVAL_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_judge_in_a_run_without_store_writes_no_file(
    openai_server: OpenAIServer, no_default_store: Path
) -> None:
    openai_server.responder = lambda body: Reply(VERDICT)
    provider = OpenAIProvider(openai_server.base_url, api_key="sk-judge", name="judge-endpoint")
    judge = llm_judge("Right?", provider=provider, model="m")
    rows = [{"id": f"r{i}", "prompt": "q", "prediction": "a", "expected": "a"} for i in range(20)]
    result = run(name="j", dataset=rows, scorers=[judge], store=False, concurrency=1)
    assert result.metrics["llm_judge"] == pytest.approx(0.7)
    assert list(no_default_store.iterdir()) == []
    # the run still reuses identical deterministic verdicts, in memory
    assert len(openai_server.requests) == 1


def test_a_provider_target_without_store_writes_no_file(
    openai_server: OpenAIServer, no_default_store: Path
) -> None:
    rows = [{"id": f"r{i}", "prompt": "same", "expected": "same"} for i in range(5)]
    result = run(
        name="t", dataset=rows, scorers=["exact_match"], provider="openai-compatible",
        base_url=openai_server.base_url, model="m", params={"temperature": 0}, store=False,
        concurrency=1,
    )  # fmt: skip
    assert result.status == "completed" and result.summary["samples"] == 5
    assert list(no_default_store.iterdir()) == []
    assert len(openai_server.requests) == 1


def test_an_in_memory_response_cache_keeps_answers_without_a_file(
    no_default_store: Path,
) -> None:
    from aieval.providers import ChatResponse

    cache = ResponseCache.in_memory()
    cache.put("k", "p", ChatResponse(text="hi", model="m"))
    found = cache.get("k")
    assert found is not None and found.text == "hi" and found.cached
    assert list(no_default_store.iterdir()) == []
    assert "memory" in repr(cache)
