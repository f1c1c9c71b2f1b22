"""The MCP example runs offline, as docs/tools.md shows it, from any checkout path: lint, three
answers per task for two scripted models, injected errors, and the verdicts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import aieval
from aieval.store import Store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp"


@pytest.mark.slow
def test_the_mcp_example_blocks_the_broken_version_and_not_the_same_one(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(aieval.__file__).resolve().parents[1])}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.stdout.splitlines() == [
        "lint: 3 tools, 0 errors, 4 warnings",
        "steady:scripted: pass@3 1.00, pass^3 1.00",
        "careless:scripted: pass@3 1.00, pass^3 0.00",
        "injected errors: 2, recovered 2 of 2",
        "verdict, next version: block",
        "verdict, same version: inconclusive",
    ]
    with Store(tmp_path / "runs.db") as store:
        names = sorted({run.name for run in store.list_runs()})
    assert names[0] == "again [careless:scripted]" and len(names) == 7
