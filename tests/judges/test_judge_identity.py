"""A judge's rubric, model and prompt version are stored with the run's scorer options, so runs
judged differently under one scorer name are not compared as equals nor resumed as one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store, run
from aieval.errors import ConfigError
from aieval.report import compare_runs
from aieval.scorers import llm_judge, pairwise_judge

ROWS = [
    {"id": f"e{i}", "prompt": f"question {i}", "expected": "a", "prediction": f"answer {i}"}
    for i in range(8)
]


def _judge(server: OpenAIServer, rubric: str, model: str = "judge") -> Any:
    return llm_judge(
        rubric=rubric, provider="openai-compatible", base_url=server.base_url, model=model,
        name="quality",
    )  # fmt: skip


def _verdicts(server: OpenAIServer) -> None:
    server.responder = lambda body: Reply(json.dumps({"score": 8, "reason": "fine"}))


def _comparable(store: Store, base: str, cand: str) -> Any:
    comparison = compare_runs(store, base, cand)
    return next(r for r in comparison.decision.rules if r.rule == "comparable_runs")


def test_a_different_rubric_or_judge_model_is_not_comparable(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    _verdicts(openai_server)
    db = tmp_path / "runs.db"
    runs = {
        label: run(name=label, dataset=ROWS, scorers=[judge], store=db).id
        for label, judge in (
            ("base", _judge(openai_server, "Reward faithful answers.")),
            ("same", _judge(openai_server, "Reward faithful answers.")),
            ("rubric", _judge(openai_server, "Reward short answers.")),
            ("model", _judge(openai_server, "Reward faithful answers.", model="other")),
        )
    }
    store = Store(db)
    assert _comparable(store, runs["base"], runs["same"]).passed
    for changed, key in (("rubric", "rubric_sha256"), ("model", "judge_model")):
        rule = _comparable(store, runs["base"], runs[changed])
        assert rule.outcome == "inconclusive", rule.reason
        assert "scorer quality is configured differently" in rule.reason and key in rule.reason
    stored = store.get_run(runs["base"]).config["scorers"][0]["options"]
    assert stored["judge_model"] == "judge" and len(stored["rubric_sha256"]) == 16
    assert "Reward" not in json.dumps(stored)  # a digest, not the rubric text


def test_resuming_with_another_rubric_is_refused(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    _verdicts(openai_server)
    db = tmp_path / "runs.db"
    first = run(name="r", dataset=ROWS, scorers=[_judge(openai_server, "A.")], store=db)
    Store(db).finish_run(first.id, status="interrupted")
    with pytest.raises(ConfigError, match="rubric_sha256"):
        run(name="r", dataset=ROWS, scorers=[_judge(openai_server, "B.")], store=db, resume=True)


def test_a_pairwise_judge_stores_its_identity_and_names_its_model(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply(json.dumps({"winner": "tie", "reason": "same"}))
    judge = pairwise_judge(
        "Prefer faithful answers.", provider="openai-compatible",
        base_url=openai_server.base_url, model="pj", name="pref",
    )  # fmt: skip
    assert judge.fn.model == "pj"  # multi_judge keys repeated judge names by it
    db = tmp_path / "runs.db"
    done = run(name="pw", dataset=ROWS, scorers=[judge], store=db)
    stored = Store(db).get_run(done.id).config["scorers"][0]["options"]
    assert stored["judge_model"] == "pj" and len(stored["criteria_sha256"]) == 16
    assert stored["adjudication_rounds"] == str(judge.fn.adjudication_rounds)
    assert stored["prompt_version"].startswith("pairwise")
    assert "faithful" not in json.dumps(stored)  # a digest, not the criteria text
