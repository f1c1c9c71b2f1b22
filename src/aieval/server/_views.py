"""The JSON shapes of runs and samples, as the API and the event stream send them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from aieval._records import SampleRecord
from aieval.store import RunRow, Store

__all__ = [
    "SampleFilter",
    "keep_sample",
    "run_item",
    "sample_completed",
    "sample_detail",
    "sample_item",
    "weighted_score",
]

SampleFilter = Literal["all", "failed", "gate_failed", "passed"]


def run_item(store: Store, run: RunRow) -> dict[str, Any]:
    """One entry of the runs list: header, sample count, pass rate and grade mix."""
    samples, passed = store.pass_counts(run.id)
    evaluation = (run.metrics or {}).get("evaluation")
    grades = evaluation.get("grades") if isinstance(evaluation, Mapping) else None
    return {
        "id": run.id,
        "name": run.name,
        "model": run.model,
        "provider": run.provider,
        "status": run.status,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "samples": samples,
        "pass_rate": passed / samples if samples else None,
        "grades": grades,
    }


def weighted_score(record: SampleRecord) -> float | None:
    """0..100: the graded score, else 100 x the mean scorer value (a target error is 0)."""
    evaluation = _evaluation(record)
    if evaluation is not None:
        value = evaluation.get("weighted_score")
        return float(value) if value is not None else None
    if record.error is not None:
        return 0.0
    values = [v for v in record.values.values() if v is not None]
    return 100.0 * sum(values) / len(values) if values else None


def sample_item(record: SampleRecord) -> dict[str, Any]:
    """One row of a run's sample table."""
    evaluation = _evaluation(record) or {}
    return {
        "id": record.id,
        "index": record.index,
        "passed": record.passed,
        "grade": evaluation.get("grade"),
        "weighted_score": weighted_score(record),
        "error": record.error,
        "scores": record.values,
        "gate_failures": [g for g, ok in (evaluation.get("hard_gates") or {}).items() if not ok],
    }


def sample_completed(record: SampleRecord) -> dict[str, Any]:
    """The ``sample_completed`` event payload: scores, grade and each hard gate's verdict."""
    evaluation = _evaluation(record) or {}
    reasons = {
        g["name"]: g.get("reason")
        for g in evaluation.get("gate_results") or []
        if isinstance(g, Mapping) and "name" in g
    }
    return {
        "id": record.id,
        "index": record.index,
        "passed": record.passed,
        "grade": evaluation.get("grade"),
        "weighted_score": weighted_score(record),
        "scores": record.values,
        "hard_gates": {
            name: {"passed": bool(ok), "reason": reasons.get(name)}
            for name, ok in (evaluation.get("hard_gates") or {}).items()
        },
        "error": record.error,
    }


def sample_detail(record: SampleRecord) -> dict[str, Any]:
    """Everything about one sample: input, output, scores with reasons, calls, workflow."""
    return {
        "id": record.id,
        "index": record.index,
        "input": record.input,
        "prompt": record.prompt,
        "expected": record.expected,
        "prediction": record.prediction,
        "metadata": record.metadata,
        "scores": {name: dataclasses.asdict(score) for name, score in record.scores.items()},
        "error": record.error,
        "passed": record.passed,
        "latency_s": record.latency_s,
        "input_tokens": record.input_tokens,
        "output_tokens": record.output_tokens,
        "cost": record.cost,
        "retries": record.retries,
        "calls": [dataclasses.asdict(call) for call in record.calls],
        "evaluation": _evaluation(record),
        "workflow_run": record.extra.get("workflow_run"),
    }


def keep_sample(record: SampleRecord, which: SampleFilter) -> bool:
    """Whether ``record`` belongs in the sample table under filter ``which``."""
    if which == "passed":
        return record.passed is True
    if which == "failed":
        return record.passed is not True
    if which == "gate_failed":
        gates = (_evaluation(record) or {}).get("hard_gates") or {}
        return not all(gates.values())
    return True


def _evaluation(record: SampleRecord) -> dict[str, Any] | None:
    value = record.extra.get("evaluation")
    return value if isinstance(value, dict) else None
