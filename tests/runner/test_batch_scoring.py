"""The runner scores recorded predictions through a scorer's batch implementation."""

from __future__ import annotations

import contextlib
import random
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval._records import SampleRecord
from aieval.errors import ScorerError
from aieval.runner import _prescore
from aieval.scorers import Scorer, exact_match, json_valid, rouge_l, scorer, token_f1

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


_BUILT_INS = [exact_match, token_f1, rouge_l, json_valid]


def _stored(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every sample and score row of the store's one run, without its id and timestamps."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        samples = conn.execute("SELECT * FROM samples ORDER BY idx").fetchall()
        columns = [c[0] for c in conn.execute("SELECT * FROM samples LIMIT 0").description]
        scores = conn.execute(
            "SELECT sample_id, scorer, value, raw, reason, error, metadata, unreadable"
            " FROM scores ORDER BY sample_id, scorer"
        ).fetchall()
    keep = [i for i, name in enumerate(columns) if name not in ("run_id", "created_at")]
    return [tuple(row[i] for i in keep) for row in samples], scores


def test_stored_rows_are_the_same_with_batching_on_and_off(tmp_path: Path) -> None:
    rows = _rows(1300, seed=3)
    rows[8]["expected"] = None  # no expected answer: that sample's error for three scorers
    rows[9]["expected"] = [["nested"]]
    rows[10]["prediction"] = '{"a": [1, 2]}'
    rows[11]["expected"] = "{" * 3000
    on = run(name="b", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "on.db")
    off = run(
        name="b",
        dataset=rows,
        scorers=[_unbatched(s) for s in _BUILT_INS],
        store=tmp_path / "off.db",
    )
    assert _stored(tmp_path / "on.db") == _stored(tmp_path / "off.db")
    assert on.metrics == off.metrics
    samples, scores = _stored(tmp_path / "on.db")
    assert len(samples) == 1300 and len(scores) == 1299 * 4  # r6 has no prediction
    errors = {(s[0], s[1]): s[5] for s in scores if s[5] is not None}
    assert set(errors) == {
        (sample, name)
        for sample in ("r4", "r8", "r9")
        for name in ("exact_match", "rouge_l", "token_f1")
    }
    assert "no expected answer" in errors["r8", "token_f1"]


def test_the_built_ins_are_scored_by_their_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    one_by_one: list[str] = []
    score = Scorer.score

    async def counted(self: Scorer, *args: Any, **kwargs: Any) -> Any:
        one_by_one.append(self.name)
        return await score(self, *args, **kwargs)

    monkeypatch.setattr(Scorer, "score", counted)
    rows = _rows(600)
    rows[20]["prediction"] = "word " * 5000  # long: scored off the event loop, on its own
    result = run(name="c", dataset=rows, scorers=_BUILT_INS, store=False)
    assert len(result.samples) == 600
    # only the rows a batch cannot score (r4's dict expected answer) are scored on their own,
    # and r20 by the scorers that score a long text off the event loop
    assert sorted(one_by_one) == ["exact_match", "rouge_l", "rouge_l", "token_f1", "token_f1"]
