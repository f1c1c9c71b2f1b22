"""A count out of the store's range (signed 64-bit) is one sample's error, never a failed run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval._records import SampleRecord
from aieval.errors import DatasetError
from aieval.report import build_report
from aieval.runner._writer import SampleWriter
from aieval.store import Store

_HUGE = 2**64


def _prompt(body: Any) -> str:
    return str(body["messages"][-1]["content"])


def test_a_reply_with_tokens_beyond_the_store_range_fails_its_sample_only(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply(
        "a", usage=(_HUGE if _prompt(body) == "q7" else 5, 1)
    )
    db = tmp_path / "runs.db"
    rows = [{"id": f"r{i}", "prompt": f"q{i}", "expected": "a"} for i in range(30)]
    result = run(
        name="huge", dataset=rows, scorers=["exact_match"], provider="openai-compatible",
        model="m", base_url=openai_server.base_url, store=db,
    )  # fmt: skip
    assert result.status == "completed"
    samples = {s.id: s for s in Store(db).iter_samples(result.id)}
    assert len(samples) == 30
    bad = samples.pop("r7")
    assert bad.error is not None and "input_tokens" in bad.error and str(_HUGE) in bad.error
    assert bad.input_tokens is None and bad.calls[0].input_tokens is None
    assert all(s.error is None and s.passed and s.input_tokens == 5 for s in samples.values())
    assert result.summary.passed == 29 and result.summary.target_errors == 1


def test_a_recorded_count_beyond_the_store_range_is_refused_at_load(tmp_path: Path) -> None:
    rows = [
        {"id": f"r{i}", "prompt": "q", "prediction": "x",
         "recorded_calls": [{"model": "m", "input_tokens": _HUGE if i == 7 else 5}]}
        for i in range(30)
    ]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "runs.db"
    with pytest.raises(DatasetError) as caught:
        run(name="huge", dataset=path, scorers=["exact_match"], store=db)
    message = str(caught.value)
    assert "rows.jsonl" in message and "line 8" in message
    assert "recorded_calls[0].input_tokens" in message and "store's range" in message


async def test_a_batch_with_an_unstorable_sample_stores_the_others_and_that_one_as_an_error(
    store_location: str,
) -> None:
    store = Store(store_location)
    run_id = store.create_run(name="w", model=None, provider=None, dataset="d", dataset_hash="h")
    stored: list[SampleRecord] = []
    writer = SampleWriter(store, run_id, stored.append)
    records = [SampleRecord(id=f"s{i}", index=i, input="q", prediction="a") for i in range(3)]
    records[1].input_tokens = _HUGE  # past the runner's own check, straight to the store
    for record in records:
        writer.add(record)
    await writer.drain()
    writer.raise_if_failed()
    kept = {s.id: s for s in store.iter_samples(run_id)}
    assert sorted(kept) == ["s0", "s1", "s2"] == sorted(s.id for s in stored)
    assert kept["s0"].error is None and kept["s2"].prediction == "a"
    assert kept["s1"].error is not None and "could not be stored" in kept["s1"].error
    assert kept["s1"].passed is False and kept["s1"].input_tokens is None
    store.close()


def test_counts_that_fit_but_whose_sum_does_not_are_reported_exactly(
    tmp_path: Path, store_location: str
) -> None:
    rows = [
        {"id": f"r{i}", "prompt": "q", "prediction": "x",
         "recorded_calls": [{"model": "m", "input_tokens": 2**62, "output_tokens": 1}]}
        for i in range(3)
    ]  # fmt: skip
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run(name="sum", dataset=path, scorers=["exact_match"], store=store_location)
    with Store(store_location) as store:
        tokens = build_report(store, result.id).to_dict()["tokens"]
    assert tokens["target"] == {"input": 3 * 2**62, "output": 3, "total": 3 * 2**62 + 3}
