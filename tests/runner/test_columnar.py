"""A chunk of plain recorded samples is graded and stored as columns: the stored run (every
table, the kept columns, the summary) and its report are those of the per-sample path, and any
chunk or run the columns do not cover takes that path, saying so in the debug log."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from tests.support.stored import stored_samples, wait_for_samples

from aieval import Store, run
from aieval.errors import StoreError
from aieval.report import build_report, render_json
from aieval.runner import _execute, _writer
from aieval.scorers import Scorer, exact_match, json_valid, rouge_l, token_f1

_BUILT_INS = [exact_match, token_f1, rouge_l, json_valid]
_TIMES = {"created_at", "finished_at", "started_at", "heartbeat_at", "duration_s", "id", "run_id"}


def _rows(count: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(count):
        expected = " ".join(["the", "refund", "window", "is", "thirty", "days"][: 1 + i % 6])
        prediction = [expected, expected.upper(), f"order {i} ships", f'{{"a": {i}}}'][i % 4]
        rows.append(
            {"id": f"r{i}", "input": f"q{i}", "expected": expected, "prediction": prediction}
        )
    rows[3]["expected"] = {"not": "text"}  # a scorer's error: its chunk takes the sample path
    rows[9]["recorded_latency_s"] = 0.25
    for i in range(520, 1300, 7):  # plain chunks with metadata and texts beyond ASCII
        rows[i]["metadata"] = {"team": "support", "i": i}
        rows[i + 1]["input"] = {"messages": [{"role": "user", "content": f"é ✓ {i}"}]}
    rows[700]["recorded_calls"] = [{"model": "m", "input_tokens": 10, "output_tokens": 2}]
    rows[701]["prediction"] = ""  # empty: scored 0 or n/a by the built-ins
    return rows


def _stored(db: Path) -> dict[str, Any]:
    """Every row of the store's one run, without its run id and timestamps."""
    tables = {
        "samples": "SELECT * FROM samples ORDER BY idx",
        "scores": "SELECT * FROM scores ORDER BY sample_id, scorer",
        "sample_values": "SELECT * FROM sample_values ORDER BY 2, 3, 4",
        "model_calls": "SELECT * FROM model_calls ORDER BY sample_id",
        "run_columns": "SELECT first_idx, first_id, n, head, body FROM run_columns ORDER BY 1",
    }
    out: dict[str, Any] = {}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        for table, query in tables.items():
            cursor = conn.execute(query)
            names = [c[0] for c in cursor.description]
            keep = [i for i, n in enumerate(names) if n not in ("run_id", "created_at", "id")]
            out[table] = [tuple(row[i] for i in keep) for row in cursor.fetchall()]
        (metrics,) = conn.execute("SELECT metrics FROM runs").fetchone()
    out["metrics"] = metrics
    return out


def _report(db: Path) -> str:
    """The run's JSON report, without its id and times."""
    with contextlib.closing(Store(db)) as store:
        (row,) = store.list_runs()
        data = json.loads(render_json(build_report(store, row.id)))

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _TIMES}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(data), sort_keys=True)


def _chunks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the batches stored as columns, from now on."""
    sizes: list[int] = []
    record = Store.record_plain

    def counted(self: Store, run_id: str, batch: Any) -> None:
        sizes.append(len(batch))
        record(self, run_id, batch)

    monkeypatch.setattr(Store, "record_plain", counted)
    return sizes


def _three_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], scorers: Any
) -> tuple[Path, Path, Path]:
    """The same run as columns (where it can), recorded samples one by one in their chunk,
    and through the executor sample by sample."""
    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    # commits by count only: batches by time would cut the kept columns' rows elsewhere
    monkeypatch.setattr(_writer, "HOLD_S", 600.0)
    dbs = tmp_path / "columns.db", tmp_path / "inline.db", tmp_path / "each.db"
    run(name="c", dataset=rows, scorers=scorers, store=dbs[0])
    with monkeypatch.context() as patch:
        patch.setattr(_execute, "_columnar", lambda *args: None)
        run(name="c", dataset=rows, scorers=scorers, store=dbs[1])
    with monkeypatch.context() as patch:
        patch.setattr(_execute, "_inline", lambda *args: None)
        run(name="c", dataset=rows, scorers=scorers, store=dbs[2])
    return dbs


def test_the_stored_run_and_its_report_equal_the_per_sample_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = _chunks(monkeypatch)
    columns, inline, each = _three_ways(tmp_path, monkeypatch, _rows(1300), _BUILT_INS)
    # the first chunk (a scorer's error, a latency) and the second (usage) are not plain
    assert sizes == [1300 - 1024]
    stored = _stored(columns)
    assert stored == _stored(inline) == _stored(each)
    assert len(stored["samples"]) == 1300 and len(stored["model_calls"]) == 1
    assert len(stored["run_columns"]) == 3  # the kept columns of every batch, as before
    assert _report(columns) == _report(inline) == _report(each)


def test_every_plain_chunk_is_stored_as_columns_with_its_failures_and_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        {"id": f"r{i}", "input": f"q{i}", "expected": "yes", "prediction": ["yes", "no"][i % 2]}
        for i in range(1100)
    ]
    sizes = _chunks(monkeypatch)
    scorers = [exact_match, token_f1]
    columns, inline, each = _three_ways(tmp_path, monkeypatch, rows, scorers)
    assert sizes == [512, 512, 76]
    assert _stored(columns) == _stored(inline) == _stored(each)
    assert _report(columns) == _report(each)
    summary = json.loads(_stored(columns)["metrics"])
    assert summary["samples"] == 1100 and summary["passed"] == 550


def _halving(predictions: list[Any], expected: list[Any]) -> list[Any]:
    return [math.nan if p == "nan" else 0.5 for p in predictions]


def test_a_batch_score_out_of_range_sends_its_chunk_the_per_sample_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    halving = Scorer(lambda p, e: _halving([p], [e])[0], name="halving", batch_fn=_halving)
    rows = [
        {"id": f"r{i}", "input": f"q{i}", "expected": "yes", "prediction": "yes"}
        for i in range(1100)
    ]
    rows[600]["prediction"] = "nan"  # NaN from the batch: that sample's own score, its error
    sizes = _chunks(monkeypatch)
    with caplog.at_level(logging.DEBUG, logger="aieval"):
        columns, _, each = _three_ways(tmp_path, monkeypatch, rows, [exact_match, halving])
    assert sizes == [512, 76]
    assert "halving gave a score that is not a bare value in 0..1" in caplog.text
    stored = _stored(columns)
    assert stored == _stored(each)
    (nan_row,) = [row for row in stored["samples"] if row[0] == "r600"]
    assert nan_row[6] is None and nan_row[7] == 0  # stored, failed, as the sample path does
    (score,) = [row for row in stored["scores"] if row[:2] == ("r600", "halving")]
    assert score[2] is None and score[5]  # no value, the score's own error


def test_a_run_whose_scorer_has_its_own_threshold_takes_the_per_sample_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    sizes = _chunks(monkeypatch)
    strict = Scorer(exact_match.fn, name="strict", batch_fn=exact_match.batch_fn, threshold=0.9)
    rows = [
        {"id": f"r{i}", "input": "q", "expected": "yes", "prediction": "yes"} for i in range(600)
    ]
    with caplog.at_level(logging.DEBUG, logger="aieval"):
        result = run(name="t", dataset=rows, scorers=[strict, token_f1], store=tmp_path / "t.db")
    assert sizes == [] and result.summary.passed == 600
    assert "a scorer has its own threshold or weight" in caplog.text


# A run of 1,100 recorded rows stored as columns whose second chunk's batch holds until a
# release file exists: the first chunk (r0..r511) is committed whole, then nothing more.
CHILD = textwrap.dedent(
    """
    import os, sys, time
    from aieval import run
    from aieval.runner import _execute, _writer
    from aieval.scorers import Scorer, exact_match

    _execute.HOLD_FROM = 1000  # held commits (and columns) from 1,000 samples
    release = sys.argv[2]

    def held_batch(predictions, expected):
        if "p600" in predictions:
            while not os.path.exists(release):
                time.sleep(0.02)
        return [1.0 for _ in predictions]

    held = Scorer(lambda prediction, expected: 1.0, name="held", batch_fn=held_batch)
    rows = [{"id": f"r{i}", "input": f"q{i}", "expected": f"p{i}", "prediction": f"p{i}"}
            for i in range(1100)]
    result = run(name="k", dataset=rows, scorers=[exact_match, held], store=sys.argv[1],
                 resume=len(sys.argv) > 3)
    print(result.status, result.summary.samples)
    """
)


@pytest.mark.slow
def test_a_killed_run_keeps_whole_chunks_and_a_resume_completes_it(tmp_path: Path) -> None:
    db, release = tmp_path / "k.db", tmp_path / "release"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(db), str(release)])
    try:
        assert wait_for_samples(db, 512, child) == 512
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        (kept,) = conn.execute("SELECT COUNT(*) FROM run_columns").fetchone()
        (scores,) = conn.execute("SELECT COUNT(*) FROM scores").fetchone()
    assert (stored_samples(db), scores, kept) == (512, 1024, 1)  # the chunk, whole
    release.touch()
    done = subprocess.run(
        [sys.executable, str(script), str(db), str(release), "resume"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["completed", "1100"]
    with contextlib.closing(sqlite3.connect(db)) as conn:
        ids = [r[0] for r in conn.execute("SELECT sample_id FROM samples")]
        (passed,) = conn.execute("SELECT SUM(passed) FROM samples").fetchone()
    assert sorted(ids) == sorted(f"r{i}" for i in range(1100))  # each once
    assert passed == 1100


def test_progress_counts_each_sample_of_a_chunk_once_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    sizes = _chunks(monkeypatch)
    seen: list[tuple[int, int]] = []
    db = tmp_path / "p.db"

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done in (512, 1024):  # each chunk's samples count once committed
            assert stored_samples(db) == done

    rows = [
        {"id": f"r{i}", "input": "q", "expected": "yes", "prediction": "yes"} for i in range(1100)
    ]
    run(name="p", dataset=rows, scorers=[exact_match], store=db, progress=progress)
    assert sizes == [512, 512, 76]
    assert seen == [(done, 1100) for done in range(1, 1101)]


def test_plain_chunks_are_committed_on_the_writer_s_thread_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk's commit runs on the writer's thread while the run makes the next chunk (one
    in flight): stored in the order given, each sample counted once, after its commit."""
    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    record = Store.record_plain
    threads: list[str] = []
    firsts: list[str] = []

    def committed(self: Store, run_id: str, batch: Any) -> None:
        threads.append(threading.current_thread().name)
        firsts.append(batch.ids[0])
        record(self, run_id, batch)

    monkeypatch.setattr(Store, "record_plain", committed)
    db = tmp_path / "t.db"
    rows = [
        {"id": f"r{i}", "input": "q", "expected": "yes", "prediction": "yes"} for i in range(2000)
    ]
    result = run(name="t", dataset=rows, scorers=[exact_match], store=db)
    assert result.status == "completed" and result.summary["samples"] == 2000
    assert firsts == ["r0", "r512", "r1024", "r1536"]
    assert threads and all(name.startswith("aieval-store") for name in threads)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        order = [r[0] for r in conn.execute("SELECT idx FROM samples ORDER BY rowid")]
    assert order == list(range(2000))


def test_a_plain_chunk_the_store_refuses_fails_the_run_and_counts_only_what_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    record = Store.record_plain
    calls: list[int] = []

    def full(self: Store, run_id: str, batch: Any) -> None:
        calls.append(len(batch))
        if len(calls) == 3:
            raise StoreError("cannot write samples: database or disk is full")
        record(self, run_id, batch)

    monkeypatch.setattr(Store, "record_plain", full)
    store = Store(tmp_path / "f.db")
    rows = [
        {"id": f"r{i}", "input": "q", "expected": "yes", "prediction": "yes"} for i in range(3000)
    ]
    with pytest.raises(StoreError, match="disk is full"):
        run(name="f", dataset=rows, scorers=[exact_match], store=store)
    (row,) = store.list_runs()
    assert row.status == "failed" and "disk is full" in (row.error or "")
    assert store.count_samples(row.id) == 1024  # the two chunks before the refused one
    assert row.metrics is not None and row.metrics["samples"] == 1024
    assert len(calls) == 3  # nothing given to the store after its refusal
    store.close()
