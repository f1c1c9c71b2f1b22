import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.judges.helpers import provider_for, user_text
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval.grading import load_rubric, normalize
from aieval.scorers import rubric_judge
from aieval.scorers._rubric_judge import parse_rubric_verdict


def criterion(name: str, weight: float) -> dict[str, Any]:
    return {
        "name": name,
        "scale": [1, 5],
        "weight": weight,
        "definition": f"{name} of the answer",
        "evidence_required": [f"a quote showing {name}"],
        "anchors": {str(i): f"{name} level {i}" for i in range(1, 6)},
    }


RUBRIC = load_rubric(
    {
        "rubric_id": "qa_quality",
        "version": 2,
        "criteria": [
            criterion("correctness", 0.5),
            criterion("clarity", 0.3),
            criterion("completeness", 0.2),
        ],
    }
)
POINTS = {"correctness": 5, "clarity": 3, "completeness": 1}


def scripted(body: Any) -> Reply:
    names = re.findall(r"^### (\w+)$", user_text(body), re.MULTILINE)
    verdict = {
        n: {"evidence": f"quote for {n}", "score": POINTS[n], "reason": f"{n} ok"} for n in names
    }
    return Reply(json.dumps({"criteria": verdict}))


def judge_on(server: OpenAIServer, **kwargs: Any):  # type: ignore[no-untyped-def]
    return rubric_judge(RUBRIC, provider=provider_for(server), model="rubric-model", **kwargs)


def test_scores_each_criterion_with_raw_normalized_and_reasons(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = scripted
    result = run(
        name="r",
        dataset=[{"prompt": "q", "prediction": "a", "expected": "a"}],
        scorers=[judge_on(openai_server, seed=7)],
        store=False,
    )
    score = result.samples[0].scores["qa_quality"]
    per = score.metadata["criteria"]
    for name, point in POINTS.items():
        assert per[name]["raw"] == point
        assert per[name]["normalized"] == normalize("likert_1_5", point)
        assert per[name]["reason"] == f"{name} ok" and per[name]["evidence"]
    weights = {c.name: c.weight for c in RUBRIC.criteria}
    expected = sum(weights[n] * normalize("likert_1_5", p) for n, p in POINTS.items())
    assert score.value == pytest.approx(expected / sum(weights.values()))
    assert score.raw == POINTS
    assert score.metadata["rubric_version"] == "2" and score.metadata["parse_failures"] == 0
    body = openai_server.requests[0].body
    assert set(
        body["response_format"]["json_schema"]["schema"]["properties"]["criteria"]["required"]
    ) == set(POINTS)


def test_order_is_shuffled_and_reproducible_from_the_recorded_seed(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = scripted
    rows = [{"prompt": f"q{i}", "prediction": f"a{i}"} for i in range(12)]
    result = run(name="r", dataset=rows, scorers=[judge_on(openai_server, seed=1)], store=False)
    orders = [tuple(s.scores["qa_quality"].metadata["criterion_order"]) for s in result.samples]
    assert len(set(orders)) > 1
    import random

    for sample, order in zip(result.samples, orders, strict=True):
        meta = sample.scores["qa_quality"].metadata
        replay = [c.name for c in RUBRIC.criteria]
        random.Random(meta["order_seed"]).shuffle(replay)
        assert tuple(replay) == order
    sent = [
        re.findall(r"^### (\w+)$", user_text(r.body), re.MULTILINE) for r in openai_server.requests
    ]
    assert sorted(map(tuple, sent)) == sorted(orders)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        pytest.param({"score": 6, "evidence": "e"}, "not a point", id="off-scale"),
        pytest.param({"score": 3.5, "evidence": "e"}, "not a point", id="fraction"),
        pytest.param({"score": True, "evidence": "e"}, "must be a number", id="bool"),
        pytest.param({"score": "4", "evidence": "e"}, "must be a number", id="string"),
        pytest.param({"score": 4, "evidence": " "}, "evidence", id="no-evidence"),
        pytest.param(None, "no verdict", id="missing"),
    ],
)
def test_malformed_criterion_scores_zero_with_an_error(entry: Any, problem: str) -> None:
    criteria = {n: {"score": 4, "evidence": "e", "reason": "r"} for n in POINTS}
    if entry is None:
        del criteria["clarity"]
    else:
        criteria["clarity"] = entry
    per = parse_rubric_verdict(json.dumps({"criteria": criteria}), RUBRIC)
    assert per["clarity"]["normalized"] == 0.0 and problem in per["clarity"]["error"]
    assert per["correctness"]["normalized"] == 0.75 and per["correctness"]["error"] is None


@given(st.text(max_size=200))
def test_rubric_parser_never_raises(text: str) -> None:
    per = parse_rubric_verdict(text, RUBRIC)
    assert set(per) == set(POINTS)
    assert all(0.0 <= v["normalized"] <= 1.0 for v in per.values())


def test_duplicate_keys_in_a_rubric_verdict_are_malformed_not_last_wins() -> None:
    entries = ", ".join(f'"{n}": {{"score": 4, "evidence": "e", "reason": "r"}}' for n in POINTS)
    text = '{"criteria": {' + entries + ', "clarity": {"score": 1, "evidence": "e"}}}'
    per = parse_rubric_verdict(text, RUBRIC)
    assert all(v["normalized"] == 0.0 for v in per.values())
    assert all("'clarity' twice" in v["error"] for v in per.values())
    inner = '{"criteria": {"correctness": {"score": 5, "score": 1, "evidence": "e"}}}'
    assert "'score' twice" in parse_rubric_verdict(inner, RUBRIC)["correctness"]["error"]


def test_duplicate_keys_in_a_pairwise_verdict_are_malformed() -> None:
    from aieval.scorers._pairwise import parse_preference

    winner, _, error = parse_preference('{"winner": "first", "winner": "second"}')
    assert winner is None and error is not None and "'winner' twice" in error
