import json
import re
from typing import Any

import pytest
from tests.judges.helpers import provider_for, user_text
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval.grading import normalize
from aieval.scorers import compare_pairwise, pairwise_judge

_FIRST = re.compile(r"<FIRST_RESPONSE-[0-9a-f]+>\n(.*?)\n</FIRST_RESPONSE", re.DOTALL)


def first_response(body: Any) -> str:
    found = _FIRST.search(user_text(body))
    assert found is not None
    return found.group(1)


def always_first(body: Any) -> Reply:
    return Reply(json.dumps({"winner": "first", "reason": "position A"}))


def prefers(word: str):  # type: ignore[no-untyped-def]
    """A consistent judge: prefers whichever response contains ``word``."""

    def reply(body: Any) -> Reply:
        winner = "first" if word in first_response(body) else "second"
        return Reply(json.dumps({"winner": winner, "reason": f"mentions {word}"}))

    return reply


def judge_on(server: OpenAIServer, **kwargs: Any):  # type: ignore[no-untyped-def]
    return pairwise_judge(
        "Prefer the correct answer.", provider=provider_for(server), model="pair-model", **kwargs
    )


def test_position_biased_judge_yields_ties_and_a_warning(openai_server: OpenAIServer) -> None:
    openai_server.responder = always_first
    prompts = [f"question {i}" for i in range(6)]
    report = compare_pairwise(
        prompts,
        [f"a{i}" for i in range(6)],
        [f"b{i}" for i in range(6)],
        judge=judge_on(openai_server),
    )
    assert (report.wins, report.losses, report.ties) == (0, 0, 6)
    assert report.inconsistency_rate == 1.0
    assert report.normalized == normalize("pairwise", wins=0, losses=0, ties=6)
    assert report.warnings and "inconsistency rate" in report.warnings[0]
    assert len(openai_server.requests) == 12


def test_consistent_judge_counts_wins_and_losses(openai_server: OpenAIServer) -> None:
    openai_server.responder = prefers("Paris")
    a = ["Paris", "Lyon", "Paris is right", "Nice"]
    b = ["Lyon", "Paris", "Rome", "Marseille"]
    report = compare_pairwise(["q"] * 4, a, b, judge=judge_on(openai_server))
    # Example 4 has no "Paris" on either side: each order picks "second", so they disagree.
    assert (report.wins, report.losses, report.ties) == (2, 1, 1)
    assert report.inconsistent == 1 and report.inconsistency_rate == 0.25
    assert report.normalized == pytest.approx((2 + 0.5) / 4)
    assert report.warnings


def test_consistency_at_threshold_does_not_warn(openai_server: OpenAIServer) -> None:
    openai_server.responder = prefers("good")
    n = 10
    a = ["good"] * 9 + ["x"]
    b = ["bad"] * 9 + ["y"]
    report = compare_pairwise(["q"] * n, a, b, judge=judge_on(openai_server))
    assert report.inconsistency_rate == pytest.approx(0.10)
    assert report.warnings == []


def test_adjudication_rerun_decides_a_flip(openai_server: OpenAIServer) -> None:
    answers = iter(["first", "first", "first", "second"])  # round 0 flips, round 1 agrees on A

    def reply(body: Any) -> Reply:
        return Reply(json.dumps({"winner": next(answers), "reason": "r"}))

    openai_server.responder = reply
    report = compare_pairwise(
        ["q"],
        ["same"],
        ["same"],
        judge=judge_on(openai_server, adjudication_rounds=1),
        concurrency=1,
    )
    outcome = report.outcomes[0]
    assert outcome.inconsistent and outcome.adjudicated
    assert report.inconsistent == 1 and report.wins + report.losses == 1
    salts = {o["round"] for o in outcome.orders}
    assert salts == {0, 1}


def test_malformed_preference_is_a_tie_and_counted(openai_server: OpenAIServer) -> None:
    openai_server.responder = lambda body: Reply("FIRST is clearly better")
    report = compare_pairwise(["q"], ["a"], ["b"], judge=judge_on(openai_server))
    assert report.ties == 1 and report.parse_failures == 2 and report.inconsistent == 0


def test_pairwise_as_a_run_scorer_compares_prediction_with_expected(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = prefers("Paris")
    result = run(
        name="pw",
        dataset=[
            {"prompt": "q", "prediction": "Paris", "expected": "Lyon"},
            {"prompt": "q", "prediction": "Lyon", "expected": "Paris"},
        ],
        scorers=[judge_on(openai_server)],
        store=False,
    )
    values = [s.scores["pairwise"].value for s in result.samples]
    assert values == [1.0, 0.0]
    meta = result.samples[0].scores["pairwise"].metadata
    assert [o["order"] for o in meta["orders"]] == ["AB", "BA"]
    assert meta["prompt_version"].startswith("pairwise-") and meta["judge_model"] == "pair-model"


def test_mismatched_lengths_are_a_clear_error(openai_server: OpenAIServer) -> None:
    from aieval.errors import ConfigError

    with pytest.raises(ConfigError, match="one output of each"):
        compare_pairwise(["q", "r"], ["a"], ["b", "c"], judge=judge_on(openai_server))


def wrong_vocabulary(body: Any) -> Reply:
    """A judge that answers in its own words: valid JSON, the wrong labels."""
    return Reply(json.dumps({"winner": "A", "reason": "A is better"}))


def test_wrong_vocabulary_judge_warns_instead_of_a_silent_tie(
    openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.responder = wrong_vocabulary
    n = 8
    report = compare_pairwise(
        ["q"] * n, [f"a{i}" for i in range(n)], [f"b{i}" for i in range(n)],
        judge=judge_on(openai_server),
    )  # fmt: skip
    assert (report.wins, report.losses, report.ties) == (0, 0, n)
    assert report.parse_failures == 2 * n and report.parse_failure_rate == 1.0
    assert report.unparsed_ties == n and report.win_rate is None
    assert report.warnings and "16 of 16 verdicts (100%) were malformed" in report.warnings[0]
    assert "'winner' must be first, second or tie, got 'A'" in report.warnings[0]
    assert any("malformed" in r.getMessage() for r in caplog.records)


def test_ties_from_disagreeing_orders_are_reported_beside_the_win_rate(
    openai_server: OpenAIServer,
) -> None:
    openai_server.responder = prefers("Paris")
    a = ["Paris", "Paris", "Lyon", "Nice"]
    b = ["Lyon", "Rome", "Paris", "Marseille"]
    report = compare_pairwise(["q"] * 4, a, b, judge=judge_on(openai_server))
    assert (report.wins, report.losses, report.ties) == (2, 1, 1)
    assert report.inconsistent_ties == 1 and report.unparsed_ties == 0
    assert report.win_rate == pytest.approx(2 / 3)


def test_a_mostly_unparseable_judge_blocks_promotion(
    openai_server: OpenAIServer, tmp_path: Any
) -> None:
    """Through ``run`` and ``compare_runs``: the candidate's judge answered in the wrong
    vocabulary, so its 0.5 scores are not evidence and the judge rule fails."""
    from aieval.report import compare_runs
    from aieval.store import Store

    rows = [{"id": f"q{i}", "prompt": f"q{i}", "expected": "Lyon", "prediction": "Paris"}
            for i in range(30)]  # fmt: skip
    store = Store(tmp_path / "runs.db")
    ids = []
    for responder in (prefers("Paris"), wrong_vocabulary):
        openai_server.responder = responder
        judge = judge_on(openai_server, cache=False)
        ids.append(run(name="pairwise", dataset=rows, scorers=[judge], store=store).id)
    comparison = compare_runs(store, ids[0], ids[1])
    rule = next(r for r in comparison.decision.rules if r.rule == "judge_verdicts_readable")
    assert rule.outcome == "fail" and "pairwise 60/60 (100.0%)" in rule.reason
    assert comparison.outcome == "block"
    assert any("100.0% of verdicts were malformed" in w for w in comparison.warnings)
    store.close()
