"""build_report on real stores: every key of the bundle, numbers against direct computation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aieval import run
from aieval._records import SampleRecord, ScoreRecord
from aieval.errors import RunNotFoundError
from aieval.report import build_report
from aieval.scorers import exact_match, token_f1
from aieval.stats import wilson_interval
from aieval.store import Store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"

REPORT_KEYS = {
    "kind", "schema_version", "run", "samples", "target_errors", "graded", "pass_rate",
    "weighted_score", "grades", "gates", "criteria", "failure_reasons", "judges", "latency",
    "tokens", "cost", "retries", "cached", "cache", "groups", "warnings",
}  # fmt: skip
RUN_KEYS = {
    "id", "name", "status", "model", "provider", "dataset", "dataset_hash", "n_examples",
    "created_at", "started_at", "finished_at", "duration_s", "git_sha", "workflow",
}  # fmt: skip
CRITERION_KEYS = {
    "name", "kind", "n", "errors", "not_applicable", "mean", "std", "low", "high", "method",
    "quantiles", "histogram", "floor", "floor_violations",
}  # fmt: skip


def _rows(n: int) -> list[dict[str, Any]]:
    words = ["alpha beta", "gamma", "delta epsilon zeta", "eta"]
    rows = []
    for i in range(n):
        expected = words[i % 4]
        prediction = expected if i % 3 else expected.split()[0] + " wrong"
        meta: dict[str, Any] = {"lang": "en" if i % 2 else "fr"}
        if i % 5 == 0:
            meta = {}
        rows.append(
            {
                "id": f"r{i}",
                "input": f"q{i}",
                "expected": expected,
                "prediction": prediction,
                "metadata": meta,
            }
        )
    return rows


def test_ungraded_report_numbers_match_direct_computation(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    result = run(name="txt", dataset=_rows(40), scorers=[exact_match, token_f1], store=store)
    report = build_report(store, result.id, slice_by=["lang"])
    data = report.to_dict()
    assert set(data) == REPORT_KEYS and set(data["run"]) == RUN_KEYS
    assert data["kind"] == "report" and data["graded"] is False and data["grades"] is None
    samples = list(store.iter_samples(result.id))
    passed = sum(bool(s.passed) for s in samples)
    wilson = wilson_interval(passed, len(samples))
    assert data["pass_rate"] == {
        "estimate": wilson.estimate,
        "low": wilson.low,
        "high": wilson.high,
        "passed": passed,
        "n": 40,
        "method": "Wilson score",
    }
    weighted = [100 * np.mean([v for v in s.values.values() if v is not None]) for s in samples]
    ws = data["weighted_score"]
    assert ws["mean"] == pytest.approx(np.mean(weighted))
    assert ws["std"] == pytest.approx(np.std(weighted, ddof=1))
    assert ws["low"] < ws["mean"] < ws["high"] and ws["n"] == 40
    by_name = {c["name"]: c for c in data["criteria"]}
    assert set(by_name) == {"exact_match", "token_f1"}
    for name, column in by_name.items():
        values = [s.values[name] for s in samples]
        assert set(column) == CRITERION_KEYS and column["kind"] == "scorer"
        assert column["mean"] == pytest.approx(np.mean(values))
        assert column["quantiles"]["p50"] == pytest.approx(np.median(values))
        assert column["histogram"]["counts"] == np.histogram(values, 10, (0, 1))[0].tolist()
        assert len(column["histogram"]["edges"]) == 11
    assert data["gates"] == [] and data["groups"]["workflow"] == []
    slices = {g["key"]: g for g in data["groups"]["slices"]["lang"]}
    assert set(slices) == {"en", "fr", "(missing)"}
    assert slices["(missing)"]["samples"] == 8
    assert sum(g["samples"] for g in slices.values()) == 40
    missing_ids = {f"r{i}" for i in range(0, 40, 5)}
    missing_scores = [w for s, w in zip(samples, weighted, strict=True) if s.id in missing_ids]
    assert slices["(missing)"]["weighted_score_mean"] == pytest.approx(np.mean(missing_scores))
    reasons = data["failure_reasons"]
    assert reasons and all(r["kind"] == "threshold" for r in reasons)
    assert reasons[0]["count"] == 40 - passed and len(reasons[0]["sample_ids"]) <= 5
    json.dumps(data)


def _judge_score(value: float, failures: int, inconsistent: bool | None = None) -> ScoreRecord:
    meta: dict[str, Any] = {"parse_failures": failures, "samples": 3}
    if inconsistent is not None:
        meta = {"parse_failures": failures, "inconsistent": inconsistent, "orders": [{}, {}]}
    return ScoreRecord(value=value, reason="the answer ignores the question", metadata=meta)


def test_judge_rates_errors_usage_and_warnings(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    run_id = store.create_run(name="judged", n_examples=12, config={"pass_threshold": 0.5})
    records = []
    for i in range(10):
        records.append(
            SampleRecord(
                id=f"s{i}",
                index=i,
                input="q",
                passed=i >= 4,
                latency_s=float(i + 1),
                input_tokens=10,
                output_tokens=5,
                cost=0.01,
                retries=i % 2,
                cached=i < 3,
                scores={
                    "judge": _judge_score(0.2 if i < 4 else 0.9, failures=1 if i < 2 else 0),
                    "pairwise": _judge_score(0.5, 0, inconsistent=i < 3),
                },
            )
        )
    records.append(SampleRecord(id="s10", index=10, input="q", error="timeout", passed=False))
    store.record_samples(run_id, records)
    store.finish_run(run_id, status="completed")
    data = build_report(store, run_id).to_dict()
    judge, pairwise = data["judges"]["judge"], data["judges"]["pairwise"]
    assert judge["n"] == 10 and judge["parse_failures"] == 2
    assert judge["parse_failure_rate"] == pytest.approx(2 / 30)
    assert judge["inconsistency_rate"] is None and judge["warning"] is None
    assert pairwise["inconsistent"] == 3 and pairwise["inconsistency_rate"] == pytest.approx(0.3)
    assert "30.0%" in pairwise["warning"]
    assert any("judge pairwise" in w for w in data["warnings"])
    assert any("10 of 12 examples" in w or "11 of 12 examples" in w for w in data["warnings"])
    assert data["target_errors"] == 1 and data["samples"] == 11
    kinds = {(r["kind"], r["key"]): r for r in data["failure_reasons"]}
    assert kinds[("judge", "judge")]["count"] == 4
    assert kinds[("error", "target")]["sample_ids"] == ["s10"]
    latencies = [float(i + 1) for i in range(10)]
    assert data["latency"]["p95"] == pytest.approx(np.quantile(latencies, 0.95))
    assert data["latency"]["max"] == 10.0
    assert data["tokens"]["target"] == {"input": 100, "output": 50, "total": 150}
    assert data["tokens"]["judges"] == {"input": 0, "output": 0, "total": 0}
    assert {k: data["tokens"][k] for k in ("input", "output", "total")} == data["tokens"]["target"]
    assert data["cost"] == pytest.approx(0.1) and data["retries"] == 5 and data["cached"] == 3
    # the failed target counts 0 in the weighted score
    assert data["weighted_score"]["n"] == 11


def test_graded_report_gates_grades_criteria_agents(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    result = run(
        name="review",
        dataset=EXAMPLES / "code_review_runs",
        scorers=[],
        workflow=EXAMPLES / "code_review.yaml",
        store=store,
    )
    data = build_report(store, "review").to_dict()
    samples = list(store.iter_samples(result.id))
    evaluations = [s.verdict.workflow for s in samples]
    assert data["graded"] is True and data["run"]["workflow"]["id"] == "code_review"
    grades = [e["grade"] for e in evaluations]
    assert data["grades"] == {g: grades.count(g) for g in "ABCDF"}
    rates = [g["rate"] for g in data["gates"]]
    assert rates == sorted(rates, reverse=True)
    for gate in data["gates"]:
        failures = sum(not e["hard_gates"][gate["name"]] for e in evaluations)
        assert gate["failures"] == failures and gate["n"] == len(samples)
        assert gate["low"] <= gate["rate"] <= gate["high"]
    correctness = next(c for c in data["criteria"] if c["name"] == "correctness")
    values = [
        c["normalized"] for e in evaluations for c in e["criteria"] if c["name"] == "correctness"
    ]
    assert correctness["kind"] == "criterion" and correctness["mean"] == pytest.approx(
        np.mean(values)
    )
    assert correctness["floor"] == 0.7
    assert correctness["floor_violations"] == sum(v < 0.7 for v in values)
    assert {r["kind"] for r in data["failure_reasons"]} >= {"gate", "floor"}
    agents = {a["name"]: a for a in data["groups"]["agents"]}
    reviewer_steps = sum(
        e["agents"]["reviewer"]["steps"] for e in evaluations if "reviewer" in e["agents"]
    )
    assert agents["reviewer"]["steps"] == reviewer_steps
    assert agents["reviewer"]["runs"] == sum("reviewer" in e["agents"] for e in evaluations)
    workflow = data["groups"]["workflow"]
    assert [w["key"] for w in workflow] == ["code_review"] and workflow[0]["samples"] == 6
    assert workflow[0]["grades"] == data["grades"]


def test_empty_and_unknown_runs(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    run_id = store.create_run(name="empty")
    data = build_report(store, run_id).to_dict()
    assert data["samples"] == 0 and data["weighted_score"] is None
    assert data["pass_rate"]["estimate"] is None and data["latency"]["p50"] is None
    assert any("running" in w for w in data["warnings"])
    with pytest.raises(RunNotFoundError):
        build_report(store, "no-such-run")
