"""Judges reach custom gateways: ``base_url=``, the run's endpoint, and the run's store as cache."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval.errors import ConfigError
from aieval.providers import OpenAIProvider
from aieval.runner import build_scorers, parse_eval
from aieval.scorers import llm_judge

VERDICT = '{"score": 8, "reason": "close enough"}'


def grader_or_echo(body: dict[str, Any]) -> Reply | None:
    """Judge calls get a verdict; target calls fall through to the server's echo."""
    system = body["messages"][0]["content"] if body.get("messages") else ""
    return Reply(VERDICT) if "impartial grader" in system else None


def is_judge_call(body: dict[str, Any]) -> bool:
    return "impartial grader" in body["messages"][0]["content"]


def test_judge_with_base_url_scores_recorded_predictions(openai_server: OpenAIServer) -> None:
    openai_server.responder = grader_or_echo
    judge = llm_judge("Reward correct answers.", base_url=openai_server.base_url,
                      model="judge-m", cache=False)  # fmt: skip
    result = run(name="j", dataset=[{"prompt": "q", "prediction": "a"}], scorers=[judge],
                 store=False)  # fmt: skip
    score = result.samples[0].scores["llm_judge"]
    assert score.error is None and score.value == 0.8
    assert score.metadata["judge_provider"] == "openai-compatible"
    assert openai_server.requests[0].body["model"] == "judge-m"


def test_judge_base_url_from_the_environment(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai_server.responder = grader_or_echo
    monkeypatch.setenv("AIEVAL_JUDGE_BASE_URL", openai_server.base_url)
    judge = llm_judge("Reward correct answers.", model="judge-m", cache=False)
    result = run(name="j", dataset=[{"prompt": "q", "prediction": "a"}], scorers=[judge],
                 store=False)  # fmt: skip
    assert result.samples[0].scores["llm_judge"].value == 0.8


def test_judge_naming_no_endpoint_inherits_the_runs_gateway_and_store(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = grader_or_echo
    rows = [{"id": f"q{i}", "prompt": f"question {i}", "expected": "x"} for i in range(3)]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "live.yaml").write_text(yaml.safe_dump({
        "name": "gateway",
        "dataset": "rows.jsonl",
        "target": {"provider": "openai-compatible", "model": "target-m",
                   "base_url": openai_server.base_url, "params": {"temperature": 0}},
        "scorers": [{"llm_judge": {"rubric": "Reward correct answers.", "name": "quality"}}],
    }))  # fmt: skip
    work = tmp_path / "elsewhere"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", str(tmp_path / "live.yaml"),
         "--db", str(tmp_path / "runs.db"), "-q"],
        cwd=work, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr and "needs base_url" not in done.stdout, done.stderr
    judge_calls = [r for r in openai_server.requests if is_judge_call(r.body)]
    assert len(judge_calls) == 3
    assert {r.body["model"] for r in judge_calls} == {"target-m"}
    show = subprocess.run(
        [sys.executable, "-m", "aieval", "show", "gateway", "--db", str(tmp_path / "runs.db"),
         "--json"], cwd=work, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    samples = json.loads(show.stdout)["samples"]
    assert [s["scores"]["quality"]["value"] for s in samples] == [0.8, 0.8, 0.8]
    assert not (work / "aieval.db").exists(), "the judge cache must live in the run's store"
    with sqlite3.connect(tmp_path / "runs.db") as db:
        (cached,) = db.execute("SELECT COUNT(*) FROM response_cache").fetchone()
    assert cached == 6  # three target answers and three verdicts


def test_yaml_judge_accepts_base_url(openai_server: OpenAIServer) -> None:
    config = parse_eval({
        "name": "j", "dataset": {"rows": [{"prompt": "q", "prediction": "a"}]},
        "scorers": [{"llm_judge": {"rubric": "r", "base_url": openai_server.base_url,
                                   "model": "judge-m", "name": "judged"}}],
    })  # fmt: skip
    (judge,) = build_scorers(config)
    assert judge.name == "judged"


def test_base_url_with_a_provider_instance_is_refused() -> None:
    instance = OpenAIProvider("http://127.0.0.1:9/v1", api_key=None)
    with pytest.raises(ConfigError, match="base_url"):
        llm_judge("r", provider=instance, base_url="http://127.0.0.1:9/v1")
