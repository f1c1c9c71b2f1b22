"""Text holding a lone surrogate (a non-UTF-8 byte read with surrogateescape) is judged."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.judges.helpers import provider_for, user_text
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store, run
from aieval.grading import load_rubric
from aieval.scorers import Scorer, llm_judge, pairwise_judge, rubric_judge

BROKEN = "caf\udc80 au lait"
RUBRIC = load_rubric(
    {
        "rubric_id": "r",
        "criteria": [
            {
                "name": "clarity",
                "scale": [1, 5],
                "weight": 1,
                "definition": "clear",
                "evidence_required": ["a quote"],
                "anchors": {str(i): f"level {i}" for i in range(1, 6)},
            }
        ],
    }
)


def _pointwise(body: Any) -> Reply:
    return Reply(json.dumps({"score": 8, "reason": "fine"}))


def _rubric(body: Any) -> Reply:
    names = re.findall(r"^### (\w+)$", user_text(body), re.MULTILINE)
    verdict = {n: {"evidence": "a quote", "score": 4, "reason": "clear"} for n in names}
    return Reply(json.dumps({"criteria": verdict}))


def _pairwise(body: Any) -> Reply:
    return Reply(json.dumps({"winner": "tie", "reason": "same"}))


def _judges(server: OpenAIServer) -> dict[str, tuple[Scorer, Any]]:
    provider = provider_for(server)
    return {
        "llm_judge": (llm_judge(rubric="Is it right?", provider=provider, model="j"), _pointwise),
        "rubric_judge": (rubric_judge(RUBRIC, provider=provider, model="j", seed=7), _rubric),
        "rubric_judge_unseeded": (rubric_judge(RUBRIC, provider=provider, model="j"), _rubric),
        "pairwise": (pairwise_judge("Prefer the right one.", provider=provider, model="j"),
                     _pairwise),
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["llm_judge", "rubric_judge", "rubric_judge_unseeded", "pairwise"])
def test_a_prediction_with_a_lone_surrogate_is_judged(
    openai_server: OpenAIServer, tmp_path: Path, kind: str
) -> None:
    judge, responder = _judges(openai_server)[kind]
    openai_server.responder = responder
    rows = [{"id": "a", "prompt": f"order a {BROKEN}", "prediction": BROKEN, "expected": "café"}]
    result = run(name="s", dataset=rows, scorers=[judge], store=tmp_path / "runs.db")
    (sample,) = result.samples
    assert sample.errors == {}, sample.errors
    assert sample.scores[judge.name].value > 0
    # the judge saw the text itself, surrogate included (sent as a JSON \udc80 escape)
    assert openai_server.requests and all(
        "\udc80" in user_text(r.body) for r in openai_server.requests
    )
    stored = Store(tmp_path / "runs.db").get_sample(result.id, "a")
    assert stored.prediction == BROKEN and stored.errors == {}
    assert stored.scores[judge.name].value == sample.scores[judge.name].value
