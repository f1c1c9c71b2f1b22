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
