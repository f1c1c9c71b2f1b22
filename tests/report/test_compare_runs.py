"""compare_runs end to end on real SQLite stores built by ``aieval.run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aieval import run
from aieval.errors import RunNotFoundError
from aieval.report import PromotionPolicy, compare_runs, example_numbers
from aieval.scorers import exact_match, token_f1
from aieval.store import Store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"

ANSWERS = ["paris", "berlin", "rome", "madrid", "lisbon", "vienna", "prague", "oslo"]


def _rows(n: int, broken: set[int], partial: set[int]) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        answer = ANSWERS[i % len(ANSWERS)]
        v2 = answer
        if i in broken:
            v2 = "no idea"
        elif i in partial:
            v2 = f"{answer} city"
        rows.append(
            {
                "id": f"q{i}",
                "input": f"capital #{i}",
                "expected": answer,
                "predictions": {"v1": answer if i % 10 else f"{answer} city", "v2": v2},
                "metadata": {"topic": "geo" if i % 2 else "history"},
            }
        )
    return rows


def _run(store: Store, rows: list[dict[str, Any]], model: str, name: str = "qa") -> str:
    result = run(name=name, dataset=rows, scorers=[exact_match, token_f1], model=model, store=store)
    return result.id


def test_recorded_versions_compare_example_by_example(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    rows = _rows(60, broken={3, 17}, partial={5})
    v1 = _run(store, rows, "v1")
    v2 = _run(store, rows, "v2")
    comparison = compare_runs(store, "qa", v2)
    data = comparison.to_dict()
    assert data["kind"] == "comparison" and data["baseline"]["id"] == v1
    assert data["candidate"]["id"] == v2 and data["paired"] == 60
    base = {s.id: example_numbers(s) for s in store.iter_samples(v1)}
    cand = {s.id: example_numbers(s) for s in store.iter_samples(v2)}
    metrics = {m["name"]: m for m in data["metrics"]}
    assert [m["name"] for m in data["metrics"]][:2] == ["weighted_score", "pass_rate"]
    for name, get in [
        ("weighted_score", lambda ex: ex.weighted_score),
        ("pass_rate", lambda ex: float(ex.passed)),
        ("exact_match", lambda ex: ex.scores["exact_match"]),
        ("token_f1", lambda ex: ex.scores["token_f1"]),
    ]:
        b = np.array([get(base[i]) for i in base])
        c = np.array([get(cand[i]) for i in base])
        assert metrics[name]["baseline"] == pytest.approx(b.mean())
        assert metrics[name]["candidate"] == pytest.approx(c.mean())
        assert metrics[name]["delta"] == pytest.approx(c.mean() - b.mean())
        assert metrics[name]["low"] <= metrics[name]["delta"] <= metrics[name]["high"]
        assert metrics[name]["n"] == 60
    regressed = {r["id"] for r in data["regressions"]}
    assert regressed == {"q3", "q17", "q5"}
    assert data["regressions"][0]["id"] in {"q3", "q17"}  # both lost everything: worst first
    assert "no longer passes" in data["regressions"][0]["changes"]
    # v1 was partly wrong on every tenth row; v2 answers those exactly
    improved = {r["id"] for r in data["improvements"]}
    assert improved == {f"q{i}" for i in range(0, 60, 10)} - {"q3", "q17", "q5"}
    assert data["unchanged"] == 60 - len(regressed) - len(improved)
    assert {"promote", "summary", "rules", "warnings", "policy"} <= set(data["decision"])
    assert data["tie_break"]["winner"] in {"baseline", "candidate", None}
    json.dumps(data)  # plain JSON all the way down


def test_unpaired_examples_are_listed_and_only_warn(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    rows = _rows(30, broken=set(), partial=set())
    _run(store, rows[:25], "v1")
    v2 = _run(store, rows[5:], "v2")
    data = compare_runs(store, "qa", v2).to_dict()
    assert data["paired"] == 20
    assert data["only_baseline"] == [f"q{i}" for i in range(5)]
    assert data["only_candidate"] == [f"q{i}" for i in range(25, 30)]
    assert data["only_baseline_count"] == 5 and data["only_candidate_count"] == 5
    assert any("10 examples are in only one run" in w for w in data["decision"]["warnings"])
    assert any("different dataset versions" in w for w in data["warnings"])


def test_baseline_by_name_excludes_the_candidate_and_unknown_refs_fail(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    rows = _rows(10, broken=set(), partial=set())
    only = _run(store, rows, "v1", name="solo")
    with pytest.raises(RunNotFoundError, match=f"no earlier run named 'solo' other than {only}"):
        compare_runs(store, "solo", only)
    with pytest.raises(RunNotFoundError, match="nope"):
        compare_runs(store, "nope", only)


def _workflow_runs(folder: Path, copies: int, replace: dict[str, dict[str, Any]]) -> Path:
    """``copies`` copies of every example run log, with some logs swapped for others."""
    folder.mkdir()
    for file in sorted((EXAMPLES / "code_review_runs").glob("*.json")):
        log = json.loads(file.read_text())
        for k in range(copies):
            data = replace.get(file.stem, log)
            # a new version of the same example: its own steps and outcome, the same inputs
            data = {**data, "metadata": {**data["metadata"], "inputs": log["metadata"]["inputs"]}}
            (folder / f"{file.stem}-{k}.json").write_text(json.dumps(data))
    return folder


def _graded(store: Store, folder: Path) -> str:
    result = run(
        name="review",
        dataset=folder,
        scorers=[],
        workflow=EXAMPLES / "code_review.yaml",
        store=store,
    )
    return result.id


def test_graded_workflow_pair_promotes_a_fix_and_blocks_a_breakage(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    clean = json.loads((EXAMPLES / "code_review_runs" / "cr-001-clean.json").read_text())
    broken = {**clean, "overall_status": "failed"}
    baseline = _graded(store, _workflow_runs(tmp_path / "base", 10, {}))
    fixed = _graded(store, _workflow_runs(tmp_path / "fixed", 10, {"cr-003-review-failed": clean}))
    worse = _graded(store, _workflow_runs(tmp_path / "worse", 10, {"cr-001-clean": broken}))

    good = compare_runs(store, baseline, fixed)
    assert good.promote is True, good.decision.summary
    assert {r["id"] for r in good.improvements} == {f"cr-003-review-failed-{k}" for k in range(10)}
    assert good.regressions == [] and good.improvements[0]["candidate"]["grade"] == "A"
    gate_metrics = {
        m["name"]: m for m in good.to_dict()["metrics"] if m["name"].startswith("gate:")
    }
    assert gate_metrics["gate:overall_status_success"]["delta"] == pytest.approx(-10 / 60)
    score_rule = next(r for r in good.decision.rules if r.rule == "weighted_score_noninferior")
    assert score_rule.details["verdict"] == "improved"

    bad = compare_runs(store, baseline, worse)
    assert bad.promote is False
    failed = {r.rule for r in bad.decision.rules if not r.passed}
    assert "hard_gate_failure_rate" in failed
    gate = next(r for r in bad.decision.rules if r.rule == "hard_gate_failure_rate")
    assert "overall_status_success" in gate.details["worse_gates"]
    assert all("gate overall_status_success now fails" in r["changes"] for r in bad.regressions)
    tolerant = compare_runs(
        store, baseline, worse, policy=PromotionPolicy(gate_failure_tolerance=0.2)
    )
    assert "hard_gate_failure_rate" not in {r.rule for r in tolerant.decision.rules if not r.passed}


def _stored(store: Store, name: str, scores: list[float], inconsistent: int = 0) -> str:
    from aieval._records import SampleRecord, ScoreRecord

    run_id = store.create_run(name=name, dataset_hash="same")
    store.record_samples(
        run_id,
        [
            SampleRecord(
                id=f"e{i}",
                index=i,
                input="q",
                passed=s >= 0.5,
                scores={
                    "judge": ScoreRecord(
                        s, metadata={"parse_failures": 0, "inconsistent": i < inconsistent}
                    )
                },
            )
            for i, s in enumerate(scores)
        ],
    )
    store.finish_run(run_id, status="completed")
    return run_id


def test_listing_cap_counts_and_candidate_judge_warnings(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    base = _stored(store, "j", [0.9] * 20)
    cand = _stored(store, "j", [0.2] * 12 + [0.9] * 8, inconsistent=5)
    comparison = compare_runs(store, base, cand, max_examples=3)
    assert len(comparison.regressions) == 3 and comparison.regressions_count == 12
    assert comparison.unchanged == 8 and comparison.improvements_count == 0
    assert any("candidate judge judge" in w and "25.0%" in w for w in comparison.warnings)
    assert comparison.promote is False
    everything = compare_runs(store, base, cand, max_examples=None)
    assert len(everything.regressions) == 12


def test_metric_rows_count_what_only_one_side_scored(tmp_path: Path) -> None:
    from aieval._records import SampleRecord, ScoreRecord
    from aieval.report import render_markdown, render_text

    store = Store(tmp_path / "runs.db")
    base = _stored(store, "m", [0.9] * 64)
    cand = store.create_run(name="m", dataset_hash="same")
    store.record_samples(cand, [
        SampleRecord(id=f"e{i}", index=i, input="q", passed=i >= 3,
                     scores={"judge": ScoreRecord(None, error="boom") if i < 3
                             else ScoreRecord(0.9, metadata={"parse_failures": 0})})
        for i in range(64)
    ])  # fmt: skip
    store.finish_run(cand, status="completed")
    comparison = compare_runs(store, base, cand)
    row = next(m for m in comparison.to_dict()["metrics"] if m["name"] == "judge")
    assert row["n"] == 61 and row["candidate_missing"] == 3 and row["baseline_missing"] == 0
    assert "61 (3 unscored in candidate)" in render_markdown(comparison)
    assert "3 unscored in candidate" in render_text(comparison).replace("\n", " ")
    assert comparison.decision.outcome == "block"  # and the coverage rule says why
