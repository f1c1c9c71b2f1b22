"""A run killed with SIGKILL mid-way, then resumed, has every sample exactly once."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.support.stored import stored_samples, wait_for_samples

from aieval import Example, Store, run
from aieval.errors import ConfigError
from aieval.scorers import exact_match, token_f1

N = 120

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from aieval import run
    from aieval.scorers import exact_match

    async def slow(example):
        if int(example.id[1:]) >= len(rows) // 2:  # never done: the kill lands mid-run
            await asyncio.Event().wait()
        await asyncio.sleep(0.02)
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(N)]
    run(name="killme", dataset=rows, scorers=[exact_match], target=slow, concurrency=4,
        store=sys.argv[1])
    """
).replace("range(N)", f"range({N})")


def test_kill_then_resume_has_every_sample_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), str(db)])
    wait_for_samples(db, 20, child)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    before = stored_samples(db)
    assert 20 <= before <= N // 2, "the child must be killed mid-run"

    store = Store(db)
    (killed,) = store.list_runs(name="killme")
    # nobody could mark it, but its process is gone: it reads as interrupted
    assert killed.status == "interrupted"
    assert killed.pid == child.pid
    done_before = store.completed_sample_ids(killed.id)

    produced: list[str] = []

    async def fast(example: Example) -> str:
        produced.append(example.id)
        return example.prompt

    rows = [{"id": f"s{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(N)]
    result = run(
        name="killme", dataset=rows, scorers=[exact_match], target=fast, store=store, resume=True
    )
    assert result.id == killed.id
    assert sorted(produced) == sorted({f"s{i}" for i in range(N)} - done_before)
    ids = [
        row[0]
        for row in sqlite3.connect(db).execute(
            "SELECT sample_id FROM samples WHERE run_id = ?", (killed.id,)
        )
    ]
    assert len(ids) == N and len(set(ids)) == N
    assert result.summary.samples == N
    assert result.metrics["exact_match"] == 1.0
    assert store.get_run(killed.id).status == "completed"


def test_resume_refuses_a_changed_dataset_and_completed_runs(tmp_path: Path) -> None:
    rows = [{"id": "a", "prompt": "x", "prediction": "x", "expected": "x"}]
    first = run(name="r", dataset=rows, scorers=[exact_match], store=tmp_path / "s.db")
    with pytest.raises(ConfigError, match="already completed"):
        run(name="r", dataset=rows, scorers=[exact_match], store=tmp_path / "s.db", resume=first.id)
    changed = [{**rows[0], "expected": "y"}]
    with pytest.raises(ConfigError, match="dataset version"):
        store = Store(tmp_path / "s.db")
        run_id = store.create_run(name="r", dataset_hash="different")
        run(name="r", dataset=changed, scorers=[exact_match], store=store, resume=run_id)


def test_resume_true_without_unfinished_run_is_refused_not_started_over(tmp_path: Path) -> None:
    rows = [{"id": "a", "prompt": "x", "prediction": "x"}]
    with pytest.raises(ConfigError, match="nothing to resume: no unfinished run named 'fresh'"):
        run(name="fresh", dataset=rows, scorers=[exact_match], store=tmp_path / "s.db",
            resume=True)  # fmt: skip
    with Store(tmp_path / "s.db") as store:
        assert store.list_runs(name="fresh") == []


def _interrupted(tmp_path: Path, **options: Any) -> tuple[Store, str, list[dict[str, Any]]]:
    """A run of 6 rows with 3 stored, marked interrupted."""
    rows = [{"id": f"r{i}", "prompt": "x", "expected": "x",
             "predictions": {"v1": "x", "v2": "y"}} for i in range(6)]  # fmt: skip
    store = Store(tmp_path / "s.db")
    first = run(name="mix", dataset=rows[:3], scorers=[exact_match], model="v1", store=store,
                **options)  # fmt: skip
    with sqlite3.connect(store.path) as con:
        con.execute("UPDATE runs SET status='interrupted' WHERE id=?", (first.id,))
    return store, first.id, rows


@pytest.mark.parametrize(
    ("change", "words"),
    [
        pytest.param({"model": "v2"}, "model: 'v1' then, 'v2' now", id="model"),
        pytest.param({"scorers": [token_f1]}, "scorers: [exact_match] then, [token_f1] now",
                     id="scorers"),
        pytest.param({"pass_threshold": 0.9}, "pass_threshold: 0.5 then, 0.9 now",
                     id="threshold"),
        pytest.param({"scorers": [exact_match.with_options(normalize="squad")]},
                     "scorers.exact_match.normalize: unset then, 'squad' now",
                     id="scorer-options"),
    ],
)  # fmt: skip
def test_a_resume_configured_differently_is_refused(
    tmp_path: Path, change: dict[str, Any], words: str
) -> None:
    store, run_id, rows = _interrupted(tmp_path)
    options: dict[str, Any] = {"scorers": [exact_match], "model": "v1", **change}
    with pytest.raises(ConfigError, match="it was configured differently") as info:
        run(name="mix", dataset=rows[:3], store=store, resume=run_id, **options)
    assert words in str(info.value)
    assert store.count_samples(run_id) == 3


def test_a_changed_scorer_option_is_named_down_to_the_field() -> None:
    from aieval.runner._resume import config_changes

    def config(timeout: float, *, name: str = "code_passes") -> dict[str, Any]:
        limits = {"timeout": timeout, "memory_mb": 512, "isolation": "bwrap"}
        return {"scorers": [{"name": name, "options": {"allow_code_execution": "True",
                                                       "limits": repr(limits)}}]}  # fmt: skip

    assert config_changes(config(5.0), config(10.0)) == [
        "scorers.code_passes.limits.timeout: 5.0 then, 10.0 now"
    ]
    assert config_changes(config(5.0), config(5.0)) == []
    # a renamed scorer is still named as the list of names
    assert config_changes(config(5.0), config(5.0, name="other")) == [
        "scorers: [code_passes] then, [other] now"
    ]
    # an option whose repr is not a literal is compared as text
    before = {"scorers": [{"name": "s", "options": {"fn": "<function a at 0x1>"}}]}
    now = {"scorers": [{"name": "s", "options": {"fn": "<function b at 0x2>"}}]}
    assert config_changes(before, now) == [
        "scorers.s.fn: '<function a at 0x1>' then, '<function b at 0x2>' now"
    ]
    # a dataclass repr reads as its fields
    dc = {"scorers": [{"name": "s", "options": {"limits": "SandboxLimits(timeout=5.0, cpu=None)"}}]}
    dc2 = {"scorers": [{"name": "s", "options": {"limits": "SandboxLimits(timeout=7, cpu=None)"}}]}
    assert config_changes(dc, dc2) == ["scorers.s.limits.timeout: 5.0 then, 7 now"]
    other = {"scorers": [{"name": "s", "options": {"limits": "Other(timeout=7, cpu=None)"}}]}
    assert config_changes(dc, other) == [
        "scorers.s.limits.(type): 'SandboxLimits' then, 'Other' now",
        "scorers.s.limits.timeout: 5.0 then, 7 now",
    ]
