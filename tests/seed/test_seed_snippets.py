"""Every code snippet of the "Scorers" seed document, run as written."""

from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store


def test_writing_a_scorer() -> None:
    from aieval import scorer

    @scorer
    def mentions_refund(prediction: str, _expected: str) -> float:
        return 1.0 if "refund" in prediction.lower() else 0.0

    assert mentions_refund.name == "mentions_refund"
    assert mentions_refund("We will Refund you", "") == 1.0
    assert mentions_refund("no", "") == 0.0


def test_explicit_metric_name() -> None:
    from aieval import scorer

    @scorer(name="refund_mention")
    def _refund(prediction: str, _expected: str) -> float:
        return 1.0 if "refund" in prediction.lower() else 0.0

    assert _refund.name == "refund_mention"
    from aieval.scorers import get_scorer

    assert get_scorer("refund_mention") is _refund


def test_scorer_context_prompt_is_filled_in() -> None:
    from aieval import run, scorer

    @scorer
    def grounded_in_prompt(prediction: str, _expected: str, *, prompt: str | None = None) -> float:
        return 1.0 if prompt and prompt.split()[0].lower() in prediction.lower() else 0.0

    assert grounded_in_prompt("anything", "") == 0.0  # the two-argument call is unchanged
    rows = [
        {"prompt": "Refunds take how long?", "prediction": "refunds take 5 days"},
        {"prompt": "Shipping to Spain?", "prediction": "yes we do"},
    ]
    result = run(name="ctx", dataset=rows, scorers=[grounded_in_prompt], store=False)
    assert [s.values["grounded_in_prompt"] for s in result.samples] == [1.0, 0.0]


def test_builtins_and_token_f1_examples() -> None:
    from aieval.scorers import exact_match, json_valid, rouge_l, token_f1

    assert exact_match(" Paris ", "Paris") == 1.0
    assert json_valid('{"ok": true}', None) == 1.0
    assert rouge_l("the cat sat", "the cat sat") == 1.0

    assert token_f1("the capital is paris", "paris is the capital") == 1.0  # 1.0, order ignored
    assert token_f1("the cat extra", "the cat") == pytest.approx(0.8)  # 0.8, partial overlap
    assert token_f1("Paris", "paris", case_sensitive=True) == 0.0


def test_llm_judge_construction() -> None:
    from aieval.scorers import llm_judge

    faithful = llm_judge(
        rubric="Reward summaries faithful to the source that omit nothing important.",
        provider="sarmalink",
        model="smart",
        name="faithfulness",
    )
    assert faithful.name == "faithfulness"

    faithful = llm_judge(
        rubric="Reward summaries faithful to the source that omit nothing important.",
        samples=3,  # query three times, take the median verdict
        name="faithfulness",
    )
    assert faithful.name == "faithfulness"
    # without a rubric the judge grades general correctness
    default = llm_judge(samples=3, name="faithfulness")
    assert default.name == "faithfulness"
    assert default.fn.identity()["samples"] == "3"  # type: ignore[attr-defined]
    for bad in (0, -1):
        with pytest.raises(ValueError, match="positive integer"):
            llm_judge(rubric="x", samples=bad)
        with pytest.raises(ValueError, match="positive integer"):
            llm_judge(samples=bad, name="faithfulness")


def test_a_malformed_verdict_scores_zero_rather_than_crashing_the_run(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SARMALINK_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SARMALINK_API_KEY", "sk-test-secret-123")

    def respond(body: dict[str, Any]) -> Reply:
        if "grader" in body["messages"][0]["content"]:
            return Reply("Score: 8/10, faithful.")  # not the JSON object asked for
        return Reply("A faithful summary.")

    openai_server.responder = respond

    from aieval import run
    from aieval.scorers import llm_judge

    faithful = llm_judge(
        rubric="Reward summaries faithful to the source that omit nothing important.",
        samples=3,  # query three times, take the median verdict
        name="faithfulness",
    )
    dataset = [{"id": f"d{i}", "prompt": f"Summarize document {i}."} for i in range(6)]
    result = run(
        name="qa", dataset=dataset, scorers=[faithful], provider="sarmalink", model="smart",
        store=False,
    )  # fmt: skip
    assert result.status == "completed"
    assert result.metrics == {"faithfulness": 0.0}
    assert result.malformed == {"faithfulness": (6, 6)}
    assert result.error_count == 6 and not result.ok
    for sample in result.samples:
        score = sample.scores["faithfulness"]
        assert score.value == 0.0 and score.error is None
        first = "verdict is not a single JSON object"
        assert score.malformed == f"3 of 3 verdicts were malformed (first: {first})"
        assert score.metadata["parse_failures"] == 3


def test_run_with_the_judge_on_sarmalink(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SARMALINK_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SARMALINK_API_KEY", "sk-test-secret-123")
    monkeypatch.setenv("AIEVAL_DB", str(tmp_path / "runs.db"))
    judged: list[Any] = []

    def respond(body: dict[str, Any]) -> Reply:
        if body["messages"][0]["role"] == "system" and "grader" in body["messages"][0]["content"]:
            judged.append(body)
            return Reply('{"score": 8, "reason": "faithful and complete"}')
        return Reply("A faithful summary.")

    openai_server.responder = respond

    from aieval import run
    from aieval.scorers import llm_judge

    faithful = llm_judge(
        rubric="Reward summaries faithful to the source that omit nothing important.",
        samples=3,  # query three times, take the median verdict
        name="faithfulness",
    )
    dataset = [{"id": f"d{i}", "prompt": f"Summarize document {i}."} for i in range(4)]
    result = run(
        name="qa", dataset=dataset, scorers=[faithful], provider="sarmalink", model="smart"
    )

    assert result.metrics == {"faithfulness": pytest.approx(0.8)}
    assert len(judged) == 4 * 3
    assert all(b["model"] == "smart" and b["temperature"] == 0 for b in judged)
    sample = result.samples[0]
    assert sample.scores["faithfulness"].reason == "faithful and complete"
    assert [c.purpose for c in sample.calls] == ["target"] + ["judge:faithfulness"] * 3
    db_bytes = (tmp_path / "runs.db").read_bytes()
    assert b"sk-test-secret-123" not in db_bytes
    assert Store(tmp_path / "runs.db").get_run(result.id).provider == "sarmalink"
