"""A recorded sample that its scorers' batches scored whole is finished in its chunk, without
the executor: the stored rows and the summary are those of the per-sample path."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from aieval import run
from aieval.runner import _execute
from aieval.runner._sample import SampleProcessor
from aieval.scorers import exact_match, json_valid, rouge_l, token_f1

_BUILT_INS = [exact_match, token_f1, rouge_l, json_valid]


def _rows(count: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(count):
        expected = " ".join(["the", "refund", "window", "is", "thirty", "days"][: 1 + i % 6])
        prediction = [expected, expected.upper(), f"order {i} ships", f'{{"a": {i}}}'][i % 4]
        rows.append(
            {"id": f"r{i}", "input": f"q{i}", "expected": expected, "prediction": prediction}
        )
    rows[3]["expected"] = {"not": "text"}  # scorer errors: scored again on its own
    del rows[6]["prediction"]  # no recorded prediction: the sample's error, no score
    rows[8]["prediction"] = ""
    rows[9]["recorded_calls"] = [{"model": "m", "input_tokens": 10, "output_tokens": 2}]
    rows[9]["recorded_latency_s"] = 0.25
    del rows[10]["prediction"]
    rows[10]["recorded_error"] = "TimeoutError: the model did not answer"
    rows[11]["metadata"] = {"team": "support", "key": "sk-not-a-real-key-1234"}
    return rows


def _stored(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the store's one run, without its run id and timestamps."""
    tables = {
        "samples": "SELECT * FROM samples ORDER BY idx",
        "scores": "SELECT * FROM scores ORDER BY sample_id, scorer",
        "sample_values": "SELECT * FROM sample_values ORDER BY 2, 3, 4",
        "model_calls": "SELECT * FROM model_calls ORDER BY sample_id",
    }
    out: dict[str, list[tuple[Any, ...]]] = {}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        for table, query in tables.items():
            cursor = conn.execute(query)
            names = [c[0] for c in cursor.description]
            keep = [i for i, n in enumerate(names) if n not in ("run_id", "created_at", "id")]
            out[table] = [tuple(row[i] for i in keep) for row in cursor.fetchall()]
    return out


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the samples that take the per-sample path, from now on."""
    seen: list[str] = []
    call = SampleProcessor.__call__

    async def counted(self: SampleProcessor, item: Any) -> Any:
        seen.append(item[1].id)
        return await call(self, item)

    monkeypatch.setattr(SampleProcessor, "__call__", counted)
    return seen


def test_stored_rows_equal_the_per_sample_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows(1300)  # more than two chunks
    seen = _counted(monkeypatch)
    inline = run(name="i", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "inline.db")
    # only the rows a batch could not score whole take the per-sample path
    assert seen == ["r3"]
    seen.clear()
    monkeypatch.setattr(_execute, "_inline", lambda *args: None)
    each = run(name="i", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "each.db")
    assert len(seen) == 1300
    stored = _stored(tmp_path / "inline.db")
    assert stored == _stored(tmp_path / "each.db")
    assert inline.summary.to_dict() == each.summary.to_dict()
    assert len(stored["samples"]) == 1300 and len(stored["model_calls"]) == 1
    by_id = {row[0]: row for row in stored["samples"]}
    assert by_id["r10"][6] == "TimeoutError: the model did not answer"


def test_rows_with_checks_or_long_texts_take_their_own_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows(1100)
    rows[7]["checks"] = [{"icontains": {"value": "refund"}}]
    rows[12]["prediction"] = "word " * 5000  # rouge_l and token_f1 score it off the loop
    for i in range(600, 640):  # a run of rows with checks, run side by side
        rows[i]["checks"] = [{"word_count": {"max_words": 3}}]
    seen = _counted(monkeypatch)
    inline = run(name="c", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "inline.db")
    assert sorted(seen) == sorted(["r3", "r7", "r12", *(f"r{i}" for i in range(600, 640))])
    monkeypatch.setattr(_execute, "_inline", lambda *args: None)
    each = run(name="c", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "each.db")
    assert _stored(tmp_path / "inline.db") == _stored(tmp_path / "each.db")
    assert inline.summary.pass_rate == each.summary.pass_rate


def test_a_run_without_a_store_keeps_every_sample_in_order() -> None:
    rows = _rows(600)
    result = run(name="m", dataset=rows, scorers=_BUILT_INS, store=False)
    assert [s.id for s in result.samples] == [f"r{i}" for i in range(600)]
    assert result.samples[9].input_tokens == 10 and result.samples[9].latency_s == 0.25
    assert result.samples[6].error is not None and not result.samples[6].scores


def test_a_scorer_without_a_batch_sends_every_sample_the_per_sample_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aieval.scorers import Scorer

    plain = Scorer(exact_match.fn, name="plain_match")  # no batch implementation
    seen = _counted(monkeypatch)
    result = run(name="p", dataset=_rows(40), scorers=[plain, token_f1], store=False)
    # but those without a prediction, whose error needs no score
    assert len(seen) == 38 and len(result.samples) == 40


def test_a_target_failure_is_recorded_as_on_the_per_sample_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aieval.runner._target import RecordedTarget

    output = RecordedTarget.output

    def failing(self: RecordedTarget, example: Any) -> Any:
        if example.id == "r5":
            raise ValueError("the recorded row changed under the run")
        return output(self, example)

    monkeypatch.setattr(RecordedTarget, "output", failing)
    rows = _rows(700)
    run(name="f", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "inline.db")
    monkeypatch.setattr(_execute, "_inline", lambda *args: None)
    run(name="f", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "each.db")
    stored = _stored(tmp_path / "inline.db")
    assert stored == _stored(tmp_path / "each.db")
    by_id = {row[0]: row for row in stored["samples"]}
    assert by_id["r5"][6] == "ValueError: the recorded row changed under the run"
