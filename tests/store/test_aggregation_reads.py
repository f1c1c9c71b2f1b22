"""What aggregation reads: samples without their texts, each distinct verdict decoded once."""

from __future__ import annotations

import pytest

from aieval._records import SampleRecord, ScoreRecord
from aieval.core import Verdict
from aieval.store import Store


def _samples(n: int) -> list[SampleRecord]:
    return [
        SampleRecord(
            id=f"s{i}",
            index=i,
            input={"q": i},
            expected="yes",
            prediction="yes" if i % 2 else "no",
            scores={"em": ScoreRecord(float(i % 2))},
            passed=bool(i % 2),
            verdict=Verdict(passed=bool(i % 2), weighted_score=100.0 * (i % 2)),
            metadata={"topic": f"t{i % 3}"},
        )
        for i in range(n)
    ]


def test_without_texts_reads_the_same_numbers(store_location: str) -> None:
    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, _samples(1200))  # more than one page on either backend
        full = list(store.iter_samples(run_id))
        lean = list(store.iter_samples(run_id, texts=False))
        keys = list(store.iter_samples(run_id, predictions=False))
    assert [s.id for s in lean] == [s.id for s in full] == [f"s{i}" for i in range(1200)]
    assert all(s.input is None and s.expected is None and s.prediction is None for s in lean)
    assert [s.input for s in full[:2]] == [{"q": 0}, {"q": 1}]
    assert [s.prediction for s in full[:2]] == ["no", "yes"]
    assert all(s.prediction is None and s.input is not None for s in keys)
    assert [s.input for s in keys] == [s.input for s in full]
    for a, b in zip(full, lean, strict=True):
        assert (a.verdict, a.scores, a.metadata, a.passed) == (
            b.verdict,
            b.scores,
            b.metadata,
            b.passed,
        )


def test_each_distinct_verdict_is_decoded_once(
    monkeypatch: pytest.MonkeyPatch, store_location: str
) -> None:
    decoded: list[object] = []
    original = Verdict.from_dict

    def counting(data: object, where: str) -> Verdict:
        decoded.append(data)
        return original(data, where)  # type: ignore[arg-type]

    with Store(store_location) as store:
        run_id = store.create_run(name="r")
        store.record_samples(run_id, _samples(1000))
        monkeypatch.setattr(Verdict, "from_dict", staticmethod(counting))
        read = list(store.iter_samples(run_id, texts=False))
    assert len(read) == 1000
    assert len(decoded) == 2  # passed at 100.0, failed at 0.0
    assert sum(s.verdict is not None and s.verdict.passed for s in read) == 500
