"""A run of recorded predictions on SQLite commits its samples in batches of up to
``RECORDED_HOLD``: the stored rows and the summary are those of a commit per event-loop step and
of the general threshold rule, and a run killed mid-way keeps whole batches only, which a resumed
run completes."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.support.stored import stored_samples, wait_for_samples

from aieval import Store, run
from aieval.core import _threshold
from aieval.runner import _execute, _writer
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
    rows[3]["expected"] = {"not": "text"}  # that sample's scorer errors
    del rows[6]["prediction"]  # no recorded prediction: the sample's error, no score
    rows[7]["input"] = {"messages": [{"role": "user", "content": "é ✓"}]}
    rows[8]["prediction"] = ""  # n/a for some scorers, 0 for others
    return rows


def _stored(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the store's one run, without its run id and timestamps."""
    tables = {
        "samples": "SELECT * FROM samples ORDER BY idx",
        "scores": "SELECT * FROM scores ORDER BY sample_id, scorer",
        "sample_values": "SELECT * FROM sample_values ORDER BY 2, 3, 4",
    }
    out: dict[str, list[tuple[Any, ...]]] = {}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        for table, query in tables.items():
            cursor = conn.execute(query)
            names = [c[0] for c in cursor.description]
            keep = [i for i, n in enumerate(names) if n not in ("run_id", "created_at", "id")]
            out[table] = [tuple(row[i] for i in keep) for row in cursor.fetchall()]
    return out


def test_stored_rows_and_summary_equal_a_commit_per_step_and_the_general_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    rows = _rows(1300)
    held = run(name="h", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "held.db")
    monkeypatch.setattr(_execute, "RECORDED_HOLD", 1)
    monkeypatch.setattr(_threshold, "_plain_verdict", lambda *args: None)
    plain = run(name="h", dataset=rows, scorers=_BUILT_INS, store=tmp_path / "plain.db")
    stored = _stored(tmp_path / "held.db")
    assert stored == _stored(tmp_path / "plain.db")
    assert held.metrics == plain.metrics
    assert len(stored["samples"]) == 1300 and len(stored["scores"]) == 1299 * 4


def test_a_small_run_of_recorded_rows_commits_each_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []
    record = Store.record_samples

    def counted(self: Store, run_id: str, samples: list[Any]) -> None:
        batches.append(len(samples))
        record(self, run_id, samples)

    monkeypatch.setattr(Store, "record_samples", counted)
    run(name="s", dataset=_rows(300), scorers=[exact_match], store=tmp_path / "s.db")
    assert sum(batches) == 300 and max(batches) <= 64


def test_recorded_rows_share_commits_of_up_to_the_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []
    record = Store.record_samples

    def counted(self: Store, run_id: str, samples: list[Any]) -> None:
        batches.append(len(samples))
        record(self, run_id, samples)

    monkeypatch.setattr(Store, "record_samples", counted)
    record_plain = Store.record_plain

    def counted_plain(self: Store, run_id: str, batch: Any) -> None:
        batches.append(len(batch))  # a chunk of plain samples, committed as columns
        record_plain(self, run_id, batch)

    monkeypatch.setattr(Store, "record_plain", counted_plain)
    monkeypatch.setattr(_execute, "HOLD_FROM", 1000)
    monkeypatch.setattr(_writer, "HOLD_S", 600.0)  # only the count (and the run's end) commits
    result = run(name="h", dataset=_rows(1300), scorers=[exact_match], store=tmp_path / "h.db")
    assert result.status == "completed" and len(result.samples) == 1300
    hold = _writer.RECORDED_HOLD
    assert batches == [hold, hold, 1300 - 2 * hold]


def test_a_live_target_still_commits_each_event_loop_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []
    record = Store.record_samples

    def counted(self: Store, run_id: str, samples: list[Any]) -> None:
        batches.append(len(samples))
        record(self, run_id, samples)

    monkeypatch.setattr(Store, "record_samples", counted)

    async def echo(example: Any) -> str:
        return str(example.prompt)

    monkeypatch.setattr(_execute, "HOLD_FROM", 0)
    rows = [{"id": f"r{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(200)]
    run(name="live", dataset=rows, scorers=[exact_match], target=echo, store=tmp_path / "l.db")
    assert sum(batches) == 200 and max(batches) <= 64


# A run of recorded rows whose scorer holds every sample from r600 on until a release file
# exists: the samples before it are committed (512 by count, the rest by time), then held.
CHILD = textwrap.dedent(
    """
    import asyncio, os, sys
    from aieval import run
    from aieval.runner import _execute
    from aieval.scorers import exact_match, scorer

    _execute.HOLD_FROM = 1000  # held commits from 1,000 samples (5,000 by default)
    release = sys.argv[2]

    @scorer(name="held")
    async def held(prediction, expected):
        if int(prediction[1:]) >= 600:
            while not os.path.exists(release):
                await asyncio.sleep(0.02)
        return 1.0

    rows = [{"id": f"r{i}", "input": f"q{i}", "expected": f"p{i}", "prediction": f"p{i}"}
            for i in range(1000)]
    result = run(name="k", dataset=rows, scorers=[exact_match, held], store=sys.argv[1],
                 resume=len(sys.argv) > 3)
    print(result.status, len(result.samples))
    """
)


def test_a_killed_run_keeps_whole_batches_and_a_resume_completes_it(tmp_path: Path) -> None:
    db, release = tmp_path / "k.db", tmp_path / "release"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(db), str(release)])
    try:
        assert wait_for_samples(db, 600, child) == 600
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert stored_samples(db) == 600  # whole batches: r0..r599, nothing of the held ones
    release.touch()
    done = subprocess.run(
        [sys.executable, str(script), str(db), str(release), "resume"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    with contextlib.closing(sqlite3.connect(db)) as conn:
        ids = [r[0] for r in conn.execute("SELECT sample_id FROM samples")]
        (status,) = conn.execute("SELECT status FROM runs").fetchone()
    assert sorted(ids) == sorted(f"r{i}" for i in range(1000))  # each once
    assert status == "completed"
    assert json.dumps(sorted(set(ids))) == json.dumps(sorted(ids))
