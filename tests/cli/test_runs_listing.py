"""``aieval runs`` on both backends: a run with no summary shows how many samples it stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aieval._records import SampleRecord
from aieval.store import Store

AIEVAL = [sys.executable, "-m", "aieval"]

#: A process that starts a run, stores three samples and dies before it can say so.
_KILLED = """
import os, sys
from aieval._records import SampleRecord
from aieval.store import Store
store = Store(sys.argv[1])
run_id = store.create_run(name="killed")
store.record_samples(run_id, [SampleRecord(id=f"k{i}", index=i, input={}, expected="x",
                                           prediction="x") for i in range(3)])
print(run_id, flush=True)
os._exit(9)
"""


def _listed(store_location: str, cwd: Path) -> dict[str, list[str]]:
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [*AIEVAL, "runs", "--db", store_location],
        cwd=cwd, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in done.stdout.splitlines()]
    return {cells[0]: cells for cells in rows if cells}


@pytest.mark.slow
def test_runs_counts_stored_samples_of_runs_without_summary(
    store_location: str, tmp_path: Path
) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED, store_location],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert killed.returncode == 9, killed.stderr
    killed_id = killed.stdout.strip()
    with Store(store_location) as store:
        failed_id = store.create_run(name="failed")
        store.record_samples(
            failed_id,
            [SampleRecord(id=f"f{i}", index=i, input={}, prediction="x") for i in range(2)],
        )
        store.finish_run(failed_id, status="failed", error="the store went away")
        done_id = store.create_run(name="done")
        store.finish_run(done_id, status="completed", metrics={"samples": 7})
        assert store.get_run(killed_id).status == "interrupted"
        assert store.get_run(killed_id).metrics is None
        assert store.get_run(failed_id).metrics is None
        counts = store.sample_counts([killed_id, failed_id, done_id])
        assert counts == {killed_id: 3, failed_id: 2, done_id: 0}
    listed = _listed(store_location, tmp_path)
    # columns: id, name, model, status, samples, pass rate, when
    assert listed[killed_id][3:5] == ["interrupted", "3"]
    assert listed[failed_id][3:5] == ["failed", "2"]
    assert listed[done_id][3:5] == ["completed", "7"]  # the summary's count, as before
