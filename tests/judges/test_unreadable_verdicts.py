"""A run whose judge verdicts cannot be read is loud: scorer errors, never passes, never green."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval.providers import OpenAIProvider
from aieval.scorers import llm_judge, pairwise_judge

DUPLICATE = '{"score": 1, "score": 10, "reason": "x"}'


def rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "prompt": "q", "prediction": "a", "expected": "b"} for i in range(n)]


def endpoint(server: OpenAIServer) -> OpenAIProvider:
    return OpenAIProvider(server.base_url, api_key="sk-judge", name="judge-endpoint")


def test_all_malformed_pointwise_verdicts_are_scorer_errors(openai_server: OpenAIServer) -> None:
    openai_server.responder = lambda body: Reply(DUPLICATE)
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", name="llm_judge")
    result = run(name="j", dataset=rows(20), scorers=[judge], store=False)
    assert result.malformed == {"llm_judge": (20, 20)}
    assert result.metrics["llm_judge"] is None  # not a measured 0.0
    assert result.summary["scorers"]["llm_judge"]["errors"] == 20
    assert result.error_count == 20 and not result.ok and result.pass_rate == 0.0
    score = result.samples[0].scores["llm_judge"]
    assert score.value is None and score.error is not None
    assert "malformed judge verdict" in score.error and "'score' twice" in score.error
    # what the judge answered stays recorded
    assert score.metadata["parse_failures"] == 1 and score.metadata["verdicts"][0]["raw"]
    # tolerated errors still say how many verdicts were unreadable
    tolerant = run(name="j", dataset=rows(4), scorers=[judge], store=False, max_error_rate=1.0)
    assert tolerant.ok and tolerant.malformed == {"llm_judge": (4, 4)}


def test_pairwise_wrong_vocabulary_is_never_a_passing_tie(openai_server: OpenAIServer) -> None:
    openai_server.responder = lambda body: Reply('{"winner": "A"}')
    judge = pairwise_judge("Better?", provider=endpoint(openai_server), model="m")
    result = run(name="p", dataset=rows(6), scorers=[judge], store=False)
    assert result.malformed == {"pairwise": (6, 6)}
    assert result.metrics["pairwise"] is None
    assert result.pass_rate == 0.0 and result.error_count == 6 and not result.ok
    assert all(not s.passed for s in result.samples)


def test_a_readable_majority_of_judge_samples_still_scores(openai_server: OpenAIServer) -> None:
    replies = iter(['{"score": 8, "reason": "a"}', "garbage", '{"score": 9, "reason": "b"}'])
    openai_server.responder = lambda body: Reply(next(replies))
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", samples=3)
    result = run(name="j", dataset=rows(1), scorers=[judge], store=False)
    score = result.samples[0].scores["llm_judge"]
    assert score.error is None and score.value == pytest.approx(0.8)
    assert result.ok and result.malformed == {"llm_judge": (0, 1)}


def test_a_median_resting_on_malformed_samples_is_unreadable(openai_server: OpenAIServer) -> None:
    replies = iter(['{"score": 8, "reason": "a"}', "garbage", "more garbage"])
    openai_server.responder = lambda body: Reply(next(replies))
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", samples=3)
    result = run(name="j", dataset=rows(1), scorers=[judge], store=False)
    score = result.samples[0].scores["llm_judge"]
    assert score.value is None and "2 of 3 verdicts" in (score.error or "")
    assert result.malformed == {"llm_judge": (1, 1)}


def test_non_judge_scorers_report_no_malformed_share(openai_server: OpenAIServer) -> None:
    result = run(name="x", dataset=rows(2), scorers=["exact_match"], store=False)
    assert result.malformed == {}


def test_cli_summary_warns_and_exits_3(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.responder = lambda body: Reply(DUPLICATE)
    with (tmp_path / "rows.jsonl").open("w") as handle:
        for row in rows(5):
            handle.write(json.dumps(row) + "\n")
    (tmp_path / "judge.py").write_text(
        "import os\nfrom aieval.scorers import llm_judge\n"
        "judge = llm_judge('Right?', base_url=os.environ['JUDGE_URL'], api_key='sk-x',"
        " model='m', name='grader')\n"
    )
    (tmp_path / "e.yaml").write_text(
        "name: jj\ndataset: rows.jsonl\nimports: [judge.py]\nscorers: [grader]\n"
    )
    env = {**os.environ, "JUDGE_URL": openai_server.base_url, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "e.yaml", "--db", "r.db", "-q"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    assert "grader: 5 of 5 samples (100%) had an unreadable judge verdict" in text
    assert "completed with errors" in text


def test_multi_judge_drops_an_unreadable_member(openai_server: OpenAIServer) -> None:
    from aieval.scorers import multi_judge

    def reply(body: Any) -> Reply:
        return Reply(DUPLICATE if body["model"] == "bad" else '{"score": 7, "reason": "ok"}')

    openai_server.responder = reply
    good = llm_judge("Right?", provider=endpoint(openai_server), model="good", name="good")
    bad = llm_judge("Right?", provider=endpoint(openai_server), model="bad", name="bad")
    result = run(name="m", dataset=rows(2), scorers=[multi_judge([good, bad])], store=False)
    score = result.samples[0].scores["multi_judge"]
    assert score.value == pytest.approx(0.7) and score.error is None
    assert score.metadata["unreadable_judges"] == ["bad"]
    assert result.malformed == {"multi_judge": (0, 2)}
    only_bad = run(name="m", dataset=rows(2), scorers=[multi_judge([bad])], store=False)
    assert only_bad.malformed == {"multi_judge": (2, 2)} and not only_bad.ok
