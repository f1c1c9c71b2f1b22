import json
from typing import Any

import pytest
from tests.judges.helpers import provider_for
from tests.support.openai_server import OpenAIServer, Reply, Status

from aieval import run
from aieval.errors import ConfigError
from aieval.scorers import llm_judge, multi_judge, pairwise_judge

SCORES = {"judge-a": 3, "judge-b": 9, "judge-c": 7}


def by_model(body: Any) -> Reply | Status:
    model = body["model"]
    if model == "broken":
        return Status(400, {"error": {"message": "no such model"}})
    if model.startswith("pair"):
        winner = "first" if model == "pair-first" else "tie"
        return Reply(json.dumps({"winner": winner, "reason": model}))
    return Reply(json.dumps({"score": SCORES[model], "reason": model}))


def pointwise(server: OpenAIServer, model: str):  # type: ignore[no-untyped-def]
    return llm_judge("Be right.", provider=provider_for(server), model=model, name="j")


def test_median_of_judge_scores_with_per_judge_verdicts(openai_server: OpenAIServer) -> None:
    openai_server.responder = by_model
    panel = multi_judge([pointwise(openai_server, m) for m in SCORES], name="panel")
    result = run(
        name="m", dataset=[{"prompt": "q", "prediction": "a"}], scorers=[panel], store=False
    )
    score = result.samples[0].scores["panel"]
    assert score.value == pytest.approx(0.7)
    judges = score.metadata["judges"]
    assert set(judges) == {f"j@{m}" for m in SCORES}
    assert {k: v["value"] * 10 for k, v in judges.items()} == pytest.approx(
        {f"j@{m}": s for m, s in SCORES.items()}
    )
    assert judges["j@judge-a"]["metadata"]["judge_model"] == "judge-a"


def test_failed_judge_is_kept_and_others_vote(openai_server: OpenAIServer) -> None:
    openai_server.responder = by_model
    panel = multi_judge([pointwise(openai_server, "judge-a"), pointwise(openai_server, "broken")])
    result = run(
        name="m", dataset=[{"prompt": "q", "prediction": "a"}], scorers=[panel], store=False
    )
    score = result.samples[0].scores["multi_judge"]
    assert score.value == pytest.approx(0.3)
    assert score.metadata["failed_judges"] == ["j@broken"]
    assert "no such model" in score.metadata["judges"]["j@broken"]["error"]


@pytest.mark.parametrize(
    ("models", "label"),
    [
        pytest.param(["pair-tie", "pair-tie", "pair-tie"], "tie", id="unanimous-tie"),
        pytest.param(["pair-x", "pair-tie", "pair-tie"], "tie", id="majority-tie"),
    ],
)
def test_majority_vote_for_labels(
    openai_server: OpenAIServer, models: list[str], label: str
) -> None:
    openai_server.responder = by_model
    judges = [
        pairwise_judge("Better.", provider=provider_for(openai_server), model=m, name=f"p{i}")
        for i, m in enumerate(models)
    ]
    panel = multi_judge(judges)
    result = run(
        name="m",
        dataset=[{"prompt": "q", "prediction": "a", "expected": "b"}],
        scorers=[panel],
        store=False,
    )
    score = result.samples[0].scores["multi_judge"]
    assert score.metadata["aggregate"] == "majority" and score.raw == label


def test_multi_judge_needs_scorers() -> None:
    with pytest.raises(ConfigError):
        multi_judge([])
    with pytest.raises(ConfigError, match="takes scorers"):
        multi_judge([lambda p, e: 1.0])  # type: ignore[list-item]
