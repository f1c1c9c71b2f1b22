"""A malformed judge verdict scores 0.0 rather than crashing the run, and is never silent: the
score is flagged ``malformed`` with its reason, counted, never passes and counts as errored."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.judges.test_rubric_judge import POINTS, judge_on
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply
from tests.support.reports import decision_rule, store_run

from aieval import RunResult, run
from aieval._records import SampleRecord
from aieval.providers import OpenAIProvider
from aieval.report import build_report, compare_runs, render_markdown, render_text
from aieval.runner._result import Aggregator
from aieval.scorers import llm_judge, multi_judge, pairwise_judge
from aieval.store import Store
from aieval.testing import EvalFailed, assert_run

DUPLICATE = '{"score": 1, "score": 10, "reason": "x"}'
PROSE = "I would say it is mostly fine."
RULE = "judge_verdicts_readable"


def rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "prompt": "q", "prediction": "a", "expected": "b"} for i in range(n)]


def endpoint(server: OpenAIServer) -> OpenAIProvider:
    return OpenAIProvider(server.base_url, api_key="sk-judge", name="judge-endpoint")


def test_six_malformed_verdicts_score_zero_flagged_and_counted(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = lambda body: Reply(DUPLICATE)
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", name="llm_judge")
    result = run(name="j", dataset=rows(6), scorers=[judge], store=False)
    assert result.status == "completed"
    assert result.metrics["llm_judge"] == 0.0  # the 0.0s enter the mean
    assert result.malformed == {"llm_judge": (6, 6)}
    stats = result.summary["scorers"]["llm_judge"]
    assert stats["count"] == 6 and stats["mean"] == 0.0 and stats["errors"] == 0
    assert stats["malformed"] == 6 and stats["judged"] == 6
    assert stats["malformed_scored"] == 6
    assert result.error_count == 6 and not result.ok and result.pass_rate == 0.0
    assert result.errors == 6  # what a pytest policy's max_errors reads
    assert result.to_dict()["malformed"] == {"llm_judge": [6, 6]}
    with pytest.raises(EvalFailed, match="6 error"):
        assert_run(result, min_pass_rate=0.0)
    for sample in result.samples:
        score = sample.scores["llm_judge"]
        assert score.value == 0.0 and score.raw == 0.0 and score.error is None
        assert score.malformed == "verdict gives the key 'score' twice"
        assert sample.passed is False
        assert sample.errors == {"llm_judge": "malformed judge verdict: " + score.malformed}
        # what the judge answered stays recorded
        assert score.metadata["parse_failures"] == 1
        assert score.metadata["verdicts"][0]["raw"] == DUPLICATE
    [(message, count)] = result.top_errors
    assert count == 6 and message.startswith("llm_judge: malformed judge verdict: ")
    # a tolerated budget still says how many verdicts were malformed
    tolerant = run(name="j", dataset=rows(4), scorers=[judge], store=False, max_error_rate=1.0)
    assert tolerant.ok and tolerant.malformed == {"llm_judge": (4, 4)}
    assert tolerant.metrics["llm_judge"] == 0.0


def test_readme_judge_malformed_verdict_scores_zero_and_is_counted(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SARMALINK_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("SARMALINK_API_KEY", "sk-readme")
    openai_server.responder = lambda body: Reply('{"score": "eight", "reason": "fine"}')
    faithful = llm_judge(
        rubric="Reward summaries faithful to the source that omit nothing important.",
        provider="sarmalink", model="smart", name="faithfulness",
        samples=3,   # three concurrent calls, median verdict
    )  # fmt: skip
    result = run(name="readme", dataset=rows(2), scorers=[faithful], store=False)
    assert result.metrics == {"faithfulness": 0.0}
    assert result.malformed == {"faithfulness": (2, 2)} and result.error_count == 2
    score = result.samples[0].scores["faithfulness"]
    assert score.value == 0.0 and score.error is None
    # counted as a parse failure in the score's metadata, so a report tells it from a low score
    assert score.metadata["parse_failures"] == 3
    assert "'score' must be a number, got str" in (score.malformed or "")
    assert [v["error"] for v in score.metadata["verdicts"]] == [
        "'score' must be a number, got str"
    ] * 3


def test_a_malformed_verdict_is_zero_in_the_mean_beside_readable_ones(
    openai_server: OpenAIServer,
) -> None:
    def reply(body: Any) -> Reply:
        text = json.dumps(body)
        return Reply(PROSE if "r1" in text else '{"score": 9, "reason": "good"}')

    openai_server.responder = reply
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", name="j")
    dataset = [{"id": f"r{i}", "prompt": f"q r{i}", "prediction": "a"} for i in range(3)]
    result = run(name="mix", dataset=dataset, scorers=[judge], store=False)
    assert result.metrics["j"] == pytest.approx((0.9 + 0.0 + 0.9) / 3)
    assert result.malformed == {"j": (1, 3)} and result.error_count == 1
    bad = result.samples[1].scores["j"]
    assert bad.value == 0.0 and bad.malformed == "verdict is not a single JSON object"
    assert [s.passed for s in result.samples] == [True, False, True]


def test_pairwise_wrong_vocabulary_is_a_flagged_tie_that_never_passes(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = lambda body: Reply('{"winner": "A"}')
    judge = pairwise_judge("Better?", provider=endpoint(openai_server), model="m")
    result = run(name="p", dataset=rows(6), scorers=[judge], store=False)
    assert result.malformed == {"pairwise": (6, 6)}
    assert result.metrics["pairwise"] == 0.5  # a malformed order expresses no preference
    assert result.pass_rate == 0.0 and result.error_count == 6 and not result.ok
    for sample in result.samples:
        score = sample.scores["pairwise"]
        assert score.value == 0.5 and score.raw == "tie" and score.malformed
        assert not sample.passed


def test_a_readable_majority_of_judge_samples_still_scores(openai_server: OpenAIServer) -> None:
    replies = iter(['{"score": 8, "reason": "a"}', "garbage", '{"score": 9, "reason": "b"}'])
    openai_server.responder = lambda body: Reply(next(replies))
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", samples=3)
    result = run(name="j", dataset=rows(1), scorers=[judge], store=False)
    score = result.samples[0].scores["llm_judge"]
    # the malformed sample is a 0.0 in the median of (0.8, 0.0, 0.9); the median is readable
    assert score.error is None and score.value == pytest.approx(0.8)
    assert score.malformed is None and score.metadata["parse_failures"] == 1
    assert result.ok and result.malformed == {"llm_judge": (0, 1)}


def test_a_median_resting_on_malformed_samples_is_flagged(openai_server: OpenAIServer) -> None:
    replies = iter(['{"score": 8, "reason": "a"}', "garbage", "more garbage"])
    openai_server.responder = lambda body: Reply(next(replies))
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", samples=3)
    result = run(name="j", dataset=rows(1), scorers=[judge], store=False)
    score = result.samples[0].scores["llm_judge"]
    assert score.value == 0.0 and score.error is None  # median of (0.8, 0.0, 0.0)
    assert score.malformed is not None and score.malformed.startswith("2 of 3 verdicts")
    assert score.metadata["parse_failures"] == 2
    assert result.malformed == {"llm_judge": (1, 1)} and not result.ok


def test_non_judge_scorers_report_no_malformed_share(openai_server: OpenAIServer) -> None:
    result = run(name="x", dataset=rows(2), scorers=["exact_match"], store=False)
    assert result.malformed == {}


def test_rubric_criteria_malformed_score_zero(openai_server: OpenAIServer) -> None:
    def one_bad(body: Any) -> Reply:
        verdict = {n: {"evidence": "e", "score": 5, "reason": "ok"} for n in POINTS}
        verdict["clarity"] = {"evidence": "e", "score": 9}  # off its 1..5 scale
        return Reply(json.dumps({"criteria": verdict}))

    openai_server.responder = one_bad
    result = run(name="r", dataset=rows(1), scorers=[judge_on(openai_server)], store=False)
    score = result.samples[0].scores["qa_quality"]
    # clarity (weight 0.3) counts 0.0; the others are at the top of their scale
    assert score.value == pytest.approx(0.7) and score.error is None
    assert score.metadata["malformed_criteria"] == ["clarity"] and score.malformed is None
    entries = ", ".join(f'"{n}": {{"score": 4, "evidence": "e"}}' for n in POINTS)
    twice = '{"criteria": {' + entries + ', "clarity": {"score": 1, "evidence": "e"}}}'
    openai_server.responder = lambda body: Reply(twice)
    result = run(name="r", dataset=rows(2), scorers=[judge_on(openai_server)], store=False)
    score = result.samples[0].scores["qa_quality"]
    assert score.value == 0.0 and score.error is None
    assert "'clarity' twice" in (score.malformed or "")
    assert result.metrics["qa_quality"] == 0.0 and result.malformed == {"qa_quality": (2, 2)}
    assert not result.ok


def test_multi_judge_drops_a_malformed_member(openai_server: OpenAIServer) -> None:
    def reply(body: Any) -> Reply:
        return Reply(DUPLICATE if body["model"] == "bad" else '{"score": 7, "reason": "ok"}')

    openai_server.responder = reply
    good = llm_judge("Right?", provider=endpoint(openai_server), model="good", name="good")
    bad = llm_judge("Right?", provider=endpoint(openai_server), model="bad", name="bad")
    result = run(name="m", dataset=rows(2), scorers=[multi_judge([good, bad])], store=False)
    score = result.samples[0].scores["multi_judge"]
    assert score.value == pytest.approx(0.7) and score.error is None and score.malformed is None
    assert score.metadata["unreadable_judges"] == ["bad"]
    assert result.malformed == {"multi_judge": (0, 2)}
    only_bad = run(name="m", dataset=rows(2), scorers=[multi_judge([bad])], store=False)
    assert only_bad.malformed == {"multi_judge": (2, 2)} and not only_bad.ok
    assert only_bad.metrics["multi_judge"] == 0.0


def test_stored_malformed_verdicts_keep_value_and_flag(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply(PROSE)
    judge = llm_judge("Right?", provider=endpoint(openai_server), model="m", name="grader")
    db = tmp_path / "runs.db"
    result = run(name="s", dataset=rows(3), scorers=[judge], store=str(db))
    store = Store(db)
    stored = list(store.iter_samples(result.id))
    assert [s.scores["grader"].value for s in stored] == [0.0, 0.0, 0.0]
    assert all(s.scores["grader"].malformed for s in stored)
    assert all(s.passed is False for s in stored)
    doc = build_report(store, result.id).to_dict()
    assert doc["judges"]["grader"]["malformed"] == 3
    assert doc["judges"]["grader"]["parse_failures"] == 3
    [reason] = [r for r in doc["failure_reasons"] if r["kind"] == "malformed"]
    assert reason["key"] == "grader" and reason["count"] == 3
    assert reason["reason"] == "verdict is not a single JSON object"
    assert "malformed samples" in render_markdown(doc)
    assert "malformed samples" in " ".join(render_text(doc).split())


def test_cli_scores_zero_warns_and_exits_3(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
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
    env = {"JUDGE_URL": openai_server.base_url, "COLUMNS": "200"}
    argv = ["run", "e.yaml", "--db", "r.db", "-q"]

    # the one real process for ``aieval run`` in this file; the tolerated rerun runs in-process
    done = subprocess.run(
        [sys.executable, "-m", "aieval", *argv], cwd=tmp_path, env={**os.environ, **env},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    text = " ".join(done.stdout.split())
    assert "grader: 5 of 5 samples (100%) had a malformed judge verdict: scored 0.0" in text
    assert "completed with errors" in text
    [run_row] = Store(tmp_path / "r.db").list_runs()
    stored = list(Store(tmp_path / "r.db").iter_samples(run_row.id))
    assert [s.scores["grader"].value for s in stored] == [0.0] * 5
    tolerated = run_main(capsys, monkeypatch, *argv, "--max-error-rate", "1", cwd=tmp_path, env=env)
    assert tolerated.returncode == 0, tolerated.stdout + tolerated.stderr
    assert "5 of 5 samples (100%) had a malformed judge verdict" in " ".join(
        tolerated.stdout.split()
    )


def _as_before(sample: SampleRecord) -> SampleRecord:
    """``sample`` as runs stored it before a malformed verdict kept its 0.0: no value, an error."""
    out = copy.deepcopy(sample)
    for score in out.scores.values():
        if score.malformed:
            score.error, score.value = f"malformed judge verdict: {score.malformed}", None
    return out


def test_older_stores_with_malformed_as_none_are_still_detected(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    def reply(body: Any) -> Reply:
        return Reply(PROSE if body["model"] == "bad" else '{"score": 7, "reason": "ok"}')

    openai_server.responder = reply
    db = tmp_path / "runs.db"
    dataset = [{"id": f"r{i}", "prompt": f"q{i}", "prediction": "a"} for i in range(8)]

    def judged(model: str) -> str:
        judge = llm_judge("Right?", provider=endpoint(openai_server), model=model, name="j")
        return run(name="cmp", dataset=dataset, scorers=[judge], store=str(db)).id

    readable, malformed = judged("good"), judged("bad")
    store = Store(db)
    old = list(map(_as_before, store.iter_samples(malformed)))
    assert all(s.scores["j"].value is None and s.scores["j"].malformed for s in old)
    before = store_run(store, old, config=store.get_run(malformed).config)
    for run_id in (malformed, before):  # each way of storing it is detected the same
        samples = list(store.iter_samples(run_id))
        aggregator = Aggregator(["j"])
        for sample in samples:
            aggregator.add(sample)
        summary = aggregator.summary()
        stats = summary.scorers["j"]
        assert stats.malformed == stats.judged == 8
        assert summary.errored_samples == 8
        counted = RunResult(run_id, "cmp", "completed", None, None, "", {}, 0.0, summary, 0.0)
        assert counted.errors == 8 and counted.malformed == {"j": (8, 8)}  # each once
        assert build_report(store, run_id).to_dict()["judges"]["j"]["malformed"] == 8
        as_baseline = decision_rule(compare_runs(store, run_id, readable), RULE)
        assert as_baseline.outcome == "inconclusive"
        assert "baseline judge j 8/8" in as_baseline.reason
        as_candidate = decision_rule(compare_runs(store, readable, run_id), RULE)
        assert as_candidate.outcome == "fail" and "j 8/8" in as_candidate.reason
