"""Stored QA runs for the viewer's browser tests and its benchmark (recorded predictions)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from aieval import run

__all__ = ["HOSTILE_PREDICTION", "NEEDLE", "qa_rows", "store_qa_run"]

#: A prediction that must render as characters: it closes a textarea and opens a script.
HOSTILE_PREDICTION = "</textarea><script>window.__owned=3</script><b>bold?</b>"
#: A word that appears in exactly every 97th row's input.
NEEDLE = "zanzibar"
_WORDS = ["refund", "order", "window", "shipping", "invoice", "account", "password", "delivery"]


def qa_rows(n: int, *, seed: int, skill: float) -> list[dict[str, Any]]:
    """``n`` rows with recorded predictions, a ``skill`` share exactly right."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        answer = " ".join(rng.choice(_WORDS) for _ in range(4))
        if rng.random() < skill:
            prediction = answer
        else:
            prediction = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5)))
        topic = ("billing", "shipping", "accounts")[i % 3]
        question = f"question {i} about {topic}" + (f" in {NEEDLE}" if i % 97 == 5 else "")
        rows.append(
            {
                "id": f"q{i:06d}",
                "prompt": question,
                "expected": answer,
                "prediction": HOSTILE_PREDICTION if i == 7 else prediction,
                "metadata": {"topic": topic, **({"vip": True} if i % 10 == 0 else {})},
            }
        )
    return rows


def store_qa_run(db: Path, n: int, *, seed: int, skill: float, name: str = "support-qa") -> str:
    """Evaluate ``qa_rows`` with exact_match and token_f1 into ``db``; the run id."""
    result = run(
        name=name,
        dataset=qa_rows(n, seed=seed, skill=skill),
        scorers=["exact_match", "token_f1"],
        store=str(db),
        concurrency=64,
    )
    return result.id


def store_qa_samples(
    location: str | Path,
    n: int,
    *,
    seed: int,
    skill: float,
    name: str = "support-qa",
    batch: int = 20_000,
) -> str:
    """``qa_rows`` scored by exact match and token F1 written straight to the store in batches
    (no runner: one transaction per ``batch``), each graded and stored with its verdict as the
    runner does it; the run id."""
    from collections import Counter

    from aieval._records import SampleRecord, ScoreRecord
    from aieval.core._threshold import threshold_verdict
    from aieval.store import Store

    scorers = [{"name": "exact_match", "options": {}}, {"name": "token_f1", "options": {}}]
    with Store(location) as store:
        run_id = store.create_run(
            name=name, n_examples=n, config={"scorers": scorers, "pass_threshold": 0.5}
        )
        for start in range(0, n, batch):
            records = []
            for i, row in enumerate(qa_rows(min(batch, n - start), seed=seed + start, skill=skill)):
                index = start + i
                pred, gold = row["prediction"].split(), row["expected"].split()
                common = sum((Counter(pred) & Counter(gold)).values())
                f1 = 2 * common / (len(pred) + len(gold)) if common else 0.0
                exact = float(row["prediction"] == row["expected"])
                record = SampleRecord(
                    id=f"q{index:07d}",
                    index=index,
                    input=row["prompt"].replace(f"question {i} ", f"question {index} "),
                    expected=row["expected"],
                    prediction=row["prediction"],
                    metadata=row["metadata"],
                    scores={"exact_match": ScoreRecord(exact), "token_f1": ScoreRecord(f1)},
                )
                # graded as the runner's threshold grader does, and stored with its verdict
                record.verdict = threshold_verdict(record, 0.5)
                record.passed = record.verdict.passed
                records.append(record)
            store.record_samples(run_id, records)
        store.finish_run(run_id, status="completed")
    return run_id
