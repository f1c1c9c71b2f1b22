"""The runner scores recorded predictions through a scorer's batch implementation."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aieval import run
from aieval._records import SampleRecord
from aieval.errors import ScorerError
from aieval.runner import _prescore
from aieval.scorers import Scorer, exact_match, rouge_l, scorer

_WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "dog",
    "ran",
    "far",
    "away",
    "Paris",
    "is",
    "capital",
]


def _rows(count: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for i in range(count):
        expected = " ".join(rng.choices(_WORDS, k=rng.randint(1, 12)))
        prediction = " ".join(rng.choices(_WORDS, k=rng.randint(0, 12)))
        rows.append(
            {"id": f"r{i}", "input": f"q{i}", "expected": expected, "prediction": prediction}
        )
    rows[3]["expected"] = ["a list of", "accepted answers"]  # a Score naming the best one
    rows[4]["expected"] = {"not": "text"}  # that sample's ScorerError
    rows[5]["prediction"] = 42  # compared as its str()
    del rows[6]["prediction"]  # no recorded prediction: the sample's error, no score
    return rows


def _unbatched(original: Scorer) -> Scorer:
    """The same scorer without its batch implementation."""
    return Scorer(original.fn, name=original.name, options=dict(original.options))


def _scores(samples: list[SampleRecord]) -> list[tuple[str, dict[str, Any], str | None]]:
    return [
        (s.id, {k: (v.value, v.error, v.reason, v.metadata) for k, v in s.scores.items()}, s.error)
        for s in sorted(samples, key=lambda s: s.index)
    ]


def test_batch_scores_equal_per_sample_scores(tmp_path: Path) -> None:
    rows = _rows(1300)  # more than two chunks
    stemmed = rouge_l.with_options(name="rouge_l_rs", tokenizer="rouge_score")
    batched = run(name="b", dataset=rows, scorers=[rouge_l, exact_match, stemmed], store=False)
    alone = run(
        name="a",
        dataset=rows,
        scorers=[_unbatched(rouge_l), exact_match, _unbatched(stemmed)],
        store=tmp_path / "a.db",
    )
    assert _scores(batched.samples) == _scores(alone.samples)
    by_id = {s.id: s for s in batched.samples}
    assert "dict" in (by_id["r4"].scores["rouge_l"].error or "")
    assert by_id["r6"].error is not None and not by_id["r6"].scores
    assert by_id["r3"].scores["rouge_l"].reason is not None
    assert batched.metrics == alone.metrics


def _counting() -> tuple[Scorer, list[int]]:
    sizes: list[int] = []

    @scorer
    def overlap(prediction: str, expected: str) -> float:
        if prediction == "boom":
            raise ValueError("bad row")
        return 1.0 if str(prediction) == expected else 0.0

    @overlap.batched
    def _overlap_batch(
        predictions: Sequence[Any], expected: Sequence[Any]
    ) -> list[float | ScorerError]:
        sizes.append(len(predictions))
        results: list[float | ScorerError] = []
        for p, e in zip(predictions, expected, strict=True):
            try:
                results.append(overlap.fn(p, e))
            except ValueError as exc:
                results.append(ScorerError(f"{type(exc).__name__}: {exc}"))
        return results

    return overlap, sizes


def test_the_runner_calls_the_batch_once_per_chunk() -> None:
    overlap, sizes = _counting()
    rows = [{"id": f"s{i}", "input": "q", "expected": "y", "prediction": "y"} for i in range(700)]
    rows[10]["prediction"] = "boom"
    result = run(name="c", dataset=rows, scorers=[overlap], store=False)
    assert sizes == [_prescore.CHUNK, 700 - _prescore.CHUNK]
    by_id = {s.id: s for s in result.samples}
    # the bad row is that sample's error, worded as when scored on its own
    assert by_id["s10"].scores["overlap"].error == "scorer 'overlap' raised ValueError: bad row"
    assert all(s.scores["overlap"].value == 1.0 for s in result.samples if s.id != "s10")


def test_a_batch_that_fails_falls_back_to_per_sample_scoring() -> None:
    calls: list[int] = []

    @scorer
    def fragile(prediction: str, expected: str) -> float:
        calls.append(1)
        if prediction == "bad":
            raise ScorerError("this row is bad")
        return 0.5

    @fragile.batched
    def _fragile_batch(predictions: Sequence[Any], expected: Sequence[Any]) -> list[float]:
        raise RuntimeError("the whole batch failed")

    rows = [{"id": f"s{i}", "input": "q", "expected": "y", "prediction": "ok"} for i in range(20)]
    rows[7]["prediction"] = "bad"
    result = run(name="f", dataset=rows, scorers=[fragile], store=False)
    assert len(calls) == 20  # every sample scored on its own
    by_id = {s.id: s for s in result.samples}
    assert by_id["s7"].scores["fragile"].error == "this row is bad"
    assert [s.scores["fragile"].value for s in result.samples if s.id != "s7"] == [0.5] * 19


def test_an_invalid_batch_value_is_scored_again_on_its_own() -> None:
    @scorer
    def shaky(prediction: str, expected: str) -> float:
        return 0.25

    @shaky.batched
    def _shaky_batch(predictions: Sequence[Any], expected: Sequence[Any]) -> list[float]:
        return [2.0] * len(predictions)  # out of range: not used

    rows = [{"id": f"s{i}", "input": "q", "expected": "y", "prediction": "ok"} for i in range(5)]
    result = run(name="i", dataset=rows, scorers=[shaky], store=False)
    assert [s.scores["shaky"].value for s in result.samples] == [0.25] * 5
