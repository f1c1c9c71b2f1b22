"""A run of epochs end to end: a judge with samples through a loopback server gives the variance
split the definition gives, and the report lists pass@k and pass^k per example."""

import json
import math
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Example, Store, run
from aieval.report import (
    build_report,
    render_html,
    render_markdown,
    render_text,
    report_schema,
)
from aieval.scorers import exact_match, llm_judge

CENTRES = {"q0": 4, "q1": 6}  # on the judge's 0..10 scale
SPREAD = {1: -2, 2: 0, 3: 2}  # each epoch's answer sits this far from its example's centre


def leveled(example: Example) -> str:
    assert example.epoch is not None
    return f"LVL{CENTRES[example.id] + SPREAD[example.epoch]}LVL"


def test_the_variance_split_of_a_judge_with_samples(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    asked: dict[str, int] = {}

    def judge(body: dict[str, Any]) -> Reply:
        # the two verdicts on one answer are its level - 1 and + 1, whichever comes first
        level = int(re.findall(r"LVL(\d+)LVL", json.dumps(body["messages"]))[-1])
        key = f"{level}:{json.dumps(body['messages'])}"
        turn = asked[key] = asked.get(key, 0) + 1
        return Reply(json.dumps({"score": level + (-1 if turn % 2 else 1), "reason": "ok"}))

    openai_server.responder = judge
    grader = llm_judge(base_url=openai_server.base_url, model="j", samples=2, cache=False)
    rows = [{"id": i, "prompt": "say a level", "expected": "x"} for i in CENTRES]
    result = run(name="v", dataset=rows, scorers=[grader], target=leveled, epochs=3, store=False)
    assert len(openai_server.requests) == 2 * 3 * 2  # examples x epochs x judge samples
    split = result.summary["epochs"]["variance"]["llm_judge"]
    assert split["judge_variance"] == pytest.approx(0.02)  # verdicts +-0.1 around the answer
    assert split["between_epochs"] == pytest.approx(0.04)  # answers -0.2, 0, +0.2
    assert split["answer_variance"] == pytest.approx(0.03)  # 0.04 - 0.02 / 2
    assert split["answer_share"] == pytest.approx(0.6)
    assert split["judge_share"] == pytest.approx(0.4)
    assert split["judge_samples"] == 2.0 and split["answers"] == 6


def test_the_report_of_a_run_of_epochs(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    right = {"q0": 0, "q1": 1, "q2": 3}

    def target(example: Example) -> str:
        return "x" if (example.epoch or 1) <= right[example.id] else "no"

    rows = [{"id": i, "prompt": "p", "expected": "x"} for i in right]
    result = run(name="r", dataset=rows, scorers=[exact_match], target=target, epochs=3,
                 store=store, min_pass_rate=0.9)  # fmt: skip
    assert [m.metric for m in result.missed_minimums] == ["pass_rate"]
    doc = build_report(store, result.id).to_dict()
    jsonschema.validate(doc, report_schema())
    epochs = doc["epochs"]
    assert epochs["n"] == 3 and epochs["pass_at_k"] == result.summary["epochs"]["pass_at_k"]
    by_id = {ex["id"]: ex for ex in epochs["examples"]}
    assert [ex["id"] for ex in epochs["examples"]] == ["q0", "q1", "q2"]
    assert (by_id["q1"]["n"], by_id["q1"]["passed"]) == (3, 1)
    assert by_id["q1"]["pass_at_k"]["2"] == pytest.approx(1 - math.comb(2, 2) / math.comb(3, 2))
    assert by_id["q1"]["pass_hat_k"]["2"] == 0.0
    assert by_id["q2"]["pass_hat_k"]["3"] == 1.0
    assert doc["minimums"]["checks"] == [
        {"metric": "pass_rate", "minimum": 0.9, "value": pytest.approx(4 / 9), "met": False}
    ]
    text = render_text(doc, width=120)
    assert "Epochs: 3 answers per example, 3 examples" in text
    assert "pass@k and pass^k" in text and "Minimums (MISSED)" in text
    # least reliable first: q0 (never right), q1 (right once), q2 (always)
    listed = re.findall(r"(q[0-2])\W+(\d)/3", text)
    assert listed == [("q0", "0"), ("q1", "1"), ("q2", "3")]
    markdown = render_markdown(doc)
    assert "**Epochs: 3 answers per example, 3 examples**" in markdown
    # k=3: pass@3 is 0, 1, 1 over the examples, pass^3 is 0, 0, 1
    assert "| 3 | 66.7% | 33.3% |" in markdown
    page = render_html(doc)
    assert "<h2>Epochs: 3 answers per example, 3 examples</h2>" in page
    assert "<h2>Minimums (missed)</h2>" in page and "<code>q1</code>" in page
