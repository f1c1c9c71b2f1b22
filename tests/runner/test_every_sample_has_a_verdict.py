"""Every sample a run stores has its verdict (the runner's, at the run's own threshold): for each
kind of target, a failed target or scorer, epochs and workflow runs; a record the sample's work
returns without one is stored as that sample's failure, never without a verdict."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from aieval import SampleRecord, Store, run
from aieval.runner._executor import Finished, LocalExecutor

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"


def sixty(prediction: str, expected: str | None) -> float:
    if prediction == "raise":
        raise ValueError("this scorer fails on this row")
    return 0.6


def target(text: str) -> str:
    if text == "boom":
        raise RuntimeError("the target failed")
    return text


ROWS = [{"id": f"r{i}", "input": text} for i, text in enumerate(["a", "boom", "raise"])]

#: name -> the run's settings beside its store
RUNS: dict[str, dict[str, Any]] = {
    "callable": {"dataset": ROWS, "target": target, "scorers": [sixty]},
    "recorded": {
        "dataset": [{**row, "prediction": row["input"]} for row in ROWS],
        "scorers": [sixty],
    },
    "epochs": {"dataset": ROWS, "target": target, "scorers": [sixty], "epochs": 2},
    "workflow": {
        "dataset": str(EXAMPLES / "support_agent_runs"),
        "workflow": str(EXAMPLES / "support_agent.yaml"),
        "scorers": [],
        "limit": 3,
    },
}


def _stored_verdicts(path: Path, run_id: str) -> list[str | None]:
    """Each stored sample's verdict text, read from the file itself."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT verdict FROM samples WHERE run_id = ?", (run_id,)).fetchall()
    db.close()
    return [row[0] for row in rows]


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_every_stored_sample_has_a_verdict(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "runs.db"
    with Store(str(path)) as store:
        result = run(name=kind, store=store, pass_threshold=0.8, **RUNS[kind])
        samples = list(store.iter_samples(result.id))
    verdicts = _stored_verdicts(path, result.id)
    assert verdicts and None not in verdicts
    assert len(samples) == len(verdicts)
    for sample in samples:
        assert sample.verdict is not None and sample.passed is sample.verdict.passed
        if kind != "workflow":  # 0.6 is below the run's 0.8: nothing passes
            assert not sample.passed


class _NoVerdict:
    """An executor whose work returns each record with its verdict taken away."""

    def __init__(self) -> None:
        self.local = LocalExecutor(concurrency=1)

    async def map(
        self, fn: Callable[[Any], Any], items: Iterable[Any]
    ) -> AsyncIterator[Finished[Any, Any]]:
        async for finished in self.local.map(fn, items):
            if isinstance(finished.value, SampleRecord):
                finished.value.verdict = None
            yield finished


def test_a_record_returned_without_a_verdict_is_stored_as_a_failure(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with Store(str(path)) as store:
        result = run(
            name="bad-work",
            dataset=[{"id": "r0", "input": "a", "prediction": "a"}],
            scorers=[sixty],
            store=store,
            executor=_NoVerdict(),
        )
        (sample,) = store.iter_samples(result.id)
    assert None not in _stored_verdicts(path, result.id)
    assert sample.error == "the sample's work returned a record without a verdict"
    assert sample.verdict is not None and not sample.verdict.passed
