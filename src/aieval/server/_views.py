"""The JSON shapes of runs and samples, as the API and the event stream send them."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from aieval._records import SampleRecord
from aieval.runner import RunSummary
from aieval.server._conversation_view import conversation_view
from aieval.store import RunRow, Store

__all__ = [
    "SampleFilter",
    "run_item",
    "run_state",
    "sample_completed",
    "sample_detail",
    "sample_item",
    "weighted_score",
]

SampleFilter = Literal["all", "failed", "gate_failed", "passed", "invalid", "error", "no_error"]


def run_item(store: Store, run: RunRow, counts: tuple[int, int] | None = None) -> dict[str, Any]:
    """One entry of the runs list: header, sample count, pass rate, grade mix, main metrics,
    error counts, and the state to show (``status`` as stored, refined by the errors).
    ``counts`` is ``(samples, passed)`` when the caller has it (else counted here)."""
    samples, passed = store.pass_counts(run.id) if counts is None else counts
    # invalid samples (a simulated user that failed fidelity) are out of the pass rate
    invalid = store.invalid_count(run.id)
    valid = samples - invalid
    summary = RunSummary.from_dict(run.metrics)
    evaluation = summary.evaluation
    target_errors = summary.target_errors
    # a scorer's errors include the samples a failed target left unscored ("missing"): those
    # are target errors already
    scorer_errors = sum(s.errors - s.missing for s in summary.scorers.values())
    return {
        "id": run.id,
        "name": run.name,
        "model": run.model,
        "provider": run.provider,
        "status": run.status,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "samples": samples,
        "pass_rate": passed / valid if valid else None,
        **({"invalid": invalid} if invalid else {}),  # only a run with invalid samples
        "grades": None if evaluation is None else evaluation.grades,
        "metrics": {name: s.mean for name, s in summary.scorers.items()},
        "errors": {"target": target_errors, "scorers": scorer_errors},
        "state": run_state(run.status, samples, target_errors + scorer_errors, target_errors),
    }


def run_state(status: str, samples: int, errors: int, target_errors: int) -> str:
    """What the runs list shows: the stored status, except that a completed run with errors
    is ``completed_with_errors``, and one whose every sample failed is ``errored``.

    >>> run_state("completed", 3, 3, 3), run_state("completed", 3, 1, 0)
    ('errored', 'completed_with_errors')
    """
    if status != "completed":
        return status
    if samples and target_errors >= samples:
        return "errored"
    return "completed_with_errors" if errors else "completed"


def weighted_score(record: SampleRecord) -> float | None:
    """0..100: the graded score, else 100 x the mean scorer value (a target error is 0)."""
    return record.graded_verdict().weighted_score


def sample_item(record: SampleRecord) -> dict[str, Any]:
    """One row of a run's sample table: previews of the texts, each scorer's value, the
    judges' reasons (cut), errors and gate failures."""
    from aieval.server._table import preview

    verdict = record.graded_verdict()
    scores = record.scores
    return {
        "id": record.id,
        "index": record.index,
        "passed": record.passed,
        # neither passed nor failed: its simulated user failed fidelity
        "invalid": verdict.invalid,
        "grade": verdict.grade,
        "weighted_score": weighted_score(record),
        "error": record.error,
        "scores": record.values,
        "score_reasons": {n: preview(s.reason) for n, s in scores.items() if s.reason},
        "score_errors": {n: preview(s.error) for n, s in scores.items() if s.error},
        # judges whose score rests on malformed verdicts: {name: why} (scored 0.0, counted)
        "malformed": {n: preview(s.malformed) for n, s in scores.items() if s.malformed},
        "gate_failures": [g.name for g in verdict.gates if not g.passed],
        "input": preview(record.input if record.input is not None else record.prompt),
        "prediction": preview(record.prediction),
        "expected": preview(record.expected),
        "metadata": {str(k): preview(v, 80) for k, v in (record.metadata or {}).items()},
    }


def sample_completed(record: SampleRecord) -> dict[str, Any]:
    """The ``sample_completed`` event payload: the table row plus each hard gate's verdict."""
    return {
        **sample_item(record),
        "hard_gates": {
            g.name: {"passed": g.passed, "reason": g.reason} for g in record.graded_verdict().gates
        },
    }


def sample_detail(record: SampleRecord) -> dict[str, Any]:
    """Everything about one sample: input, output, scores with reasons, calls, workflow,
    conversation."""
    return {
        "id": record.id,
        "index": record.index,
        "input": record.input,
        "prompt": record.prompt,
        "expected": record.expected,
        "prediction": record.prediction,
        "metadata": record.metadata,
        "scores": {
            name: {**dataclasses.asdict(score), "malformed": score.malformed}
            for name, score in record.scores.items()
        },
        "error": record.error,
        "passed": record.passed,
        "latency_s": record.latency_s,
        "input_tokens": record.input_tokens,
        "output_tokens": record.output_tokens,
        "cost": record.cost,
        "retries": record.retries,
        "calls": [dataclasses.asdict(call) for call in record.calls],
        "verdict": record.graded_verdict().to_dict(),
        "workflow_run": record.extra.get("workflow_run"),
        "conversation": conversation_view(record.extra),
    }
