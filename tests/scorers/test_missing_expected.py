"""A reference scorer on a row without ``expected`` records an error, never a score against ""."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.judges.helpers import provider_for
from tests.support.openai_server import OpenAIServer

from aieval import Store, run
from aieval.errors import ScorerError
from aieval.scorers import (
    Scorer,
    bleu,
    chrf,
    exact_match,
    json_valid,
    pairwise_judge,
    rouge_l,
    token_f1,
)
from aieval.scorers.tools import tool_call_scorer

MISSING = "no expected answer for this example"

REFERENCE_SCORERS = [
    pytest.param(exact_match, id="exact_match"),
    pytest.param(exact_match.with_options(normalize="squad"), id="exact_match-squad"),
    pytest.param(token_f1, id="token_f1"),
    pytest.param(token_f1.with_options(case_sensitive=True), id="token_f1-cased"),
    pytest.param(token_f1.with_options(normalize="squad"), id="token_f1-squad"),
    pytest.param(rouge_l, id="rouge_l"),
    pytest.param(rouge_l.with_options(tokenizer="rouge_score"), id="rouge_l-rouge_score"),
    pytest.param(bleu, id="bleu"),
    pytest.param(chrf, id="chrf"),
    pytest.param(tool_call_scorer("selection"), id="tool_selection"),
    pytest.param(tool_call_scorer("arguments_f1"), id="tool_arguments_f1"),
]


@pytest.mark.parametrize("metric", REFERENCE_SCORERS)
async def test_reference_scorer_without_expected_is_an_error(metric: Scorer) -> None:
    for prediction in ("", "yes"):
        with pytest.raises(ScorerError, match=MISSING) as caught:
            await metric.score(prediction, None)
        assert metric.name in str(caught.value)


@pytest.mark.parametrize("metric", REFERENCE_SCORERS[:7])
async def test_an_explicit_empty_expected_is_still_compared(metric: Scorer) -> None:
    found = await metric.score("yes", "")
    assert found.value == 0.0


async def test_scorers_that_need_no_expected_are_unaffected() -> None:
    assert (await json_valid.score('{"a": 1}', None)).value == 1.0
    assert (await json_valid.score("{a: 1}", None)).value == 0.0


def _rows() -> list[dict[str, Any]]:
    return [
        {"id": "labelled", "prompt": "p1", "expected": "yes", "prediction": "yes"},
        {"id": "unlabelled", "prompt": "p2", "prediction": ""},
        {"id": "json", "prompt": "p3", "expected": None, "prediction": "{}"},
    ]


def test_run_records_the_missing_expected_as_that_samples_error(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    result = run(name="unlabelled", dataset=_rows(), scorers=[exact_match, json_valid], store=db)

    samples = {s.id: s for s in Store(db).iter_samples(result.id)}
    assert samples["labelled"].values == {"exact_match": 1.0, "json_valid": 0.0}
    for name in ("unlabelled", "json"):
        sample = samples[name]
        assert sample.values["exact_match"] is None
        assert MISSING in sample.errors["exact_match"]
        assert sample.passed is False
    assert samples["unlabelled"].values["json_valid"] == 0.0
    assert samples["json"].values["json_valid"] == 1.0

    stats = result.summary["scorers"]["exact_match"]
    assert (stats["count"], stats["errors"]) == (1, 2)
    assert result.metrics["exact_match"] == 1.0
    assert result.summary["scorers"]["json_valid"]["errors"] == 0
    assert result.error_count == 2
    assert any(MISSING in message for message, _ in result.top_errors)


def test_cli_run_counts_the_unlabelled_rows_as_errors(tmp_path: Path) -> None:
    with (tmp_path / "data.jsonl").open("w") as handle:
        for row in _rows():
            handle.write(json.dumps(row) + "\n")
    (tmp_path / "ev.yaml").write_text(
        "name: unlabelled\ndataset: data.jsonl\nscorers: [exact_match, json_valid]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "run", "ev.yaml", "--db", "runs.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr  # samples errored
    assert "2 errored samples" in done.stdout
    assert f"2 × exact_match: scorer 'exact_match': {MISSING}" in done.stdout
    assert (tmp_path / "runs.db").is_file()


async def test_pairwise_judge_without_expected_is_an_error_and_calls_no_judge(
    openai_server: OpenAIServer,
) -> None:
    judge = pairwise_judge("Prefer the correct answer.", provider=provider_for(openai_server),
                           model="pair-model", name="pairwise", cache=False)  # fmt: skip
    with pytest.raises(ScorerError, match=f"'pairwise': {MISSING}"):
        await judge.score("an answer", None, {"prompt": "q"})
    assert openai_server.requests == []
