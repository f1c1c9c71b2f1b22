"""Missing evidence never promotes: each coverage case through ``aieval compare`` (in-process),
with its exit code (1 block, 3 inconclusive) and its own reason line; a usage error in a real
process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import Cli

from aieval import run, scorer
from aieval.store import Store

CRASH = "<<scorer crashes on this>>"


@scorer(name="checked")
def checked(prediction: str, expected: str) -> float:
    """Exact match that raises on a marked prediction, as a broken scorer does."""
    if prediction == CRASH:
        raise ValueError("the checker could not parse this answer")
    return float(prediction == expected)


def _rows(n: int, *, crash: range | None = None) -> list[dict[str, Any]]:
    crash = crash or range(0)
    return [
        {
            "id": f"q{i:03d}",
            "prompt": f"question {i}",
            "expected": "yes",
            "prediction": CRASH if i in crash else ("yes" if i % 5 else "no"),
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    db = tmp_path_factory.mktemp("evidence") / "runs.db"
    store = Store(db)
    datasets = {
        "baseline": _rows(60),
        "stopped_early": _rows(60)[:45],
        "unscored_subset": _rows(60, crash=range(10, 20)),
        "nothing_scored": _rows(60, crash=range(60)),
        "nothing_scored_again": _rows(60, crash=range(60)),
        "one_baseline": _rows(1),
        "one_candidate": _rows(1),
    }
    ids = {
        label: run(name=label, dataset=rows, scorers=[checked], store=store).id
        for label, rows in datasets.items()
    }
    store.close()
    return db, ids


def compare(cli: Cli, db: Path, baseline: str, candidate: str) -> tuple[int, dict[str, Any]]:
    """``aieval compare --format json`` (in-process: what it decides is tested, not its
    process): exit code and document."""
    done = cli("compare", baseline, candidate, "--format", "json", env={"AIEVAL_DB": str(db)})
    return done.returncode, json.loads(done.stdout)


def _rule(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in doc["decision"]["rules"] if r["rule"] == name)


@pytest.mark.parametrize(
    ("base", "cand", "code", "outcome", "rule", "words"),
    [
        pytest.param("baseline", "stopped_early", 1, "block", "candidate_coverage",
                     "15 missing from the candidate run", id="stopped-early"),
        pytest.param("baseline", "unscored_subset", 1, "block", "candidate_coverage",
                     "10 not scored by the candidate", id="unscored-subset"),
        pytest.param("baseline", "nothing_scored", 1, "block", "candidate_coverage",
                     "60 not scored by the candidate", id="candidate-scored-nothing"),
        pytest.param("nothing_scored", "nothing_scored_again", 3, "inconclusive",
                     "candidate_coverage", "nothing was scored in either run",
                     id="nothing-scored-either-side"),
        pytest.param("one_baseline", "one_candidate", 3, "inconclusive", "paired_examples",
                     "only 1 examples were scored in both runs", id="one-example"),
    ],
)  # fmt: skip
def test_missing_evidence_never_promotes(
    runs: tuple[Path, dict[str, str]],
    base: str,
    cand: str,
    code: int,
    outcome: str,
    rule: str,
    words: str,
    in_process: Cli,
) -> None:
    db, ids = runs
    exit_code, doc = compare(in_process, db, ids[base], ids[cand])
    assert (exit_code, doc["decision"]["outcome"]) == (code, outcome)
    assert doc["decision"]["promote"] is False
    found = _rule(doc, rule)
    assert found["outcome"] == ("fail" if outcome == "block" else "inconclusive")
    assert words in found["reason"], found["reason"]
    assert found["reason"] in doc["decision"]["summary"]


def test_within_tolerance_the_gaps_count_at_zero_points(runs: tuple[Path, dict[str, str]]) -> None:
    """Tolerating the gaps does not let them vanish: the 15 missing examples score 0."""
    from aieval.report import PromotionPolicy, compare_runs

    db, ids = runs
    with Store(db) as store:
        policy = PromotionPolicy(coverage_tolerance=0.5)
        result = compare_runs(store, ids["baseline"], ids["stopped_early"], policy=policy)
    assert _rule(result.to_dict(), "candidate_coverage")["outcome"] == "pass"
    score = _rule(result.to_dict(), "weighted_score_noninferior")
    assert score["details"]["n"] == 60
    # 48 of 60 baseline examples pass at 100; the candidate keeps 36 of them and loses 12.
    assert score["details"]["mean_delta"] == pytest.approx(-100 * 12 / 60)
    assert result.outcome == "block"


def test_a_run_compared_with_itself_is_a_usage_error(runs: tuple[Path, dict[str, str]]) -> None:
    """In a real process: the exit status and stderr as a shell sees them."""
    db, ids = runs
    done = subprocess.run(
        [sys.executable, "-m", "aieval", "compare", ids["baseline"], ids["baseline"]],
        capture_output=True, text=True, env={**os.environ, "AIEVAL_DB": str(db)}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "are the same run" in done.stderr and "Traceback" not in done.stderr
