"""Report and comparison dicts shaped like ``RunReport.to_dict()`` / ``Comparison.to_dict()``.

Renderer tests use them so each renderer is exercised on every kind of document: a graded
workflow report, an ungraded report, a comparison that promotes and one that blocks.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from aieval._records import SampleRecord
from aieval.report import RuleResult
from aieval.store import Store

HOSTILE_ID = "<script>alert(1)</script>"


def _header(run_id: str, name: str, model: str, *, workflow: bool) -> dict[str, Any]:
    return {
        "id": run_id,
        "name": name,
        "status": "completed",
        "model": model,
        "provider": None,
        "dataset": "examples/data.jsonl",
        "dataset_hash": "9f2c1ab0",
        "n_examples": 40,
        "created_at": 1_790_000_000.0,
        "started_at": 1_790_000_000.5,
        "finished_at": 1_790_000_012.0,
        "duration_s": 11.5,
        "git_sha": "abc1234",
        "workflow": {"id": "code_review", "version": "1.2", "profile": "B"} if workflow else None,
    }


def _rate(passed: int, n: int, low: float, high: float) -> dict[str, Any]:
    return {
        "estimate": passed / n if n else None,
        "low": low,
        "high": high,
        "passed": passed,
        "n": n,
    }


def _criterion(name: str, kind: str, counts: list[int], floor: float | None) -> dict[str, Any]:
    n = sum(counts)
    centres = [(i + 0.5) / 10 for i in range(10)]
    mean = sum(c * x for c, x in zip(counts, centres, strict=True)) / n
    return {
        "name": name,
        "kind": kind,
        "n": n,
        "errors": 1,
        "not_applicable": 0,
        "mean": mean,
        "std": 0.18,
        "low": mean - 0.05,
        "high": mean + 0.05,
        "quantiles": {
            "min": 0.05,
            "p10": 0.25,
            "p25": 0.45,
            "p50": mean,
            "p75": 0.85,
            "p90": 0.9,
            "max": 0.95,
        },
        "histogram": {"edges": [i / 10 for i in range(11)], "counts": counts},
        "floor": floor,
        "floor_violations": 3 if floor is not None else 0,
    }


def graded_report() -> dict[str, Any]:
    """A graded workflow run with gates, criteria, judges, groups and a hostile sample id."""
    return {
        "kind": "report",
        "schema_version": 1,
        "run": _header("r-graded-01", "code-review", "reviewer-v2", workflow=True),
        "samples": 40,
        "target_errors": 1,
        "graded": True,
        "pass_rate": _rate(30, 40, 0.595, 0.858),
        "weighted_score": {"mean": 78.4, "std": 14.2, "low": 73.9, "high": 82.6, "n": 39},
        "grades": {"A": 12, "B": 10, "C": 8, "D": 4, "F": 6},
        "gates": [
            {
                "name": "output_schema_valid",
                "failures": 4,
                "n": 40,
                "rate": 0.1,
                "low": 0.04,
                "high": 0.23,
            },
            {
                "name": "required_outputs_present",
                "failures": 2,
                "n": 40,
                "rate": 0.05,
                "low": 0.014,
                "high": 0.165,
            },
            {
                "name": "overall_status_success",
                "failures": 0,
                "n": 40,
                "rate": 0.0,
                "low": 0.0,
                "high": 0.088,
            },
        ],
        "criteria": [
            _criterion("correctness", "criterion", [0, 1, 1, 2, 3, 4, 6, 8, 9, 5], 0.6),
            _criterion("completeness", "criterion", [1, 0, 2, 3, 5, 6, 7, 6, 5, 4], None),
            _criterion("security_review", "criterion", [2, 1, 0, 1, 2, 3, 5, 9, 8, 8], 0.5),
        ],
        "failure_reasons": [
            {
                "kind": "gate",
                "key": "output_schema_valid",
                "reason": "schema violation at $.issues[1].line: '40' is not of type 'integer'",
                "count": 4,
                "sample_ids": [HOSTILE_ID, "cr-004", "cr-011", "cr-019"],
            },
            {
                "kind": "floor",
                "key": "correctness",
                "reason": "correctness 0.40 below floor 0.60",
                "count": 3,
                "sample_ids": ["cr-007", "cr-021", "cr-030"],
            },
            {
                "kind": "judge",
                "key": "review_quality",
                "reason": "misses the <b>off-by-one</b> & the SQL injection",
                "count": 2,
                "sample_ids": ["cr-002", "cr-017"],
            },
            {
                "kind": "error",
                "key": "target",
                "reason": "TimeoutError: no answer in 30 s",
                "count": 1,
                "sample_ids": ["cr-033"],
            },
        ],
        "judges": {
            "review_quality": {
                "n": 40,
                "parse_failures": 5,
                "parse_failure_rate": 0.125,
                "inconsistent": 0,
                "inconsistency_rate": None,
                "warning": "12.5% of verdicts were malformed (> 10%)",
            },
            "pairwise_style": {
                "n": 40,
                "parse_failures": 0,
                "parse_failure_rate": 0.0,
                "inconsistent": 2,
                "inconsistency_rate": 0.05,
                "warning": None,
            },
        },
        "latency": {"mean": 1.21, "p50": 1.02, "p95": 2.83, "max": 4.1},
        "tokens": {"input": 52000, "output": 9100, "total": 61100},
        "cost": 0.4312,
        "retries": 3,
        "cached": 5,
        "groups": {
            "workflow": [
                {
                    "key": "code_review",
                    "samples": 40,
                    "pass_rate": _rate(30, 40, 0.595, 0.858),
                    "weighted_score_mean": 78.4,
                    "grades": {"A": 12, "B": 10, "C": 8, "D": 4, "F": 6},
                },
            ],
            "slices": {
                "language": [
                    {
                        "key": "python",
                        "samples": 25,
                        "pass_rate": _rate(21, 25, 0.65, 0.94),
                        "weighted_score_mean": 82.0,
                        "grades": None,
                    },
                    {
                        "key": HOSTILE_ID,
                        "samples": 15,
                        "pass_rate": _rate(9, 15, 0.357, 0.802),
                        "weighted_score_mean": 72.4,
                        "grades": None,
                    },
                ],
            },
            "agents": [
                {
                    "name": "planner",
                    "runs": 40,
                    "steps": 80,
                    "failures": 2,
                    "retries": 1,
                    "duration_s": 21.5,
                    "tokens": 20000,
                    "cost_usd": 0.12,
                    "scores": {"plan_quality": 0.81},
                },
                {
                    "name": "reviewer",
                    "runs": 40,
                    "steps": 120,
                    "failures": 5,
                    "retries": 2,
                    "duration_s": 30.1,
                    "tokens": 41100,
                    "cost_usd": 0.31,
                    "scores": {},
                },
            ],
        },
        "warnings": ["1 sample's target failed; it counts 0.0 in the weighted score"],
    }


def ungraded_report() -> dict[str, Any]:
    """A plain scorer run: no gates, no grades, no workflow groups."""
    return {
        "kind": "report",
        "schema_version": 1,
        "run": _header("r-plain-01", "support-qa", "support-bot-v2", workflow=False),
        "samples": 30,
        "target_errors": 0,
        "graded": False,
        "pass_rate": _rate(19, 30, 0.456, 0.783),
        "weighted_score": {"mean": 61.2, "std": 20.5, "low": 54.0, "high": 68.1, "n": 30},
        "grades": None,
        "gates": [],
        "criteria": [
            _criterion("exact_match", "scorer", [11, 0, 0, 0, 0, 0, 0, 0, 0, 19], None),
            _criterion("token_f1", "scorer", [1, 2, 2, 3, 4, 5, 5, 4, 2, 2], None),
        ],
        "failure_reasons": [
            {
                "kind": "threshold",
                "key": "token_f1",
                "reason": "token_f1 0.31 below 0.50",
                "count": 6,
                "sample_ids": ["q-1", "q-5", "q-9", "q-12", "q-20"],
            },
        ],
        "judges": {},
        "latency": {"mean": None, "p50": None, "p95": None, "max": None},
        "tokens": {"input": 0, "output": 0, "total": 0},
        "cost": 0.0,
        "retries": 0,
        "cached": 0,
        "groups": {"workflow": [], "slices": {}, "agents": []},
        "warnings": [],
    }


def _rule(rule: str, passed: bool, reason: str, outcome: str | None = None) -> dict[str, Any]:
    outcome = outcome or ("pass" if passed else "fail")
    return {"rule": rule, "passed": passed, "reason": reason, "details": {}, "outcome": outcome}


def _example(
    sample_id: str,
    before: tuple[bool, str, float],
    after: tuple[bool, str, float],
    changes: list[str],
) -> dict[str, Any]:
    def side(v: tuple[bool, str, float]) -> dict[str, Any]:
        return {"passed": v[0], "grade": v[1], "weighted_score": v[2]}

    return {
        "id": sample_id,
        "baseline": side(before),
        "candidate": side(after),
        "delta": after[2] - before[2],
        "changes": changes,
    }


_POLICY = {
    "gate_failure_tolerance": 0.0,
    "noninferiority_margin": 1.0,
    "alpha": 0.05,
    "floor_regression_tolerance": 0,
    "severe_gates": [
        "schema_contract_valid",
        "tool_call_schema_valid",
        "no_forbidden_tool_invoked",
    ],
    "severe_tolerance": 0,
    "example_delta": 5.0,
    "pairwise_inconsistency_warning": 0.1,
    "min_paired": 30,
    "coverage_tolerance": 0.0,
    "judge_parse_failure_limit": 0.5,
    "method": "auto",
    "n_resamples": 2000,
    "seed": 0,
}


def promoting_comparison() -> dict[str, Any]:
    """The candidate is non-inferior everywhere: every rule passes."""
    return {
        "kind": "comparison",
        "schema_version": 1,
        "baseline": _header("r-base-01", "code-review", "reviewer-v1", workflow=True),
        "candidate": _header("r-cand-01", "code-review", "reviewer-v2", workflow=True),
        "paired": 40,
        "only_baseline": [],
        "only_candidate": ["cr-041"],
        "only_baseline_count": 0,
        "only_candidate_count": 1,
        "metrics": [
            {
                "name": "weighted_score",
                "baseline": 74.1,
                "candidate": 78.4,
                "delta": 4.3,
                "low": 1.2,
                "high": 7.5,
                "n": 40,
            },
            {
                "name": "pass_rate",
                "baseline": 0.675,
                "candidate": 0.75,
                "delta": 0.075,
                "low": -0.025,
                "high": 0.175,
                "n": 40,
            },
            {
                "name": "gate:output_schema_valid",
                "baseline": 0.1,
                "candidate": 0.1,
                "delta": 0.0,
                "low": -0.05,
                "high": 0.05,
                "n": 40,
            },
            {
                "name": "correctness",
                "baseline": 0.7,
                "candidate": 0.74,
                "delta": 0.04,
                "low": 0.01,
                "high": 0.07,
                "n": 40,
            },
        ],
        "regressions": [
            _example(
                "cr-017",
                (True, "B", 81.0),
                (True, "C", 72.5),
                ["grade B → C", "weighted score -8.5"],
            ),
        ],
        "improvements": [
            _example(
                "cr-004",
                (False, "F", 40.0),
                (True, "B", 83.0),
                ["now passes", "grade F → B", "weighted score +43.0"],
            ),
            _example(
                HOSTILE_ID,
                (True, "C", 70.0),
                (True, "A", 92.0),
                ["grade C → A", "weighted score +22.0"],
            ),
        ],
        "unchanged": 37,
        "tie_break": {"winner": None, "rule": None, "reason": "not near-equal: no tie-break"},
        "decision": {
            "outcome": "promote",
            "promote": True,
            "summary": "promote: candidate is non-inferior (mean +4.3 points, p = 0.004)",
            "rules": [
                _rule(
                    "hard_gate_failure_rate",
                    True,
                    "gate failure rate 10.0% vs baseline 10.0% (+0.0 points ≤ tolerance 0.0)",
                ),
                _rule(
                    "weighted_score_noninferior",
                    True,
                    "improved: mean delta +4.3 (one-sided 95% lower bound +1.7 > -1.0), p = 0.004",
                ),
                _rule(
                    "critical_floor_regression",
                    True,
                    "floor violations 3 vs baseline 4 on paired examples",
                ),
                _rule("severe_failures", True, "severe failures 0 vs baseline 0"),
            ],
            "warnings": ["1 example only in the candidate run (not compared)"],
            "policy": dict(_POLICY),
        },
    }


def blocking_comparison() -> dict[str, Any]:
    """The candidate fails more gates and regresses: the decision blocks."""
    doc = copy.deepcopy(promoting_comparison())
    doc["baseline"], doc["candidate"] = doc["candidate"], doc["baseline"]
    doc["metrics"] = [
        {
            "name": "weighted_score",
            "baseline": 78.4,
            "candidate": 71.0,
            "delta": -7.4,
            "low": -10.9,
            "high": -3.8,
            "n": 40,
        },
        {
            "name": "pass_rate",
            "baseline": 0.75,
            "candidate": 0.6,
            "delta": -0.15,
            "low": -0.275,
            "high": -0.025,
            "n": 40,
        },
        {
            "name": "gate:output_schema_valid",
            "baseline": 0.1,
            "candidate": 0.2,
            "delta": 0.1,
            "low": 0.0,
            "high": 0.2,
            "n": 40,
        },
        {
            "name": "correctness",
            "baseline": 0.74,
            "candidate": None,
            "delta": None,
            "low": None,
            "high": None,
            "n": 0,
        },
    ]
    doc["regressions"], doc["improvements"] = (
        [
            _example(
                f"cr-{i:03d}",
                (True, "B", 80.0),
                (False, "F", 30.0 + i),
                ["now fails", "grade B → F", f"weighted score {i - 50:+.1f}"],
            )
            for i in range(12)
        ]
        + [_example(HOSTILE_ID, (True, "A", 95.0), (True, "C", 70.0), ["grade A → C"])],
        [],
    )
    doc["unchanged"] = 27
    doc["decision"] = {
        "outcome": "block",
        "promote": False,
        "summary": "blocked: 2 of 4 rules failed",
        "rules": [
            _rule(
                "hard_gate_failure_rate",
                False,
                "gate failure rate 20.0% vs baseline 10.0% (+10.0 points > tolerance 0.0)",
            ),
            _rule(
                "weighted_score_noninferior",
                False,
                "mean delta -7.4 (one-sided 95% lower bound -10.3 ≤ -1.0), p = 0.99",
            ),
            _rule(
                "critical_floor_regression",
                True,
                "floor violations 4 vs baseline 4 on paired examples",
            ),
            _rule("severe_failures", True, "severe failures 0 vs baseline 0"),
        ],
        "warnings": [],
        "policy": dict(_POLICY),
    }
    return doc


def inconclusive_comparison() -> dict[str, Any]:
    """Too few examples to show non-inferiority at the margin: nothing failed, no promotion."""
    doc = copy.deepcopy(promoting_comparison())
    doc["decision"] = {
        "outcome": "inconclusive",
        "promote": False,
        "summary": "inconclusive (weighted_score_noninferior): not enough evidence to promote",
        "rules": [
            _rule("candidate_coverage", True, "the candidate scored all 40 examples"),
            _rule(
                "weighted_score_noninferior",
                False,
                "weighted score -0.40 points on average over 40 examples: inconclusive; this "
                "data could show non-inferiority only at a margin above 3.10; about 1,200 "
                "paired examples would show it at 1",
                "inconclusive",
            ),
        ],
        "warnings": [],
        "policy": dict(_POLICY),
    }
    return doc


def all_documents() -> dict[str, dict[str, Any]]:
    """Every fixture kind by a short id, for parametrized tests."""
    return {
        "graded_report": graded_report(),
        "ungraded_report": ungraded_report(),
        "promoting_comparison": promoting_comparison(),
        "blocking_comparison": blocking_comparison(),
        "inconclusive_comparison": inconclusive_comparison(),
    }


def record_runs(db: Path) -> dict[str, str]:
    """Real runs in a real store, from recorded predictions: two versions of a QA bot (v2 is
    better), and the graded code-review workflow example. Returns run ids by label."""
    from aieval import run
    from aieval.runner import load_eval, run_eval
    from aieval.store import Store

    rows = [
        {
            "id": HOSTILE_ID if i == 1 else f"q{i:02d}",
            "prompt": f"question {i}",
            "expected": "yes",
            "metadata": {"topic": "billing" if i % 3 else "shipping"},
            "predictions": {"v1": "yes" if i % 4 == 0 else "no", "v2": "no" if i == 7 else "yes"},
        }
        for i in range(64)
    ]
    store = Store(db)
    ids = {}
    for model in ("v1", "v2"):
        result = run(
            name="qa", dataset=rows, scorers=["exact_match", "token_f1"], model=model, store=store
        )
        ids[model] = result.id
    workflow = Path(__file__).resolve().parents[2] / "examples/workflows/code_review_eval.yaml"
    (graded,) = run_eval(load_eval(workflow), store=store)
    ids["graded"] = graded.id
    store.close()
    return ids


def store_run(
    store: Store, samples: list[SampleRecord], *, config: dict[str, Any] | None = None
) -> str:
    """A completed run of ``samples`` in ``store`` (every run of a test shares one dataset hash)."""
    run_id = store.create_run(name="cmp", dataset_hash="same", config=config or {})
    store.record_samples(run_id, samples)
    store.finish_run(run_id, status="completed")
    return run_id


def decision_rule(comparison: Any, name: str) -> RuleResult:
    """The promotion rule ``name`` of a comparison's decision."""
    return next(r for r in comparison.decision.rules if r.rule == name)
