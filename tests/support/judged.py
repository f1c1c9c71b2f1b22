"""A stored run graded by a judge that passes the samples a rule picks (judge tests' set-up)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aieval._records import SampleRecord, ScoreRecord
from aieval.core._threshold import threshold_verdict
from aieval.store import Store


def write_judged_run(
    store: Store,
    run_id: str,
    config: Mapping[str, Any],
    n: int,
    passes: Callable[[int], bool],
    *,
    scorer: str = "faith",
) -> None:
    """Store run ``run_id`` of ``n`` samples ``ex0..``; ``scorer`` gives 1.0 where ``passes``."""
    store.create_run(name="app", config=dict(config), run_id=run_id)
    samples = []
    for i in range(n):
        sample = SampleRecord(
            id=f"ex{i}",
            index=i,
            input={"q": i},
            expected="yes",
            scores={scorer: ScoreRecord(1.0 if passes(i) else 0.0)},
        )
        sample.verdict = threshold_verdict(sample, 0.5)
        sample.passed = sample.verdict.passed
        samples.append(sample)
    store.record_samples(run_id, samples)
    store.finish_run(run_id, status="completed", metrics={"samples": n})
