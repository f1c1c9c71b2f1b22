"""Runs to push, and what two stores must agree on after a push."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aieval import Example, run
from aieval._records import CallRecord, SampleRecord, ScoreRecord
from aieval.report import build_report, compare_runs
from aieval.scorers import exact_match, token_f1
from aieval.store import Store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"
#: Texts SQLite and JSON must keep exactly: NUL, a lone surrogate, bidi and control characters.
ODD = ["nul\x00byte", "lone \udc80 surrogate", "rtl \u202e mark", "tab\tand\nnewline", "ok"]


def rows(n: int, *, wrong_every: int = 3) -> list[dict[str, Any]]:
    """``n`` rows whose prediction matches the expected answer except every ``wrong_every``."""
    return [
        {
            "id": f"q{i}",
            "prompt": f"question {i} {ODD[i % len(ODD)]}",
            "expected": f"answer {i} {ODD[i % len(ODD)]}",
            "prediction": f"answer {i} {ODD[i % len(ODD)]}" if i % wrong_every else f"no {i}",
        }
        for i in range(n)
    ]


def make_run(store: Path | str, name: str, n: int, *, wrong_every: int = 3) -> str:
    """A completed run of ``n`` samples scored by exact match and token F1; its id."""
    result = run(
        name=name,
        dataset=rows(n, wrong_every=wrong_every),
        scorers=[exact_match, token_f1],
        store=store,
        max_error_rate=1.0,
    )
    return result.id


def make_interrupted_run(store: Path | str, name: str, n: int, stop_after: int) -> str:
    """A run interrupted (Ctrl-C in its target) after ``stop_after`` samples; its id."""
    seen: list[str] = []

    def target(example: Example) -> str:
        if len(seen) >= stop_after:
            raise KeyboardInterrupt
        seen.append(example.id)
        return str(example.expected)

    with pytest.raises(KeyboardInterrupt):
        run(name=name, dataset=rows(n), scorers=[exact_match], target=target, store=store,
            concurrency=1)  # fmt: skip
    with Store(store) as opened:
        (interrupted,) = opened.list_runs(name=name)
    assert interrupted.status == "interrupted"
    return interrupted.id


def resume_run(store: Path | str, name: str, n: int, *, prefix: str = "") -> None:
    """Finish the interrupted run ``name`` of :func:`make_interrupted_run`, predicting the
    expected answer (after ``prefix``: a wrong one when given)."""

    def target(example: Example) -> str:
        return prefix + str(example.expected)

    run(name=name, dataset=rows(n), scorers=[exact_match], target=target, store=store,
        resume=True)  # fmt: skip


def record_odd_run(store: Store, name: str) -> str:
    """A run written through the store API with model calls, judge metadata and odd texts."""
    run_id = store.create_run(name=name, model="m\x00odel", config={"note": "c\udcff\x00"})
    samples = [
        SampleRecord(
            id=f"odd-{i}-{text}",
            index=i,
            input={"prompt": text, "nested": [text, None, 1.5e-300]},
            expected=text,
            prediction=text,
            metadata={"k": text},
            scores={
                "judge": ScoreRecord(
                    value=0.1 + i / 7, raw={"verdict": text}, reason=text, metadata={"m": text}
                ),
                "unscored": ScoreRecord(value=None, error=f"failed: {text}"),
            },
            error=None if i % 2 else f"target error {text}",
            passed=bool(i % 2),
            latency_s=0.1 * i,
            input_tokens=i,
            output_tokens=2 * i,
            cost=1e-6 * i,
            retries=i % 3,
            cached=bool(i % 2),
            calls=[
                CallRecord(
                    purpose="target",
                    provider="p",
                    model="m",
                    latency_s=0.5,
                    input_tokens=3,
                    output_tokens=4,
                    cost=0.25,
                    retries=1,
                    cached=False,
                    error=None,
                ),
                CallRecord(
                    purpose="judge:judge",
                    provider="p",
                    model=text,
                    latency_s=0.25,
                    input_tokens=5,
                    output_tokens=6,
                    cost=None,
                    retries=0,
                    cached=True,
                    error=text,
                ),
            ],
            extra={"x": text},
        )
        for i, text in enumerate(ODD)
    ]
    store.record_samples(run_id, samples)
    store.finish_run(run_id, status="completed", metrics={"samples": len(samples), "t": ODD[1]})
    return run_id


def table(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Every row ``sql`` selects from the SQLite file ``db``, sorted."""
    with closing(sqlite3.connect(db)) as conn:
        conn.text_factory = bytes  # compare bytes: a lone surrogate is stored as a BLOB
        return sorted(conn.execute(sql).fetchall(), key=repr)


def same_rows(a: Path | str, b: Path | str) -> None:
    """Both stores hold the same runs, samples, scores and model calls (in the same order), and,
    when both are SQLite files, byte for byte."""
    with Store(a) as source, Store(b) as target:
        runs = source.list_runs(limit=10_000)
        assert target.list_runs(limit=10_000) == runs
        for run in runs:
            assert list(target.stored_samples(run.id)) == list(source.stored_samples(run.id))
    if "://" in str(a) or "://" in str(b):
        return
    for sql in (
        "SELECT * FROM runs",
        "SELECT * FROM samples",
        "SELECT * FROM scores",
        "SELECT run_id, sample_id, purpose, provider, model, latency_s, input_tokens,"
        " output_tokens, cost, retries, cached, error FROM model_calls",
    ):
        assert table(a, sql) == table(b, sql), sql


def same_reports(source: Store, target: Store, run_id: str) -> None:
    """The run's report is the same on both stores, to the last digit."""
    assert build_report(target, run_id).to_dict() == build_report(source, run_id).to_dict()
    assert list(target.iter_samples(run_id)) == list(source.iter_samples(run_id))


def same_comparison(source: Store, target: Store, baseline: str, candidate: str) -> None:
    """The comparison and promotion decision are the same on both stores."""
    before = compare_runs(source, baseline, candidate).to_dict()
    after = compare_runs(target, baseline, candidate).to_dict()
    assert after == before
    assert after["decision"] == before["decision"]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``aieval ARGS`` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "aieval", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def sample_count(location: Path | str, run_id: str | None = None) -> int:
    """Samples the store holds (of ``run_id``, or of every run)."""
    with Store(location) as store:
        runs = [run_id] if run_id else [r.id for r in store.list_runs(limit=10_000)]
        return sum(store.count_samples(r) for r in runs)
