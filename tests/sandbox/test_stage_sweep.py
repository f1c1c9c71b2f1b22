"""Staging folders left by killed processes are removed by the next process that stages."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import aieval.sandbox._setup as setup


def test_folders_of_gone_processes_are_swept_and_live_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(setup, "_swept", False)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead_folder = tmp_path / f"aieval-stage-{gone.stdout.strip()}-abc"
        live_folder = tmp_path / f"aieval-stage-{live.pid}-def"
        old_unnamed = tmp_path / "aieval-stage-xyz"
        new_unnamed = tmp_path / "aieval-stage-uvw"
        other = tmp_path / "unrelated"
        for folder in (dead_folder, live_folder, old_unnamed, new_unnamed, other):
            (folder / "0").mkdir(parents=True)
        os.utime(old_unnamed, (1.0, 1.0))
        setup._sweep_stale_stages()
        assert not dead_folder.exists() and not old_unnamed.exists()
        assert live_folder.exists() and new_unnamed.exists() and other.exists()
    finally:
        live.kill()
        live.wait()


def test_a_stage_folder_is_named_after_its_process() -> None:
    folder = setup.stage_dir()
    try:
        assert Path(folder).name.startswith(f"aieval-stage-{os.getpid()}-")
    finally:
        os.rmdir(folder)
